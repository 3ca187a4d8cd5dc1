"""One array task: load partition I, verify it, count every completion of its states, write the result.

The same function runs under SLURM (``permenum task``) and under the local executor; only who
launches it differs. The partition is processed in chunks (jobs.chunking); after every chunk the
partial sums go to a verified checkpoint, so a task that is stopped (signal, time limit, kill -9)
resumes where its last checkpoint left off. The result file, not the scheduler, is the truth that
the partition is done; it is written once (jobs.results).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from permenum.checkpoints import Checkpoint, CheckpointError, load_checkpoint, quarantine, save_checkpoint
from permenum.jobs.chunking import DEFAULT_CHUNK_SECONDS, ChunkSizer, Peer, WorkIndex, share_of_rest
from permenum.jobs.environment import TaskEnvironment
from permenum.jobs.partial import ChunkLedger, Partial
from permenum.jobs.results import attempts_so_far, write_failure, write_result
from permenum.jobs.solutions import write_solutions
from permenum.jobs.stream import StreamedPartition
from permenum.jobs.tasklog import TaskLog
from permenum.layout import RunLayout
from permenum.poolgen.manifest import Manifest, load_manifest
from permenum.poolgen.write import read_partition
from permenum.problems import get_problem
from permenum.problems.base import exact
from permenum.solver.devices import DeviceRef, select_devices
from permenum.solver.opencl import device_context, first_chunk, min_chunk
from permenum.solver.registry import make_solver

#: `permenum task` exits with this (EX_TEMPFAIL) when it stopped early after checkpointing.
EXIT_INTERRUPTED = 75


class TaskInterrupted(Exception):
    """The task stopped at a chunk boundary on request, with its progress checkpointed."""

    def __init__(self, partition: int, states_done: int, total: int):
        super().__init__(f"partition {partition} interrupted at state {states_done}/{total} (checkpointed)")
        self.partition, self.states_done, self.total = partition, states_done, total


def run_task(layout: RunLayout, partition: int, device: str | None = None, kernel: str | None = None,
             count_nodes: bool = False, stop: threading.Event | None = None,
             chunk_seconds: float = DEFAULT_CHUNK_SECONDS, max_seconds: float | None = None) -> dict[str, Any]:
    """Run one partition and write its result record; returns the record.

    ``stop`` is checked after every chunk: when set, or once this attempt has run ``max_seconds``
    (a time budget for clusters without --signal), the task checkpoints and raises TaskInterrupted.
    A failure is recorded in ``logs/part-NNNNN.error.json`` before it propagates, so `status` can
    tell a failed partition from one that never ran.
    """
    try:
        return _run_task(layout, partition, device, kernel, count_nodes, stop or threading.Event(), chunk_seconds,
                         max_seconds)
    except TaskInterrupted:
        raise
    except Exception as exc:
        if layout.manifest.exists() and partition >= 0:
            write_failure(layout, partition, exc)
        raise


def _resume(layout: RunLayout, manifest: Manifest, partition: int, log: TaskLog) -> tuple[Checkpoint | None, str | None]:
    """The checkpoint to resume from, or None; a bad one is reported, moved aside and ignored."""
    path = layout.checkpoint_file(partition)
    if not path.exists():
        return None, None
    try:
        ckpt = load_checkpoint(path, manifest.run_id, partition, manifest.partition(partition)["sha256"])
    except CheckpointError as exc:
        moved = quarantine(path)
        log.write(f"checkpoint {path.name} rejected: {exc}; moved to {moved.name}; starting the partition over")
        return None, str(exc)
    log.write(f"resuming from checkpoint at state {ckpt.states_done} (attempt {ckpt.attempt}, "
              f"{ckpt.sums.get('chunks', 0)} chunks)")
    return ckpt, None


@dataclass
class _DeviceWorker:
    """One device's solver and its own chunk sizing (its share follows its measured rate)."""

    ref: DeviceRef
    sizer: ChunkSizer
    solver: Any = None  # built by the device's own thread: a slow build (PoCL) does not hold the GPUs back
    rate: float = 0.0  # estimated work (WorkIndex) per kernel-second, 0 until measured
    states: int = 0
    in_flight: float = 0.0  # estimated work of the chunk it runs now
    since: float = 0.0  # when that chunk was claimed (perf_counter)
    setup_seconds: float = 0.0  # its context and kernel build
    busy_seconds: float = 0.0  # inside its solver: host preparation, transfers and kernels

    @property
    def label(self) -> str:
        return self.ref.label

    @property
    def is_gpu(self) -> bool:
        return self.ref.is_gpu

    def expected_rate(self, workers: "list[_DeviceWorker]") -> float:
        """Its measured rate, else that of measured devices of its kind (a second GPU like the first), else 0."""
        if self.rate > 0:
            return self.rate
        kin = [w.rate for w in workers if w.rate > 0 and w.is_gpu == self.is_gpu]
        return sum(kin) / len(kin) if kin else 0.0

    def as_peer(self, workers: "list[_DeviceWorker]", now: float) -> Peer:
        rate = self.expected_rate(workers)
        busy = max(self.in_flight / rate - (now - self.since), 0.0) if rate > 0 and self.in_flight else 0.0
        return Peer(rate, busy)


