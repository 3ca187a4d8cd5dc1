"""`permenum run RUN`: every partition without a result, on this machine (the local executor)."""

from __future__ import annotations

import shlex
import sys

import click

from permenum.cli.common import existing_run, out
from permenum.cli.options import WORKERS_HELP, task_options
from permenum.cli.runner import run_here, task_options as checked_options

@click.command(name="run", short_help="Count every partition without a result, here.")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--workers", "-w", type=click.IntRange(min=1), default=None, help=WORKERS_HELP)
@task_options
def run_cmd(run: str, workers: int | None, device: str | None, kernel: str | None, count_nodes: bool,
            chunk_seconds: float) -> None:
    """Count every partition of RUN that has no result yet, on this machine (the local executor).

    Ctrl-C stops every task after its current chunk, with a checkpoint; running again resumes.
    """
    where = existing_run(run)
    rc = run_here(where, workers, checked_options(device, kernel, count_nodes, chunk_seconds))
    if rc == 0:
        quoted = shlex.quote(run)
        out.print(f"every partition is counted; next: `permenum collect {quoted}` (the total, checked), then "
                  f"`permenum verify {quoted} --sample 0.1` and `permenum report {quoted}`", markup=False)
    sys.exit(rc)
