"""`permenum search` (find one solution by multi-walk local search) and `permenum search-task` (one task of
a search run: what each SLURM array task executes). Thin: parse, call permenum.jobs.search, print."""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from permenum.cli.common import EXIT_INCOMPLETE, err, layout as run_layout, out, slurm_backend, slurm_errors
from permenum.cli.options import (DEVICE_HELP, PROBLEM, SBATCH_RENAMED, Argument, Renaming, in_existing_folder, index_option,
                                  sbatch_options)
from permenum.cli.runner import print_search_status
from permenum.errors import UserError

if TYPE_CHECKING:
    from permenum.jobs.counting.environment import StopRequest
    from permenum.jobs.search import Request
    from permenum.records import SearchResult

EXIT_NOT_FOUND = EXIT_INCOMPLETE


def _stop_on_signals(device: str | None, stop: "StopRequest | None" = None) -> threading.Event:
    """USR1/TERM/Ctrl-C stop the walks after their current launch (the device opened with the signals held;
    `search-task` gets the request main() installed before click parsed, so an early scancel counts too)."""
    from permenum.jobs.counting.environment import StopRequest
    from permenum.solver.opencl import open_first

    stop = stop or StopRequest(lambda line: err.print(line, markup=False))
    stop.around_device_start(lambda: open_first(device))
    return stop.event


def _report(result: "SearchResult", out_file: str | None) -> int:
    """Print a found solution as one line of rows (stdout) and what it took (stderr); or what was tried."""
    from permenum.records import write_search_result

    if out_file:
        write_search_result(Path(out_file), result)
    tried = f"{result.walks} walks, {result.iterations} iterations"
    if result.found:
        sys.stdout.write(" ".join(map(str, result.solution or [])) + "\n")
        err.print(f"{result.problem} n={result.n}: found by walk {result.walk} (seed {result.walk_seed}) after "
                  f"{result.iterations} iterations; {result.walks} walks, {result.seconds:.2f} s "
                  f"(kernels {result.kernel_seconds:.2f} s) on {result.device}; checked", markup=False)
        return 0
    err.print(f"{result.problem} n={result.n}: not found ({result.status}): {tried} per walk, lowest cost "
              f"{result.best}, {result.seconds:.2f} s on {result.device}", markup=False)
    return EXIT_NOT_FOUND


@click.command(cls=Renaming, renamed={"--run-dir": "RUN", **SBATCH_RENAMED}, short_help="Find one solution by local search.")
@click.argument("problem", type=PROBLEM)
@click.argument("n", type=int)
@click.option("--seed", type=click.IntRange(min=0, max=(1 << 64) - 1), default=0, show_default=True,
              help="Walk w of task t starts from seed + t * 2^32 + w: the same seed finds the same solution.")
@click.option("--walks", type=click.IntRange(min=1), default=None, help="Walks per task (default: what fills the device).")
@click.option("--device", "-d", default=None, help=DEVICE_HELP)
@click.option("--max-seconds", type=click.FloatRange(min=0), default=None, help="Give up after this long (exit 1).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None, callback=in_existing_folder,
              help="Write the result as JSON (problem, n, solution, seed, walks, iterations, seconds, device, ...).")
@click.argument("run_dir", type=click.Path(file_okay=False), cls=Argument, required=False, metavar="[RUN]")
@click.option("--tasks", type=click.IntRange(min=1), default=1, show_default=True,
              help="Tasks with disjoint seed ranges: local workers, or array tasks with --submit.")
@click.option("--submit", "to_slurm", is_flag=True, help="Submit the tasks as a SLURM array (needs RUN).")
@partial(sbatch_options, prefix="With --submit: ")
def search(problem: str, n: int, seed: int, walks: int | None, device: str | None, max_seconds: float | None,
           out_file: str | None, run_dir: str | None, tasks: int, to_slurm: bool, time_limit: str | None,
           slurm_partition: str | None, account: str | None, gpus_per_task: int | None, throttle: int | None,
           sbatch_args: tuple[str, ...]) -> None:
    """Find one solution of PROBLEM (costas | nqueens) of size N by many independent local-search walks; with RUN,
    kept as a run (search.json, one record per task, found.json).

    Prints the solution as one line of rows (0-based, column by column) after checking it with code
    independent of the kernels. Exit 0 when found, 1 when not (time limit or stopped), 2 on bad input.
    """
    from permenum.jobs.search import Request, check_request, create_run, run_local, search as run_search

    check_request(problem, n)
    request = Request(problem, n, seed, 0, walks, max_seconds, device)
    if to_slurm:
        sys.exit(_submit(request, tasks, run_dir, (time_limit, slurm_partition, account, gpus_per_task, throttle,
                                                   sbatch_args)))
    if run_dir is None and tasks == 1:
        stop = _stop_on_signals(device)
        sys.exit(_report(run_search(request, stop, progress=lambda line: err.print(line, markup=False)), out_file))
    tmp = None if run_dir else tempfile.mkdtemp(prefix=f"permenum-search-{problem}-{n}-")
    layout = run_layout(run_dir or Path(tmp) / "run")  # type: ignore[arg-type]
    try:
        create_run(layout, request, tasks)
        run_local(layout, _stop_on_signals(device), progress=lambda line: err.print(line, markup=False))
        rc = print_search_status(layout)
        if out_file and layout.search_found.exists():
            shutil.copyfile(layout.search_found, out_file)
        sys.exit(rc)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _submit(request: "Request", tasks: int, run_dir: str | None, sbatch: tuple[Any, ...]) -> int:
    from permenum.jobs.search import create_run
    from permenum.slurm.script import SbatchOptions
    from permenum.slurm.search import submit

    if run_dir is None:
        raise UserError("--submit needs the run directory RUN (on shared storage: every task writes its record there)")
    time_limit, partition, account, gpus, throttle, extra = sbatch
    options = SbatchOptions(throttle, gpus, time_limit, partition, account, tuple(extra))
    options.validate()
    layout = run_layout(run_dir)
    with slurm_errors():
        backend, _ = slurm_backend()
        plan = create_run(layout, request, tasks)
        submitted = submit(layout, plan, backend, options)
    out.print(f"submitted job {submitted.job_id}: {tasks} search tasks; follow with "
              f"`permenum status {shlex.quote(str(layout.root))}`", markup=False)
    return 0


@click.command(name="search-task", cls=Renaming, renamed={"--task": "--index", "-t": "--index"},
               short_help="One task of a search run (an array task).")
@click.argument("run", type=click.Path(file_okay=False))
@index_option("The task of the search run to execute: its number, 0-based (the array task's index).",
              click.IntRange(min=0))
@click.option("--device", "-d", default=None, help="Override the run's device for this task.")
@click.pass_obj
def search_task(early: "StopRequest | None", run: str, index: int, device: str | None) -> None:
    """One task of a search run (what each array task of `search --submit` executes).

    The first task to find writes RUN/found.json and cancels the rest of the array; a cancelled or
    stopped task writes what it tried. Exit 0 when it found or another task did, else 1.
    """
    from permenum.jobs.search import run_task
    from permenum.records import load_search_plan
    from permenum.slurm.search import cancel_others

    layout = run_layout(run)
    plan = load_search_plan(layout)
    stop = _stop_on_signals(device or plan.device, early)
    task = index
    result = run_task(layout, task, stop, lambda: err.print(cancel_others(plan, task), markup=False), device,
                      progress=lambda line: err.print(line, markup=False))
    rc = _report(result, None)
    sys.exit(0 if result.found or result.status == "cancelled" else rc)
