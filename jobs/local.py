"""The local executor: run every partition that has no result yet, on this machine, with a progress bar.

The node's devices are dealt to workers (worker_groups: by default one a device, every GPU used once).
A lone worker runs its tasks in this process; several run one process each, taking partitions from one
queue as they free up, so that no worker's host work (refining, staging) waits on another's GIL. Within a
worker, tasks run on threads sharing one OpenCL context per device, so a run of many small partitions
does not pay a process start each, and each task starts at the rates its predecessors measured
(jobs.counting.schedule.RateBook).
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Container
from dataclasses import dataclass, field, replace
from functools import partial
from queue import Empty

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from permenum.checkpoints.progress import run_progress
from permenum.errors import UserError, one_line
from permenum.jobs.counting.children import ChildSetup, alive, become_child, context
from permenum.jobs.counting.claims import PartitionClaimed, claimed_elsewhere, left_to_others
from permenum.jobs.counting.schedule import RateBook
from permenum.jobs.counting.task import TaskInterrupted, run_task
from permenum.task_options import TaskOptions
from permenum.kernel_cache import BUILDS
from permenum.layout import RunLayout
from permenum.records import Manifest, check_verification_options, load_manifest, partition_scope
from permenum.result_index import scan_results
from permenum.solver.devices import check_seen, own_visibility, select_devices
from permenum.solver.opencl import device_context
from permenum.solver.registry import check_kernel


@dataclass
class LocalRunSummary:
    ran: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    refused: dict[int, OSError] = field(default_factory=dict)  # the system would not take its writes (a full disk)
    interrupted: list[int] = field(default_factory=list)  # stopped with a checkpoint
    not_started: list[int] = field(default_factory=list)  # a stop came before their turn
    claimed: dict[int, str] = field(default_factory=dict)  # left to another executor counting them (its holder)
    seconds: float = 0.0


def pending_partitions(layout: RunLayout) -> list[int]:
    """Partitions (of the run's scope) without a sound result (none, or a damaged one the task will move aside)."""
    manifest = load_manifest(layout)
    return _pending(layout, manifest, scan_results(layout, manifest).done)


def _pending(layout: RunLayout, manifest: Manifest, done: Container[int]) -> list[int]:
    return [i for i in partition_scope(layout, manifest) if i not in done]


#: Tasks alive beyond the one handing out chunks: drained ones counting their last chunks and the next ones
#: preparing. On an H100, 64 N-Queens 22 partitions of 1.65 s of kernel each are bound by the host's
#: refinement (each refines 586 states to 4.5 M at depth 8 on 16 threads); a second task preparing helps where
#: the host is short (4 refining threads: 0.79 of the kernel rate against 0.72 with one) and costs nothing
#: where it is not (16 threads: 0.846 against 0.847).
PREPARED_AHEAD = 2

#: What a worker tells the run: ("taken", partition, worker), ("chunk", partition, states), ("ran" |
#: "interrupted", partition, None), ("failed", partition, why), ("refused", partition, the system's OSError),
#: ("claimed", partition, holder); a worker's process says last ("ended", -1, worker), not relayed.
Report = Callable[[str, int, object], None]


def worker_groups(spec: str | None, workers: int | None) -> list[tuple[int, ...]]:
    """The devices (positions in ``spec``'s list) of each local worker: by default one worker a device, so
    every GPU of the node is used once, each by a process of its own; fewer workers get the devices dealt
    round robin. More workers than devices is refused: a device shared by two workers runs their kernels by
    turns while their host work competes (4 workers over 4 H200, each task on every GPU: 207 s, against
    70 s for one worker)."""
    count = len(select_devices(spec))
    k = count if workers is None else workers
    if k < 1:
        raise UserError(f"--workers must be at least 1 (got {k})")
    if k > count:
        raise UserError(f"--workers {k}: --device {spec or 'default'} gives {count} device{'s' if count > 1 else ''}, "
                        f"and a worker needs one of its own (split a CPU into sub-devices with --device cpu/{k})")
    return [tuple(range(w, count, k)) for w in range(k)]


def _work(layout: RunLayout, options: TaskOptions, take: Callable[[], int | None], stop: threading.Event | None,
          report: Report) -> None:
    """Count the partitions ``take`` hands out on ``options``' devices, one task handing out chunks at a time:
    a task whose devices all hold their last chunk lets the next one start, so that its load, refinement
    and first upload overlap those last launches (one batch counts at a time on a device:
    solver.opencl.DeviceContext.launching) and the devices do not idle between partitions. A partition is
    taken only when its task may start, so workers sharing one queue take work as they free up."""
    turns, rates = threading.Semaphore(1), RateBook()

    def serve() -> None:
        while True:
            turns.acquire()
            given = threading.Lock()  # taken by the first give_turn: the turn goes back once

            def give_turn() -> None:
                if given.acquire(blocking=False):
                    turns.release()

            try:
                if stop is not None and stop.is_set():
                    return
                i = take()
                if i is None:
                    return
                try:
                    run_task(layout, i, options, stop, partial(report, "chunk", i), rates, give_turn)
                    report("ran", i, None)
                except TaskInterrupted:
                    report("interrupted", i, None)
                except PartitionClaimed as exc:
                    report("claimed", i, exc.holder)
                except Exception as exc:  # one failed partition must not hide the others
                    if isinstance(exc, OSError) and exc.errno is not None:  # the system's (pyarrow's has none)
                        report("refused", i, OSError(exc.errno, exc.strerror, exc.filename))  # plain: it pickles
                    else:
                        report("failed", i, f"{type(exc).__name__}: {one_line(exc)}")
            finally:
                give_turn()

    threads = [threading.Thread(target=serve, name=f"task-{t}") for t in range(1 + PREPARED_AHEAD)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _worker_process(layout: RunLayout, options: TaskOptions, setup: ChildSetup, worker: int,
                    queue: "mp.Queue[int | None]", events: "mp.Queue[tuple[str, int, object]]",
                    stop: threading.Event) -> None:
    """One worker's process: its devices, its own interpreter (no other worker's host work holds its GIL),
    partitions taken from the run's queue. Signals go to the run's process, which sets ``stop``; a worker
    whose run's process is gone (killed) takes nothing more and ends once its task does."""
    become_child(setup)  # before OpenCL starts: only this worker's GPUs are initialized
    if worker:
        BUILDS.silence()  # the first worker says it for the run
    try:
        refs = select_devices(options.device, options.only)
        if setup.visibility is not None:
            check_seen(setup.visibility, refs)
        for ref in refs:  # before its first partition is dealt
            device_context(ref)
    except UserError as exc:  # its partitions are failed by the run, which names this exit code
        print(f"error: worker {worker}: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    lock, ended = threading.Lock(), False
    run = mp.parent_process()

    def next_partition() -> int | None:
        while run is None or run.is_alive():
            try:
                return queue.get(timeout=1.0)
            except Empty:
                continue
        return None

    def take() -> int | None:
        nonlocal ended
        with lock:  # one None per worker: once it is taken, every thread of the worker is done
            i = None if ended else next_partition()
            ended = i is None
        if i is not None:
            events.put(("taken", i, worker))
        return i

    _work(layout, options, take, stop, lambda kind, i, detail: events.put((kind, i, detail)))
    events.put(("ended", -1, worker))
    if run is not None and not run.is_alive():
        events.cancel_join_thread()  # no reader left: exiting must not wait to flush its reports


def _own_devices(options: TaskOptions, group: tuple[int, ...]) -> tuple[TaskOptions, ChildSetup]:
    """A worker's options and what it is to see: its GPUs alone where they can be named so
    (solver.devices.own_visibility), else the node's list, of which it takes positions ``group``."""
    visibility = own_visibility(options.device, group)
    return replace(options, only=tuple(range(len(group))) if visibility else group), ChildSetup(visibility)


class _WorkerProcesses:
    """One process per device group, started at once so that each opens its devices while the run gets
    ready (`enumerate` writes its pool meanwhile); ``run`` then deals them the partitions."""

    def __init__(self, layout: RunLayout, options: TaskOptions, groups: list[tuple[int, ...]]) -> None:
        ctx = context()  # not a fork of this process: OpenCL state does not survive a fork
        self.queue: mp.Queue[int | None] = ctx.Queue()
        self.events: mp.Queue[tuple[str, int, object]] = ctx.Queue()
        self.halt = ctx.Event()
        self.groups = groups
        self.procs = [ctx.Process(target=_worker_process, args=(layout, *_own_devices(options, g), w, self.queue,
                                                                 self.events, self.halt), name=f"permenum-worker-{w}")
                      for w, g in enumerate(groups)]
        for p in self.procs:
            p.start()
        self._dealt = False
        self._done: set[int] = set()  # workers that said they take nothing more

    def run(self, todo: list[int], stop: threading.Event | None, report: Report) -> None:
        """Deal ``todo`` (largest estimated partitions first: the last ones taken are the smallest, so the
        workers end together); relay the workers' reports and a stop request until every worker is done
        (has said so, or has died)."""
        self._deal(todo)
        taken: dict[int, int] = {}  # partition -> worker, until its outcome arrives
        ended: set[int] = set()  # partitions with an outcome
        done = self._done  # workers that take nothing more
        while len(done) < len(self.procs):
            if stop is not None and stop.is_set():
                self.halt.set()
            try:
                kind, i, detail = self.events.get(timeout=0.2)
            except Empty:
                if any(alive(p) for w, p in enumerate(self.procs) if w not in done):
                    continue
                break
            if kind == "ended":
                done.add(int(detail))  # type: ignore[call-overload]
                continue
            if kind == "taken":
                taken[i] = int(detail)  # type: ignore[call-overload]
                continue
            if kind != "chunk":
                taken.pop(i, None)
                ended.add(i)
            report(kind, i, detail)
        for i, w in taken.items():  # a worker that died took these with it
            report("failed", i, f"its worker process ended with exit code {self.procs[w].exitcode}")
            ended.add(i)
        died = {w: p.exitcode for w, p in enumerate(self.procs) if p.exitcode}
        if died:  # a partition no worker took is not "not started" (a stop's), but lost with them
            why = "worker processes ended " + ", ".join(f"{w} with exit code {c}" for w, c in died.items())
            for i in todo:
                if i not in ended:
                    report("failed", i, why)

    def close(self) -> None:
        """End the workers (at once where they were dealt nothing: the run failed before it began). One that
        said it is done is not waited for: its reports are in, and its exit (its devices' teardown) may
        overlap the run's collect; multiprocessing joins it at the latest when this process exits."""
        self._deal([])
        self.halt.set()
        for w, p in enumerate(self.procs):
            if w not in self._done:
                p.join()

    def _deal(self, todo: list[int]) -> None:
        if not self._dealt:
            self._dealt = True
            for i in todo:
                self.queue.put(i)
            for _ in self.groups:
                self.queue.put(None)


class _StateProgress:
    """The run's progress in states, not partitions: advanced after every chunk of every task, so its
    ETA counts down during long partitions too (checkpointed states count as done from the start)."""

    def __init__(self, progress: Progress, description: str, rows: dict[int, int], done: dict[int, int]):
        self.progress, self.rows, self.counted = progress, rows, dict(done)
        self.lock = threading.Lock()
        self.partitions = 0
        self.bar = progress.add_task(description, total=sum(rows.values()), completed=sum(done.values()),
                                     parts=f"0/{len(rows)}")

    def chunk(self, partition: int, states: int) -> None:
        with self.lock:
            self.counted[partition] += states
            self.progress.advance(self.bar, states)

    def finished(self, partition: int) -> None:
        """A partition is done: all its states count (chunks done before a restart included)."""
        with self.lock:
            self.progress.advance(self.bar, self.rows[partition] - self.counted[partition])
            self.counted[partition] = self.rows[partition]
            self.partitions += 1
            self.progress.update(self.bar, parts=f"{self.partitions}/{len(self.rows)}")



def run_local(layout: RunLayout, workers: int | None = None, options: TaskOptions | None = None,
              console: Console | None = None, show_progress: bool = True, stop: threading.Event | None = None,
              prepare: Callable[[], None] = lambda: None, shards: list[int] | None = None) -> LocalRunSummary:
    """Run the pending partitions (of ``shards``, None: all) on ``workers`` device groups (worker_groups;
    None: one per device); ``stop`` (set by a signal handler) ends each task after its chunk. ``prepare``
    runs first, while the workers' processes start and open their devices (`enumerate` writes its pool there: on 4 H100 the workers'
    start, 1-2 s, is then off the command's critical path)."""
    options = options or TaskOptions()
    options.validate()
    groups = worker_groups(options.device, workers)  # an unknown device is refused before anything starts
    processes = _WorkerProcesses(layout, options, groups) if len(groups) > 1 else None
    try:
        prepare()
        return _run_pending(layout, options, groups, processes, console or Console(stderr=True), show_progress, stop,
                            shards)
    finally:
        if processes is not None:
            processes.close()


def _run_pending(layout: RunLayout, options: TaskOptions, groups: list[tuple[int, ...]],
                 processes: _WorkerProcesses | None, console: Console, show_progress: bool,
                 stop: threading.Event | None, shards: list[int] | None) -> LocalRunSummary:
    manifest = load_manifest(layout)
    check_verification_options(layout, options.kernel, options.device)
    if options.kernel:
        check_kernel(manifest.problem, options.kernel, manifest.symmetry)
    scope = partition_scope(layout, manifest) if shards is None else sorted(set(shards))
    chosen = set(scope)
    scan = scan_results(layout, manifest)  # one scan: at 20,000 partitions each took 1-2 s here
    done = scan.done
    todo = [i for i in _pending(layout, manifest, done) if i in chosen]
    summary = LocalRunSummary(skipped=[i for i in scope if i not in todo])
    summary.claimed = claimed_elsewhere(layout, todo)  # being counted by another executor: left to it
    todo = [i for i in todo if i not in summary.claimed]
    rows = {i: manifest.partition(i).rows for i in todo}
    checkpointed = run_progress(layout, manifest, scan).partial
    t0 = time.perf_counter()
    columns = (TextColumn("[bold]{task.description}"), BarColumn(),
               TextColumn("{task.completed:,.0f}/{task.total:,.0f} states, {task.fields[parts]} partitions"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not show_progress, transient=False) as progress:
        bar = _StateProgress(progress, f"{manifest.problem} n={manifest.n}", rows,
                             {i: checkpointed.get(i, (0, 0))[0] for i in todo})

        def report(kind: str, i: int, detail: object) -> None:
            if kind == "chunk":
                bar.chunk(i, int(detail))  # type: ignore[call-overload]
            elif kind == "ran":
                summary.ran.append(i)
                bar.finished(i)
            elif kind == "interrupted":
                summary.interrupted.append(i)
            elif kind == "failed":
                summary.failed[i] = str(detail)
            elif kind == "refused":
                summary.refused[i] = detail  # type: ignore[assignment]
            elif kind == "claimed":
                summary.claimed[i] = str(detail)

        if processes is None:
            queue, lock = deque(todo), threading.Lock()

            def take() -> int | None:
                with lock:
                    return queue.popleft() if queue else None

            _work(layout, replace(options, only=groups[0]), take, stop, report)
        else:
            cost = {i: manifest.partition(i).estimated_cost or manifest.partition(i).rows for i in todo}
            processes.run(sorted(todo, key=lambda i: -cost[i]), stop, report)
    ended = (set(summary.ran) | set(summary.interrupted) | set(summary.failed) | set(summary.refused)
             | set(summary.claimed))
    if summary.claimed:
        console.print(left_to_others(summary.claimed), markup=False)
    summary.not_started = [i for i in todo if i not in ended]
    summary.seconds = time.perf_counter() - t0
    return summary
