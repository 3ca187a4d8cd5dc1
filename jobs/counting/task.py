"""One array task: load partition I, verify it, count every completion of its states, write the result.

The same function runs under SLURM (``permenum task``) and under the local executor; only who
launches it differs. The flow: verify the partition and resume from its checkpoint, schedule its
chunks over the devices (jobs.counting.schedule; each device's side is jobs.counting.device_loop, in a process of its own
where there are several: jobs.counting.device_process), then record the result. After every chunk the partial sums
go to a verified checkpoint, so a task that is stopped (signal, time limit, kill -9) resumes where
its last checkpoint left off. The result file, not the scheduler, is the truth that the partition is
done; it is written once (permenum.records).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from permenum.atomic import quarantine
from permenum.checkpoints import Checkpoint, CheckpointError, load_checkpoint, save_checkpoint
from permenum.jobs.counting.chunking import ChunkSizer, WorkIndex
from permenum.jobs.counting.claims import PartitionClaimed, claim
from permenum.jobs.counting.environment import TaskEnvironment
from permenum.jobs.counting.device_loop import DeviceLoop, DeviceReport, Spec
from permenum.jobs.counting.device_process import DeviceProcess
from permenum.jobs.counting.partial import ChunkLedger, OpenChunk, Partial
from permenum.jobs.counting.rate_hints import rate_key, read_rate_hints, record_rate_hints
from permenum.jobs.counting.schedule import LEAST_CHUNK_SECONDS, DeviceState, RateBook, Scheduler, StopRule
from permenum.jobs.counting.solutions import write_solutions
from permenum.jobs.counting.stream import StreamedPartition
from permenum.jobs.counting.tasklog import TaskLog
from permenum.errors import UserError
from permenum.kernel_cache import BUILDS
from permenum.layout import RunLayout
from permenum.poolgen.write import read_partition
from permenum.problems import Problem, get_problem
from permenum.records import (AttemptDevices, DeviceUse, Manifest, check_verification_options, PartitionEntry, ResultRecord, Seconds, attempts_so_far,
                              load_manifest, write_failure, write_result)
from permenum.solver.devices import DeviceRef, own_visibility, select_devices
from permenum.solver.opencl import device_lanes, first_chunk, min_chunk
from permenum.signals import EXIT_INTERRUPTED  # noqa: F401  (where the commands import it from)
from permenum.task_options import TaskOptions


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
             rates: RateBook | None = None, on_drained: Callable[[], None] = lambda: None,
             force: bool = False) -> TaskResult:
    """Run one partition and write its result record.

    ``stop`` is checked after every chunk: when set, or once this attempt has run
    ``options.max_seconds``, the task checkpoints and raises TaskInterrupted. ``on_chunk`` hears the
    number of states of every chunk counted (the local executor's progress); ``rates`` carries the
    devices' rates from task to task, ``on_drained`` hears that every device holds its last chunk (the
    local executor's next task may start preparing). A failure is recorded in ``logs/part-NNNNN.error.json``
    (where the run directory takes it) before it propagates, so `status` can tell a failed partition
    from one that never ran. The partition is claimed while it counts (jobs.counting.claims): PartitionClaimed when
    another live task counts it, or when it has a sound result already and not ``force``.
    """
    options = options or TaskOptions()
    options.validate()
    check_verification_options(layout, options.kernel, options.device)
    try:
        manifest = load_manifest(layout)  # once: the claim and the attempt share it
        with claim(layout, partition, again=force, manifest=manifest):
            return _Attempt(layout, manifest, partition, options, stop or threading.Event(), on_chunk, rates,
                            on_drained).run()
    except (TaskInterrupted, PartitionClaimed):
        raise
    except Exception as exc:
        if _is_partition(layout, partition):  # no error file for a partition the pool does not have
            # a directory that cannot take the record (read-only, full) must not hide the failure it records
            with contextlib.suppress(OSError):
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


class _Slot:
    """The task's scheduler bound to device ``k`` (jobs.counting.device_loop.Handout): its chunks' sums go to the
    ledger, their states to the progress, their lines to the task log."""

    def __init__(self, attempt: "_Attempt", k: int) -> None:
        self._a, self._k = attempt, k

    def claim(self) -> tuple[int, int] | None:
        return self._a.scheduler.claim(self._k)

    def open_chunk(self, start: int) -> OpenChunk | None:
        return self._a.scheduler.open_chunk(start)

    def expected_seconds(self, start: int, end: int) -> float | None:
        return self._a.scheduler.expected_seconds(self._k, start, end)

    def advance(self, start: int, end: int, depth: int, fine_total: int, fine_done: int, sums: Partial,
                slice_states: int) -> None:
        self._a.scheduler.advance(self._k, start, end, depth, fine_total, fine_done, sums, slice_states)

    def finish(self, start: int, end: int, sums: Partial, kernel_seconds: float, share: float, line: str) -> None:
        self._a.scheduler.finish(self._k, start, end, sums, kernel_seconds, share)
        if self._a.on_chunk:
            self._a.on_chunk(end - start)
        self._a.log.write(line)

    def stopping(self) -> bool:
        return self._a.scheduler.stopping(self._k)

    def log(self, line: str) -> None:
        self._a.log.write(line)

    def account(self, report: DeviceReport) -> None:
        """The device's set-up, busy seconds and builds so far, which the next checkpoint records."""
        self._a.reports[self._k] = report


class _Attempt:
    """One attempt at one partition: the partition is verified and loaded while every device builds its
    kernels (a lone device on a thread of this process, several each in a process of its own); then the
    devices count the chunks the scheduler hands them."""

    def __init__(self, layout: RunLayout, manifest: Manifest, partition: int, options: TaskOptions,
                 stop: threading.Event, on_chunk: Callable[[int], None] | None = None, rates: RateBook | None = None,
                 on_drained: Callable[[], None] = lambda: None):
        self.t_start = time.perf_counter()
        self.on_chunk = on_chunk
        self.layout, self.partition, self.options = layout, partition, options
        self.manifest = manifest
        self.entry: PartitionEntry = self.manifest.partition(partition)
        self.problem: Problem = get_problem(self.manifest.problem)
        self.refs: list[DeviceRef] = select_devices(options.device, options.only)
        self.targets = [self._refine_target(r) for r in self.refs]
        self.scheduler = Scheduler([self._device_state(r, t) for r, t in zip(self.refs, self.targets)],
                                   StopRule(stop, options.max_seconds, self.t_start), rates=rates,
                                   on_drained=on_drained)
        hints = read_rate_hints(layout)
        self.scheduler.rates.seed({r.label: hints[k] for r in self.refs if (k := self._rate_key(r)) in hints})
        self.reports = [DeviceReport(0.0, 0.0, "", ())] * len(self.refs)  # each device's, as of its last chunk
        self.log = TaskLog(layout.task_log(partition), partition)
        self.loaded: _Loaded | None = None  # set before the scheduler opens
        # several devices: each in a process of its own, started now so that it opens while the partition
        # loads (last: nothing here may fail after it, as _count's threads are what answer them)
        self.remote = self._device_processes() if len(self.refs) > 1 else [None]

    def _device_processes(self) -> list[DeviceProcess | None]:
        """Each device's process, started after what may still fail (their visibilities); the first says
        that kernels are being built, for the task (jobs.counting.device_process)."""
        positions = self.options.only or tuple(range(len(self.refs)))
        seen = [own_visibility(self.options.device, (p,)) for p in positions]
        speaks = not BUILDS.said
        processes: list[DeviceProcess | None] = [DeviceProcess(self.spec(k), p, seen[k], speaks=speaks and k == 0)
                                                 for k, p in enumerate(positions)]
        BUILDS.silence()  # said by the first device's process, if at all
        return processes

    def _rate_key(self, ref: DeviceRef) -> str:
        return rate_key(ref.model, self.options.kernel, self.options.count_nodes)

    def _refine_target(self, ref: DeviceRef) -> int | None:
        """States per launch that fill ``ref`` where the partition is coarser than that (jobs.counting.refine); None:
        count the pool's states as they are (a fine pool, or --count-nodes: nodes are counted from the
        pool's depth, the unit of its cost estimates)."""
        target = self.problem.states_per_lane * device_lanes(ref)
        return None if self.options.count_nodes or self.entry.rows >= target else target

    def _device_state(self, ref: DeviceRef, target: int | None) -> DeviceState:
        """A device's chunk sizes: a refined device's first chunk is 1/16 of the partition (refinement fills
        the launch; at 1/64 N-Queens 21's first two chunks on the H100 were 0.15 s of kernel each for
        1.3-1.7 s of host work), with no floor, and no chunk but the last shorter than LEAST_CHUNK_SECONDS (a
        quarter of the bound where that is less); otherwise the device's own first launch and floor."""
        first, floor = (max(1, self.entry.rows // 16), 1) if target else (first_chunk(ref), min_chunk(ref))
        bound = self.options.chunk_seconds
        least = min(LEAST_CHUNK_SECONDS, bound / 4) if target else 0.0  # a CPU beside GPUs keeps its sliver
        return DeviceState(ref.label, ref.is_gpu, ChunkSizer(bound, first, floor), first, least_seconds=least)

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
            self.reports[k] = self._serve(k)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the task
            self.scheduler.abort()
            failures.append(exc)
        finally:
            self.scheduler.leave(k)

    def _serve(self, k: int) -> DeviceReport:
        """Device ``k`` counts chunks: on this thread where it is the task's only device, else in a process
        of its own (jobs.counting.device_process says why), this thread answering its requests."""
        slot = _Slot(self, k)
        if self.remote[k] is not None:
            return self.remote[k].serve(slot, self._partition_bytes)
        loop = DeviceLoop(self.refs[k], self.spec(k), self.problem, slot)
        loop.build()
        if self.scheduler.wait_open():
            loop.serve(self._opened().states)
        return loop.report()

    def _partition_bytes(self) -> tuple[bytes, str] | None:
        """The verified partition for a device's process, once loaded (None: it will not be counted)."""
        if not self.scheduler.wait_open():
            return None
        return self._opened().states.data, f"partition {self.partition}"

    def spec(self, k: int) -> Spec:
        m = self.manifest
        return Spec(m.problem, m.n, m.symmetry, self.options, self.targets[k], self.t_start)

    def _device_use(self, k: int) -> DeviceUse:
        """Device ``k``'s part in this attempt and what it was: model, platform, driver, kernel builds."""
        r, d, rep = self.refs[k], self.scheduler.devices[k], self.reports[k]
        return DeviceUse(r.label, d.states, rep.setup_seconds, rep.busy_seconds, rep.variant, r.model, r.platform,
                         r.driver, rep.builds, d.launches, r.identity)

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
        sealed = None
        if self.problem.reports_solutions and sums.solutions is not None:
            sealed = write_solutions(self.layout, self.partition, loaded.attempt,
                                     np.array(sums.solutions, np.uint8).reshape(len(sums.solutions), m.n))
        now = time.perf_counter()
        devices = tuple(self._device_use(k) for k in range(len(self.refs)))
        record = ResultRecord(
            m.run_id, m.problem, m.n, self.partition, loaded.attempt, self.entry.sha256, loaded.states.total,
            resumed_from=loaded.resumed_from, states_this_attempt=sum(d.states for d in self.scheduler.devices),
            chunks=sums.chunks,
            checkpoint_rejected=loaded.rejected, weighted=sums.weighted, raw=sums.raw, classes=sums.classes,
            nodes=sums.nodes if self.options.count_nodes else None, kernel=_kernels(devices), devices=devices,
            seconds=Seconds(loaded.seconds, sums.kernel_seconds, loaded.elapsed_before + now - self.t_start, now - self.t_start),
            origin=TaskEnvironment.read().origin, earlier=loaded.earlier, solutions_file=sealed)
        status = write_result(self.layout, record)
        self.log.write(f"done: {record.weighted} solutions, {sums.chunks} chunks, result {status}")
        self._keep_rates()
        self.layout.checkpoint_file(self.partition).unlink(missing_ok=True)
        return TaskResult(record, status)

    def _keep_rates(self) -> None:
        """Leave the devices' measured rates for the run's next tasks (jobs.counting.rate_hints); a failed write
        costs them only their start, so it is logged, not raised."""
        measured = {self._rate_key(r): d.rate for r, d in zip(self.refs, self.scheduler.devices) if d.launches and d.rate > 0}
        try:
            record_rate_hints(self.layout, measured)
        except Exception as exc:  # noqa: BLE001 - a hint: the result is written already
            self.log.write(f"rates not kept for the next tasks: {type(exc).__name__}: {exc}")


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
