"""The local executor: run every partition that has no result yet, on this machine, with a progress bar.

Tasks run in-process on a thread pool (pyopencl releases the GIL while kernels run), sharing one
OpenCL context per device, so a run of many small partitions does not pay a process start each.
``workers`` tasks hand out chunks at once; a task whose devices all hold their last chunk lets the
next one start, so that its load, refinement and first upload overlap those last launches (one batch
counts at a time on a device: solver.opencl.DeviceContext.launching) and the devices do not idle
between partitions. Each task starts at the rates its predecessors measured (jobs.schedule.RateBook).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from permenum.checkpoints.progress import run_progress
from permenum.errors import UserError
from permenum.jobs.schedule import RateBook
from permenum.jobs.task import TaskInterrupted, TaskResult, run_task
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.records import check_verification_options, load_manifest, partition_scope, scan_results
from permenum.solver.devices import select_devices
from permenum.solver.registry import check_kernel


@dataclass
class LocalRunSummary:
    ran: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    interrupted: list[int] = field(default_factory=list)  # stopped with a checkpoint
    not_started: list[int] = field(default_factory=list)  # a stop came before their turn
    seconds: float = 0.0


def pending_partitions(layout: RunLayout) -> list[int]:
    """Partitions (of the run's scope) without a sound result (none, or a damaged one the task will move aside)."""
    manifest = load_manifest(layout)
    done = scan_results(layout, manifest).done
    return [i for i in partition_scope(layout, manifest) if i not in done]


#: Tasks alive beyond ``workers``: drained ones counting their last chunks and the next ones preparing.
#: On an H100, 64 N-Queens 22 partitions of 1.65 s of kernel each are bound by the host's refinement
#: (each refines 586 states to 4.5 M at depth 8 on 16 threads); a second task preparing helps where the
#: host is short (4 refining threads: 0.79 of the kernel rate against 0.72 with one) and costs nothing
#: where it is not (16 threads: 0.846 against 0.847).
PREPARED_AHEAD = 2


class _Handout:
    """At most ``workers`` tasks handing out chunks: a task holds a turn from its start until its devices
    hold their last chunks (or it ends), then the next task in line takes it."""

    def __init__(self, workers: int, stop: threading.Event | None, rates: RateBook) -> None:
        self.turns, self.stop, self.rates = threading.Semaphore(workers), stop, rates

    def run(self, layout: RunLayout, partition: int, options: TaskOptions,
            on_chunk: Callable[[int], None]) -> TaskResult | None:
        """Start a queued partition in its turn, only if no stop was requested meanwhile (None: not started)."""
        self.turns.acquire()
        given = threading.Lock()  # taken by the first give_turn: the turn goes back once

        def give_turn() -> None:
            if given.acquire(blocking=False):
                self.turns.release()

        try:
            if self.stop is not None and self.stop.is_set():
                return None
            return run_task(layout, partition, options, self.stop, on_chunk, self.rates, give_turn)
        finally:
            give_turn()


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


def run_local(layout: RunLayout, workers: int = 1, options: TaskOptions | None = None, console: Console | None = None,
              show_progress: bool = True, stop: threading.Event | None = None) -> LocalRunSummary:
    """Run the pending partitions; ``stop`` (set by a signal handler) ends each after its chunk."""
    options = options or TaskOptions()
    if workers < 1:
        raise UserError(f"--workers must be at least 1 (got {workers})")
    options.validate()
    manifest = load_manifest(layout)
    check_verification_options(layout, options.kernel, options.device)
    select_devices(options.device)  # an unknown device or kernel is refused before anything starts
    if options.kernel:
        check_kernel(manifest.problem, options.kernel, manifest.symmetry)
    todo = pending_partitions(layout)
    summary = LocalRunSummary(skipped=[i for i in partition_scope(layout, manifest) if i not in todo])
    rows = {i: manifest.partition(i).rows for i in todo}
    checkpointed = run_progress(layout, manifest).partial
    console = console or Console(stderr=True)
    t0 = time.perf_counter()
    columns = (TextColumn("[bold]{task.description}"), BarColumn(),
               TextColumn("{task.completed:,.0f}/{task.total:,.0f} states, {task.fields[parts]} partitions"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not show_progress, transient=False) as progress:
        bar = _StateProgress(progress, f"{manifest.problem} n={manifest.n}", rows,
                             {i: checkpointed.get(i, (0, 0))[0] for i in todo})
        handout = _Handout(workers, stop, RateBook())
        with ThreadPoolExecutor(max_workers=workers + PREPARED_AHEAD) as pool:
            futures: dict[Future[TaskResult | None], int] = {
                pool.submit(handout.run, layout, i, options, partial(bar.chunk, i)): i for i in todo
            }
            remaining = set(futures)
            while remaining:
                done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = futures[fut]
                    try:
                        if fut.result() is None:
                            summary.not_started.append(i)
                            continue
                        summary.ran.append(i)
                        bar.finished(i)
                    except TaskInterrupted:
                        summary.interrupted.append(i)
                    except Exception as exc:  # one failed partition must not hide the others
                        summary.failed[i] = f"{type(exc).__name__}: {exc}"
    summary.seconds = time.perf_counter() - t0
    return summary
