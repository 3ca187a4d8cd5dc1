"""`permenum run RUN`: every partition without a result, on this machine (the local executor)."""

from __future__ import annotations

import shlex
import sys

import click

from permenum.cli.common import existing_run, out, shard_set
from permenum.cli.options import ONLY_RENAMED, WORKERS_HELP, Renaming, only_option, task_options
from permenum.cli.runner import run_here, task_options as checked_options

@click.command(name="run", cls=Renaming, renamed=ONLY_RENAMED, short_help="Count every partition without a result, here.")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--workers", "-w", type=click.IntRange(min=1), default=None, help=WORKERS_HELP)
@task_options
@only_option("Count only these partitions")
def run_cmd(run: str, workers: int | None, device: str | None, kernel: str | None, count_nodes: bool,
            chunk_seconds: float, only: str | None) -> None:
    """Count every partition of RUN that has no result yet, on this machine (the local executor).

    Ctrl-C stops every task after its current chunk, with a checkpoint; running again resumes.
    """
    from permenum.records import load_manifest

    where = existing_run(run)
    chosen = shard_set(only, load_manifest(where))
    rc = run_here(where, workers, checked_options(device, kernel, count_nodes, chunk_seconds), shards=chosen)
    if rc == 0 and chosen is not None:
        out.print(f"partitions {only} are counted; the others are another site's: bring their results home with "
                  f"`permenum merge {shlex.quote(run)} OTHER_COPY`", markup=False)
    elif rc == 0:
        quoted = shlex.quote(run)
        out.print(f"every partition is counted; next: `permenum collect {quoted}` (the total, checked), then "
                  f"`permenum verify {quoted} --sample 0.1` and `permenum report {quoted}`", markup=False)
    sys.exit(rc)