def _run_task(layout: RunLayout, partition: int, device: str | None, kernel: str | None, count_nodes: bool,
              stop: threading.Event, chunk_seconds: float, max_seconds: float | None) -> dict[str, Any]:
    t_start = time.perf_counter()
    manifest = load_manifest(layout)
    problem = get_problem(manifest.problem)
    depth = int(manifest.data["generator"]["locked_depth"])
    workers = [_DeviceWorker(ref, ChunkSizer(chunk_seconds, first_chunk(ref), min_chunk(ref))) for ref in select_devices(device)]
    lock = threading.Lock()
    interrupted = threading.Event()
    failed = threading.Event()  # one device failed (a kernel that does not build): the others stop claiming
    loaded = threading.Event()  # the partition is loaded and the ledger set: devices may claim
    active = set(range(len(workers)))
    # set by the task's thread while the devices set themselves up, before `loaded`
    states: StreamedPartition
    work: WorkIndex
    ledger: ChunkLedger
    log: TaskLog
    elapsed_before = 0.0

    def checkpoint() -> None:
        ahead = [{"start": s, "end": e, **sums.as_json()} for s, (e, sums) in sorted(ledger.ahead.items())]
        save_checkpoint(layout.checkpoint_file(partition), Checkpoint(
            manifest.run_id, partition, manifest.partition(partition)["sha256"], ledger.prefix_end,
            ledger.prefix.as_json(), elapsed_before + time.perf_counter() - t_start, attempt, ahead))

    def should_stop(w: _DeviceWorker) -> bool:
        """Stop requests are honoured once this device has done a chunk in this attempt: a partition
        whose every restart is signalled at once (SLURM may signal up to a minute early) still advances."""
        if w.states == 0:
            return False
        over = max_seconds is not None and time.perf_counter() - t_start >= max_seconds
        if stop.is_set() or over:
            interrupted.set()
        return interrupted.is_set()

    def work(k: int) -> None:
        try:
            _work(k)
        except BaseException:
            failed.set()
            raise
        finally:
            with lock:
                active.discard(k)

    def _work(k: int) -> None:
        w = workers[k]
        t0 = time.perf_counter()  # set-up runs while the task's thread loads the partition
        w.solver = make_solver(problem.name, device_context(w.ref), manifest.n, depth, kernel, manifest.symmetry, count_nodes)
        w.setup_seconds = time.perf_counter() - t0
        loaded.wait()
        while True:
            with lock:  # shares in estimated work, chunk sizes (time bound, GPU floor) in states
                remaining = ledger.remaining_unclaimed()
                rest = work.of(ledger.unclaimed_ranges())
                now = time.perf_counter()
                peers = [workers[j].as_peer(workers, now) for j in active if j != k]
                floor = work.between(ledger.cursor, min(ledger.cursor + w.sizer.floor, ledger.total))
                unit = work.between(ledger.cursor, min(ledger.cursor + 1, ledger.total))
                share = share_of_rest(rest, w.expected_rate(workers), peers, floor, unit)
                size = min(w.sizer.next(max(remaining, 1)),
                           remaining if share >= rest else work.states_within(ledger.cursor, share, remaining))
                if w.rate > 0 and any(p.rate <= 0 for p in peers):
                    size = min(size, first_chunk(w.ref))  # until every rate is known, no device runs ahead alone
                claimed = None
                if size > 0 and not failed.is_set() and not should_stop(w):
                    claimed = ledger.claim(size)
                if claimed is None:
                    # leave `active` under the same lock: a slower device deciding at this moment
                    # must not count on this one to take the tail (both quit, the task stopped short)
                    active.discard(k)
                    return
                w.in_flight, w.since = work.between(*claimed), now
            start, end = claimed
            chunk = states.take(start, end)  # waits for its row groups to be parsed
            t0 = time.perf_counter()
            out = w.solver(chunk)
            w.busy_seconds += time.perf_counter() - t0
            tally = problem.tally(chunk, out.counts, out.solutions, manifest.symmetry)
            sums = Partial(tally.weighted, tally.raw, tally.classes,
                           int(np.sum(out.nodes, dtype=np.uint64)) if out.nodes is not None else None,
                           out.kernel_seconds, out.solutions.tolist() if out.solutions is not None else None, 1)
            with lock:
                w.sizer.observe(end - start, out.kernel_seconds)
                measured = work.between(start, end) / max(out.kernel_seconds, 1e-9)
                w.rate = measured if w.rate == 0 else 0.5 * (w.rate + measured)
                w.states += end - start
                w.in_flight = 0.0
                ledger.finish(start, end, sums)
                if not ledger.complete:
                    checkpoint()
            log.write(f"{w.label}: states {start}-{end}, kernel {out.kernel_seconds:.2f} s, "
                      f"{time.perf_counter() - t0:.2f} s in all, ended {time.perf_counter() - t_start:.2f} s into the attempt")

    failures: list[BaseException] = []
    threads = [threading.Thread(target=_guard, args=(work, k, failures), name=f"device-{k}")
               for k in range(len(workers))]
    for t in threads:
        t.start()
    try:  # the partition loads while the devices set up
        states = StreamedPartition(read_partition(layout, manifest, partition), problem.mask_names, f"partition {partition}")
        work = WorkIndex(states.est_cost, states.total)
        t_loaded = time.perf_counter()  # verified; the states parse while the devices count the first ones
        log = TaskLog(layout.task_log(partition), partition)
        ckpt, rejected = _resume(layout, manifest, partition, log)
        attempt = max(attempts_so_far(layout, partition), ckpt.attempt if ckpt else 0) + 1
        ledger = _ledger_from(ckpt, states.total, count_nodes, problem.counts_classes)
        for w in workers:  # kernel seconds add up over devices: their ratio is a per-device rate
            w.sizer.resume_at(ledger.prefix_end, ledger.prefix.kernel_seconds)
        resumed_from = ledger.prefix_end
        elapsed_before = ckpt.elapsed if ckpt else 0.0
        log.write(f"attempt {attempt}: {states.total} states, starting at {resumed_from}"
                  f"{f' (+{len(ledger.ahead)} chunks done beyond)' if ledger.ahead else ''}, on "
                  + "; ".join(w.label for w in workers))
    except BaseException:
        failed.set()
        raise
    finally:
        loaded.set()
        for t in threads:
            t.join()
    if failures:
        raise failures[0]
    if not ledger.complete:
        with lock:
            progressed = sum(w.states for w in workers) > 0
            if progressed:  # keep this attempt's work
                checkpoint()
        why = "on request" if stop.is_set() else f"after its {max_seconds or 0:g} s budget"
        saved = "checkpointed" if progressed else "no new work to checkpoint"
        log.write(f"stopping at state {ledger.prefix_end}/{states.total} {why} ({saved})")
        raise TaskInterrupted(partition, ledger.prefix_end, states.total)
    sums = ledger.prefix
    if sums.solutions is not None and problem.name == "costas":
        write_solutions(layout, partition, np.array(sums.solutions, np.uint8).reshape(len(sums.solutions), manifest.n))
    env = TaskEnvironment.read()
    record: dict[str, Any] = {
        "run_id": manifest.run_id,
        "problem": manifest.problem,
        "n": manifest.n,
        "partition": partition,
        "attempt": attempt,
        "pool_sha256": manifest.partition(partition)["sha256"],
        "states": states.total,
        "resumed_from": resumed_from,
        "states_this_attempt": sum(w.states for w in workers),
        "chunks": sums.chunks,
        "checkpoint_rejected": rejected,
        "solutions": {"weighted": exact(sums.weighted), "raw": sums.raw},
        "classes": exact(sums.classes),
        "nodes": sums.nodes if count_nodes else None,
        "kernel": kernel or "default",
        "devices": [w.label for w in workers],
        "device_states": {w.label: w.states for w in workers},
        "device_seconds": {w.label: {"setup": w.setup_seconds, "busy": w.busy_seconds} for w in workers},
        "seconds": {
            "load": t_loaded - t_start,
            "kernel": sums.kernel_seconds,
            "total": elapsed_before + time.perf_counter() - t_start,
            "this_attempt": time.perf_counter() - t_start,
        },
        "environment": env.as_dict(),
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    record["status"] = write_result(layout, record)
    log.write(f"done: {record['solutions']['weighted']} solutions, {sums.chunks} chunks, result {record['status']}")
    layout.checkpoint_file(partition).unlink(missing_ok=True)
    return record


def _guard(work: Any, index: int, errors: list[BaseException]) -> None:
    """Run one device's loop; an exception is handed to the task's thread instead of being lost."""
    try:
        work(index)
    except BaseException as exc:  # noqa: BLE001 - re-raised by the task
        errors.append(exc)


def _ledger_from(ckpt: Checkpoint | None, total: int, count_nodes: bool, counts_classes: bool) -> ChunkLedger:
    if ckpt is None:
        start = Partial(classes=Fraction(0) if counts_classes else None, nodes=0 if count_nodes else None)
        return ChunkLedger(total, 0, start, {})
    ahead = {int(a["start"]): (int(a["end"]), Partial.from_json(a)) for a in ckpt.ahead}
    return ChunkLedger(total, ckpt.states_done, Partial.from_json(ckpt.sums), ahead)
