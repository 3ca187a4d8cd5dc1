"""The local executor: run every partition that has no result yet, on this machine, with a progress bar.

Tasks run in-process on a thread pool (pyopencl releases the GIL while kernels run), sharing one
OpenCL context per device, so a run of many small partitions does not pay a process start each.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from permenum.errors import UserError
from permenum.jobs.task import TaskInterrupted, TaskResult, run_task
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.records import load_manifest, scan_results
from permenum.solver.devices import select_devices
from permenum.solver.registry import check_kernel


@dataclass
class LocalRunSummary:
    ran: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    interrupted: list[int] = field(default_factory=list)
    seconds: float = 0.0


def pending_partitions(layout: RunLayout) -> list[int]:
    """Partitions without a sound result (none, or a damaged one the task will move aside)."""
    manifest = load_manifest(layout)
    done = scan_results(layout, manifest).done
    return [i for i in range(manifest.num_partitions) if i not in done]


def _unless_stopped(stop: threading.Event | None, layout: RunLayout, partition: int, options: TaskOptions) -> TaskResult:
    """Start a queued partition only if no stop was requested meanwhile."""
    if stop is not None and stop.is_set():
        raise TaskInterrupted(partition, 0, 0)
    return run_task(layout, partition, options, stop)


def run_local(layout: RunLayout, workers: int = 1, options: TaskOptions | None = None, console: Console | None = None,
              show_progress: bool = True, stop: threading.Event | None = None) -> LocalRunSummary:
    """Run the pending partitions; ``stop`` (set by a signal handler) ends each after its chunk."""
    options = options or TaskOptions()
    if workers < 1:
        raise UserError(f"--workers must be at least 1 (got {workers})")
    options.validate()
    manifest = load_manifest(layout)
    select_devices(options.device)  # an unknown device or kernel is refused before anything starts
    if options.kernel:
        check_kernel(manifest.problem, options.kernel, manifest.symmetry)
    todo = pending_partitions(layout)
    summary = LocalRunSummary(skipped=[i for i in range(manifest.num_partitions) if i not in todo])
    rows = {i: manifest.partition(i).rows for i in todo}
    console = console or Console(stderr=True)
    t0 = time.perf_counter()
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("partitions  {task.fields[rate]:>10} states/s"), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not show_progress, transient=False) as progress:
        bar = progress.add_task(f"{manifest.problem} n={manifest.n}", total=len(todo), rate="-")
        states_done = 0
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures: dict[Future[TaskResult], int] = {
                pool.submit(_unless_stopped, stop, layout, i, options): i for i in todo
            }
            remaining = set(futures)
            while remaining:
                done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = futures[fut]
                    try:
                        fut.result()
                        summary.ran.append(i)
                        states_done += rows[i]
                    except TaskInterrupted:
                        summary.interrupted.append(i)
                        continue
                    except Exception as exc:  # one failed partition must not hide the others
                        summary.failed[i] = f"{type(exc).__name__}: {exc}"
                    elapsed = time.perf_counter() - t0
                    progress.update(bar, advance=1, rate=f"{states_done / elapsed:,.0f}" if elapsed > 0 else "-")
    summary.seconds = time.perf_counter() - t0
    return summary
