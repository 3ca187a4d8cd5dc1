"""`permenum enumerate PROBLEM N`: pool + run + collect on this machine, in one command."""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from permenum.cli.common import err, layout, out
from permenum.cli.options import (COUNT_RENAMED, WORKERS_HELP, PROBLEM, Argument, Renaming, num_partitions_option,
                                  pool_options, task_options)
from permenum.cli.runner import print_collect, run_here, task_options as checked_options

if TYPE_CHECKING:
    from permenum.layout import RunLayout


@click.command(cls=Renaming, renamed={**COUNT_RENAMED, "--run-dir": "RUN"}, short_help="Pool, run and collect PROBLEM N here.")
@click.argument("problem", type=PROBLEM)
@click.argument("n", type=int)
@click.argument("run_dir", type=click.Path(file_okay=False), cls=Argument, required=False, metavar="[RUN]")
@num_partitions_option("How many partitions to cut the pool into (default: one per worker, fewer when the pool has "
                       "fewer states).", default=None)
@click.option("--workers", "-w", type=click.IntRange(min=1), default=None, help=WORKERS_HELP)
@task_options
@pool_options
def enumerate(problem: str, n: int, run_dir: str | None, partitions: int | None, workers: int | None,
              device: str | None, kernel: str | None, count_nodes: bool, chunk_seconds: float,
              target_states: int | None, seed: int, symmetry: str | None, balance: str) -> None:
    """Count every solution of PROBLEM (nqueens | costas) of size N on this machine: pool + run + collect, in the
    run directory RUN (kept) or a temporary one.

    Prints the total and checks it against the published count (exit 0 only when it is trusted). Without
    RUN the run is counted in a temporary directory, deleted only after a success: an interrupted or failed
    count keeps it, and says where (`permenum run` there resumes).
    """
    from concurrent.futures import ThreadPoolExecutor

    from permenum.cli.runner import WORKERS
    from permenum.jobs.counting.children import start_early
    from permenum.poolgen.write import PoolSettings, write_pool
    from permenum.solver.devices import select_devices
    from permenum.solver.opencl import open_if_alone

    t0 = time.perf_counter()
    options = checked_options(device, kernel, count_nodes, chunk_seconds)
    start_early([WORKERS])  # the workers' and devices' processes import while this one counts the devices
    tmp = None if run_dir else tempfile.mkdtemp(prefix=f"permenum-{problem}-{n}-")
    run = layout(run_dir or Path(tmp) / "run")  # type: ignore[arg-type]
    kept = False  # the temporary run outlives the command only when it holds unfinished work
    try:
        setup = ThreadPoolExecutor(1, thread_name_prefix="devices")
        chosen = setup.submit(select_devices, device)  # an unknown device fails before the run
        devices = setup.submit(open_if_alone, device)  # a lone device's context, while the pool is built
        setup.shutdown(wait=False)
        # a coarse pool (the pool's default target): each task refines its chunks to its device's grain
        # (jobs.counting.refine); one partition per worker: a partition pays its setup (verify, kernel builds) and
        # on a GPU ends in a launch tail, and chunks, not partitions, bound what a Ctrl-C loses
        # workers None (one per device): the device count is needed first when the partitions follow it
        groups = workers if workers is not None or partitions is not None else len(chosen.result())
        settings = PoolSettings(problem, n, partitions, target_states, seed=seed, symmetry=symmetry, balance=balance,
                                auto_partitions=groups or 1)
        settings.validate()
        if kernel:  # before the pool is built: an unknown kernel would fail every partition after it
            from permenum.solver.registry import check_kernel

            check_kernel(problem, kernel, settings.resolved_symmetry)
        devices.result()
        try:
            rc = run_here(run, workers, options, prepare=lambda: write_pool(run, settings))  # pool: while workers start
        except OSError:  # a full disk mid-run (exit 74): what the other partitions counted stays, and is named
            kept = _keep(run, tmp)
            raise
        if rc == 0:
            rc = print_collect(run, show_ledger=tmp is None)  # a temporary run is deleted below
        # Ctrl-C, USR1, a time limit's TERM (75), a failed partition or a count that does not check out: the
        # messages above name the run (resume, `status`), so it stays; deleting it lost what was counted
        kept = rc != 0 and _keep(run, tmp)
        out.print(f"whole command: {time.perf_counter() - t0:.2f} s")
        sys.exit(rc)
    finally:
        if tmp and not kept:
            shutil.rmtree(tmp, ignore_errors=True)


def _keep(run: RunLayout, tmp: str | None) -> bool:
    """Whether the temporary run outlives the command (it holds a pool, so work to resume), saying where."""
    if tmp is None or not run.manifest.exists():
        return False
    err.print(f"kept the run in {shlex.quote(str(run.root))}: enumerate deletes its temporary directory only "
              f"after a success; `rm -r {shlex.quote(str(tmp))}` when done with it", markup=False)
    return True
