"""One array task: load partition I, verify it, count every completion of its states, write the result.

The same function runs under SLURM (``permenum task``) and under the local executor; only who
launches it differs. The flow: verify the partition and resume from its checkpoint, schedule its
chunks over the devices (jobs.schedule), then record the result. After every chunk the partial sums
go to a verified checkpoint, so a task that is stopped (signal, time limit, kill -9) resumes where
its last checkpoint left off. The result file, not the scheduler, is the truth that the partition is
done; it is written once (permenum.records).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from permenum.atomic import quarantine
from permenum.checkpoints import Checkpoint, CheckpointError, load_checkpoint, save_checkpoint
from permenum.jobs.chunking import ChunkSizer, WorkIndex
from permenum.jobs.environment import TaskEnvironment
from permenum.jobs.partial import ChunkLedger, OpenChunk, Partial
from permenum.jobs.refine import RefiningSolver, deepen, next_slice
from permenum.jobs.schedule import DeviceState, RateBook, Scheduler, StopRule
from permenum.jobs.solutions import write_solutions
from permenum.jobs.stream import StreamedPartition
from permenum.jobs.tasklog import TaskLog
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.poolgen.write import read_partition
from permenum.problems import Problem, StateBatch, get_problem
from permenum.problems.base import ChildBatch, exact_sum
from permenum.records import (AttemptDevices, DeviceUse, Manifest, check_verification_options, PartitionEntry, ResultRecord, Seconds, attempts_so_far,
                              load_manifest, write_failure, write_result)
from permenum.solver.devices import DeviceRef, select_devices
from permenum.solver.opencl import BatchCounts, Staged, device_context, device_lanes, first_chunk, min_chunk
from permenum.solver.registry import make_solver, variant_for
from permenum.task_options import TaskOptions

#: `permenum task` exits with this (EX_TEMPFAIL) when it stopped early after checkpointing.
EXIT_INTERRUPTED = 75


@dataclass(frozen=True)
class TaskResult:
    record: ResultRecord
    status: str  # "accepted", or "duplicate" when an equal result was there already


class TaskInterrupted(Exception):
    """The task stopped at a chunk boundary on request, with its progress checkpointed."""

    def __init__(self, partition: int, states_done: int, total: int):
        super().__init__(f"partition {partition} interrupted at state {states_done}/{total} (checkpointed)")
        self.partition, self.states_done, self.total = partition, states_done, total


def run_task(layout: RunLayout, partition: int, options: TaskOptions | None = None,
             stop: threading.Event | None = None, on_chunk: Callable[[int], None] | None = None,
             rates: RateBook | None = None, on_drained: Callable[[], None] = lambda: None) -> TaskResult:
    """Run one partition and write its result record.

    ``stop`` is checked after every chunk: when set, or once this attempt has run
    ``options.max_seconds``, the task checkpoints and raises TaskInterrupted. ``on_chunk`` hears the
    number of states of every chunk counted (the local executor's progress); ``rates`` carries the
    devices' rates from task to task, ``on_drained`` hears that every device holds its last chunk (the
    local executor's next task may start preparing). A failure is recorded
    in ``logs/part-NNNNN.error.json`` before it propagates, so `status` can tell a failed partition
    from one that never ran.
    """
    options = options or TaskOptions()
    options.validate()
    check_verification_options(layout, options.kernel, options.device)
    try:
        return _Attempt(layout, partition, options, stop or threading.Event(), on_chunk, rates, on_drained).run()
    except TaskInterrupted:
        raise
    except Exception as exc:
        if _is_partition(layout, partition):  # no error file for a partition the pool does not have
            write_failure(layout, partition, exc, TaskEnvironment.read().origin)
        raise


def _is_partition(layout: RunLayout, partition: int) -> bool:
    try:
        return 0 <= partition < load_manifest(layout).num_partitions
    except UserError:
        return False


@dataclass
class _Loaded:
    """The verified partition and where this attempt starts in it."""

    states: StreamedPartition
    work: WorkIndex
    ledger: ChunkLedger
    attempt: int
    resumed_from: int  # the done prefix when this attempt began
    elapsed_before: float  # seconds of earlier attempts
    rejected: str | None  # why a checkpoint was refused, if one was
    seconds: float  # from the start of the attempt to the verified bytes
    earlier: tuple[AttemptDevices, ...] = ()  # the attempts the checkpoint's counts come from


@dataclass(frozen=True)
class _Refined:
    """A claimed chunk made ready on the claim-ahead thread: its coarse states, refined (``fine``; the
    chunk itself where it is not refined), where counting resumes in them, and the first launch staged."""

    chunk: StateBatch
    fine: StateBatch | ChildBatch
    resumed: int
    first: Staged


@dataclass(frozen=True)
class _Claim:
    """A device's chunk: its span of coarse states, the part of it an earlier attempt counted, the kernel
    seconds the scheduler expected of it when it was claimed, and its states made ready (on the
    claim-ahead thread, which asks again where that was not known)."""

    span: tuple[int, int]
    begun: OpenChunk | None
    expected: float | None
    ready: Future[_Refined]


def _check_begun(begun: OpenChunk | None, fine_total: int, start: int, end: int) -> int:
    """Where a chunk begun in an earlier attempt resumes: refined again to its depth, it must hold as
    many states as then (else its counted part cannot be matched to states, and the task fails)."""
    if begun is None:
        return 0
    if begun.fine_total != fine_total:
        raise UserError(f"states {start}-{end} refined again to depth {begun.depth} give {fine_total} states, the "
                        f"checkpoint counted {begun.fine_done} of {begun.fine_total}: it is not this pool's")
    return begun.fine_done


class _Attempt:
    """One attempt at one partition: the partition is verified and loaded while every device's thread
    builds its kernel; then the threads count the chunks the scheduler hands them."""

    def __init__(self, layout: RunLayout, partition: int, options: TaskOptions, stop: threading.Event,
                 on_chunk: Callable[[int], None] | None = None, rates: RateBook | None = None,
                 on_drained: Callable[[], None] = lambda: None):
        self.t_start = time.perf_counter()
        self.on_chunk = on_chunk
        self.layout, self.partition, self.options = layout, partition, options
        self.manifest: Manifest = load_manifest(layout)
        self.entry: PartitionEntry = self.manifest.partition(partition)
        self.problem: Problem = get_problem(self.manifest.problem)
        self.refs: list[DeviceRef] = select_devices(options.device)
        self.targets = [self._refine_target(r) for r in self.refs]
        self.scheduler = Scheduler([self._device_state(r, t) for r, t in zip(self.refs, self.targets)],
                                   StopRule(stop, options.max_seconds, self.t_start), rates=rates,
                                   on_drained=on_drained)
        self.solvers: list[RefiningSolver | None] = [None] * len(self.refs)  # each built by its device's own thread
        self.setup_seconds = [0.0] * len(self.refs)  # the context (kernels are built on the refining thread)
        self.busy_seconds = [0.0] * len(self.refs)  # inside the solver: host preparation, transfers, kernels
        self.log = TaskLog(layout.task_log(partition), partition)
        self.loaded: _Loaded | None = None  # set before the scheduler opens

    def _refine_target(self, ref: DeviceRef) -> int | None:
        """States per launch that fill ``ref`` where the partition is coarser than that (jobs.refine); None:
        count the pool's states as they are (a fine pool, or --count-nodes: nodes are counted from the
        pool's depth, the unit of its cost estimates)."""
        target = self.problem.states_per_lane * device_lanes(ref)
        return None if self.options.count_nodes or self.entry.rows >= target else target

    def _device_state(self, ref: DeviceRef, target: int | None) -> DeviceState:
        """A device's chunk sizes: a refined device's first chunk is 1/16 of the partition (refinement fills
        the launch; at 1/64 N-Queens 21's first two chunks on the H100 were 0.15 s of kernel each for
        1.3-1.7 s of host work), with no floor; otherwise the device's own first launch and floor."""
        first, floor = (max(1, self.entry.rows // 16), 1) if target else (first_chunk(ref), min_chunk(ref))
        return DeviceState(ref.label, ref.is_gpu, ChunkSizer(self.options.chunk_seconds, first, floor), first)

    def run(self) -> TaskResult:
        self._count()
        loaded = self._opened()
        if not loaded.ledger.complete:
            self._stop_short(loaded)
        return self._record(loaded)

    def _count(self) -> None:
        """Load (in this thread) while the devices set up (in theirs), then let them count."""
        failures: list[BaseException] = []
        threads = [threading.Thread(target=self._serve_guarded, args=(k, failures), name=f"device-{k}")
                   for k in range(len(self.refs))]
        for t in threads:
            t.start()
        try:
            self.loaded = self._load()
            self.scheduler.open(self.loaded.ledger, self.loaded.work, self._checkpoint)
        except BaseException:
            self.scheduler.abort()
            raise
        finally:
            for t in threads:
                t.join()
        if failures:
            raise failures[0]

    def _load(self) -> _Loaded:
        """Verify the partition's bytes (sha256), start parsing them, and resume from the checkpoint."""
        states = StreamedPartition(read_partition(self.layout, self.entry), self.problem.mask_names,
                                   f"partition {self.partition}")
        seconds = time.perf_counter() - self.t_start  # verified; the states parse while the devices count
        ckpt, earlier, rejected = self._resume()
        attempt = max(attempts_so_far(self.layout, self.partition), ckpt.attempt if ckpt else 0) + 1
        ledger = _ledger_from(ckpt, states.total, self.options.count_nodes, self.problem.counts_classes)
        self.log.write(f"attempt {attempt}: {states.total} states, starting at {ledger.prefix_end}"
                       f"{f' (+{len(ledger.ahead)} chunks done beyond)' if ledger.ahead else ''}, on "
                       + "; ".join(r.label for r in self.refs))
        return _Loaded(states, WorkIndex(states.est_cost, states.total), ledger, attempt, ledger.prefix_end,
                       ckpt.elapsed if ckpt else 0.0, rejected, seconds, earlier)

    def _resume(self) -> tuple[Checkpoint | None, tuple[AttemptDevices, ...], str | None]:
        """The checkpoint to resume from (and the attempts its counts come from), or None; a bad one is
        reported, moved aside and ignored."""
        path = self.layout.checkpoint_file(self.partition)
        if not path.exists():
            return None, (), None
        try:
            ckpt = load_checkpoint(path, self.manifest.run_id, self.partition, self.entry.sha256)
            try:
                earlier = tuple(AttemptDevices.from_json(a) for a in ckpt.counted_by)
            except (KeyError, TypeError, ValueError) as exc:
                raise CheckpointError(f"unreadable attempts ({type(exc).__name__}: {exc})") from None
        except CheckpointError as exc:
            moved = quarantine(path)
            self.log.write(f"checkpoint {path.name} rejected: {exc}; moved to {moved.name}; starting the partition over")
            return None, (), str(exc)
        self.log.write(f"resuming from checkpoint at state {ckpt.states_done} (attempt {ckpt.attempt}, "
                       f"{ckpt.sums.get('chunks', 0)} chunks"
                       + "".join(f"; states {o['start']}-{o['end']}: {o['fine_done']} of {o['fine_total']} refined "
                                 "states counted" for o in ckpt.open) + ")")
        return ckpt, earlier, None

    def _serve_guarded(self, k: int, failures: list[BaseException]) -> None:
        """Device ``k``'s thread; its exception is handed to the task's thread instead of being lost."""
        try:
            self._serve(k)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the task
            self.scheduler.abort()
            failures.append(exc)
        finally:
            self.scheduler.leave(k)

    def _serve(self, k: int) -> None:
        """Build device ``k``'s solver (a slow PoCL build does not hold the GPUs back), then count chunks,
        each claimed, parsed and refined on another thread while the one before counts."""
        solver = self._build_solver(k)
        if not self.scheduler.wait_open():
            return
        loaded = self._opened()
        with ThreadPoolExecutor(1, thread_name_prefix=f"refine-{k}") as ahead:
            nxt = self._claim_ahead(k, solver, loaded, ahead)
            while nxt is not None:
                claim = nxt
                ready = claim.ready.result()
                nxt = self._claim_ahead(k, solver, loaded, ahead)
                self._count_chunk(k, solver, claim, ready)
                if nxt is not None and self.scheduler.stopping(k):
                    if nxt.ready.exception() is None:  # a chunk that failed to get ready does not fail the stop
                        solver.discard(nxt.ready.result().first)  # dropped: not in the checkpoint, counted on resume
                    break

    def _build_solver(self, k: int) -> RefiningSolver:
        """The device's context; its kernels are built where their first batch is staged (jobs.refine)."""
        t0 = time.perf_counter()
        m, dev = self.manifest, device_context(self.refs[k])
        solver = RefiningSolver(lambda depth: make_solver(self.problem.name, dev, m.n, depth, self.options.kernel,
                                                          m.symmetry, self.options.count_nodes),
                                variant_for(self.problem.name, dev, self.options.kernel), self.problem, m.n,
                                m.symmetry, self.targets[k], dev.launching)
        self.solvers[k] = solver
        self.setup_seconds[k] = time.perf_counter() - t0
        return solver

    def _count_chunk(self, k: int, solver: RefiningSolver, claim: "_Claim", ready: _Refined) -> None:
        """Count one chunk and hand its sums to the scheduler; a refined chunk in slices sized by time
        (jobs.refine; the first one staged ahead), stopping between them when asked."""
        (start, end), t0 = claim.span, time.perf_counter()
        fine = ready.fine
        if fine is ready.chunk:
            out = solver.count(ready.first)
            self.busy_seconds[k] += time.perf_counter() - t0
            self._finish_chunk(k, claim, self._sums(fine, out), out.kernel_seconds, t0, "")
            return
        done = resumed = ready.resumed
        launches, kernel, staged = 0, 0.0, ready.first
        while True:
            out = solver.count(staged)
            launches, kernel, done = launches + 1, kernel + out.kernel_seconds, done + len(staged.batch)
            sums = self._sums(staged.batch, out)
            if done == len(fine):
                break
            self.scheduler.advance(k, start, end, fine.depth, len(fine), done, sums, len(staged.batch))
            if self.scheduler.stopping(k):  # the chunk stays open in the checkpoint
                self.busy_seconds[k] += time.perf_counter() - t0
                self.log.write(f"{self.refs[k].label}: states {start}-{end} (refined to {len(fine)} at depth "
                               f"{fine.depth}) stopped after {done} of them, kernel {kernel:.2f} s")
                return
            size = self._slice(claim.begun, claim.expected, len(fine), done, kernel)
            staged = solver.stage(fine.take(slice(done, done + size)))
        self.busy_seconds[k] += time.perf_counter() - t0
        how = (f" in {launches} launches" if launches > 1 else "") + (f", from {resumed}" if resumed else "")
        self._finish_chunk(k, claim, sums, kernel, t0, f" (refined to {len(fine)} at depth {fine.depth}{how})",
                           (len(fine) - resumed) / len(fine))

    def _slice(self, begun: OpenChunk | None, expected: float | None, total: int, done: int, kernel: float) -> int:
        """Fine states of a refined chunk's next launch, ``done`` of ``total`` counted (``kernel`` seconds
        by this attempt): at the rate measured on it so far, in an earlier attempt too (jobs.refine)."""
        measured = begun.sums.kernel_seconds if begun else 0.0
        return next_slice(done, total, done, measured + kernel, expected, self.options.chunk_seconds)

    def _finish_chunk(self, k: int, claim: "_Claim", sums: Partial, kernel_seconds: float, t0: float,
                      refinement: str, share: float = 1.0) -> None:
        start, end = claim.span
        self.scheduler.finish(k, start, end, sums, kernel_seconds, share)
        if self.on_chunk:
            self.on_chunk(end - start)
        self.log.write(f"{self.refs[k].label}: states {start}-{end}{refinement}, kernel {kernel_seconds:.2f} s, "
                       f"{time.perf_counter() - t0:.2f} s in all, ended {time.perf_counter() - self.t_start:.2f} s "
                       "into the attempt")

    def _claim_ahead(self, k: int, solver: RefiningSolver, loaded: _Loaded, ahead: ThreadPoolExecutor) -> "_Claim | None":
        """Device ``k``'s next chunk, its states parsed, refined and first launch staged in ``ahead``
        (None: no more chunks)."""
        span = self.scheduler.claim(k)
        if span is None:
            return None
        begun = self.scheduler.open_chunk(span[0])
        expected = self.scheduler.expected_seconds(k, *span)

        def ready() -> _Refined:
            chunk = loaded.states.take(*span)  # waits for its row groups to be parsed
            if begun is not None:
                fine = solver.refine(chunk, depth=begun.depth)
            else:
                fine = solver.refine(chunk, deepen(expected, self.options.chunk_seconds))
            if fine is chunk:
                return _Refined(chunk, fine, 0, solver.stage(chunk))
            resumed = _check_begun(begun, len(fine), *span)
            # a rate may have been measured while it was refined (the chunk before, or its first slice)
            now_expected = expected if expected is not None else self.scheduler.expected_seconds(k, *span)
            size = self._slice(begun, now_expected, len(fine), resumed, 0.0)
            return _Refined(chunk, fine, resumed, solver.stage(fine.take(slice(resumed, resumed + size))))

        return _Claim(span, begun, expected, ahead.submit(ready))

    def _sums(self, chunk: StateBatch | ChildBatch, out: BatchCounts) -> Partial:
        tally = self.problem.tally(chunk, out.counts, out.solutions, self.manifest.symmetry)
        nodes = exact_sum(out.nodes) if out.nodes is not None else None
        found = out.solutions.tolist() if out.solutions is not None else None
        return Partial(tally.weighted, tally.raw, tally.classes, nodes, out.kernel_seconds, found, 1)

    def _device_use(self, k: int) -> DeviceUse:
        """Device ``k``'s part in this attempt and what it was: model, platform, driver, kernel builds."""
        r, solver = self.refs[k], self.solvers[k]
        d = self.scheduler.devices[k]
        return DeviceUse(r.label, d.states, self.setup_seconds[k], self.busy_seconds[k], solver.variant if solver else "",
                         r.model, r.platform, r.driver, solver.builds if solver else (), d.launches)

    def _opened(self) -> _Loaded:
        assert self.loaded is not None, "the partition is loaded before the scheduler opens"
        return self.loaded

    def _checkpoint(self) -> None:
        """Save the ledger's done prefix and the chunks finished beyond it (under the scheduler's lock)."""
        loaded = self._opened()
        ledger = loaded.ledger
        save_checkpoint(self.layout.checkpoint_file(self.partition), Checkpoint(
            self.manifest.run_id, self.partition, self.entry.sha256, ledger.prefix_end, ledger.prefix.as_json(),
            loaded.elapsed_before + time.perf_counter() - self.t_start, loaded.attempt, ledger.ahead_json(),
            ledger.open_json(), [a.to_json() for a in self._attempts(loaded)]))

    def _attempts(self, loaded: _Loaded) -> tuple[AttemptDevices, ...]:
        """The earlier attempts' devices and this one's so far (where it counted anything)."""
        origin = TaskEnvironment.read().origin
        this = AttemptDevices(loaded.attempt, origin.host, origin.version,
                              tuple(self._device_use(k) for k in range(len(self.refs))))
        return loaded.earlier + ((this,) if any(d.counted for d in this.devices) else ())

    def _stop_short(self, loaded: _Loaded) -> None:
        """Keep this attempt's work in a checkpoint and raise TaskInterrupted."""
        with self.scheduler.lock:
            progressed = self.scheduler.progressed
            if progressed:
                self._checkpoint()
        why = "on request" if self.scheduler.stop.requested.is_set() else f"after its {self.options.max_seconds or 0:g} s budget"
        saved = "checkpointed" if progressed else "no new work to checkpoint"
        self.log.write(f"stopping at state {loaded.ledger.prefix_end}/{loaded.states.total} {why} ({saved})")
        raise TaskInterrupted(self.partition, loaded.ledger.prefix_end, loaded.states.total)

    def _record(self, loaded: _Loaded) -> TaskResult:
        """Write the solutions (where the problem reports them), then the result record; drop the checkpoint."""
        sums, m = loaded.ledger.prefix, self.manifest
        if self.problem.reports_solutions and sums.solutions is not None:
            write_solutions(self.layout, self.partition, np.array(sums.solutions, np.uint8).reshape(len(sums.solutions), m.n))
        now = time.perf_counter()
        devices = tuple(self._device_use(k) for k in range(len(self.refs)))
        record = ResultRecord(
            m.run_id, m.problem, m.n, self.partition, loaded.attempt, self.entry.sha256, loaded.states.total,
            resumed_from=loaded.resumed_from, states_this_attempt=sum(d.states for d in self.scheduler.devices),
            chunks=sums.chunks,
            checkpoint_rejected=loaded.rejected, weighted=sums.weighted, raw=sums.raw, classes=sums.classes,
            nodes=sums.nodes if self.options.count_nodes else None, kernel=_kernels(devices), devices=devices,
            seconds=Seconds(loaded.seconds, sums.kernel_seconds, loaded.elapsed_before + now - self.t_start, now - self.t_start),
            origin=TaskEnvironment.read().origin, earlier=loaded.earlier)
        status = write_result(self.layout, record)
        self.log.write(f"done: {record.weighted} solutions, {sums.chunks} chunks, result {status}")
        self.layout.checkpoint_file(self.partition).unlink(missing_ok=True)
        return TaskResult(record, status)


def _kernels(devices: tuple[DeviceUse, ...]) -> str:
    """The kernel variant(s) that counted: one name, or each device's where they differ (a GPU beside a
    CPU); a device that counted nothing in this attempt is left out (unless none did)."""
    ran = tuple(d for d in devices if d.counted) or devices
    names = sorted({d.kernel for d in ran})
    return names[0] if len(names) == 1 else ", ".join(f"{d.label}: {d.kernel}" for d in ran)


def _ledger_from(ckpt: Checkpoint | None, total: int, count_nodes: bool, counts_classes: bool) -> ChunkLedger:
    if ckpt is None:
        start = Partial(classes=0 if counts_classes else None, nodes=0 if count_nodes else None)
        return ChunkLedger(total, 0, start, {})
    return ChunkLedger.resumed(total, ckpt.states_done, ckpt.sums, ckpt.ahead, ckpt.open)
