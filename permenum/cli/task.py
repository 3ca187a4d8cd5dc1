"""`permenum task RUN --index I`: one partition, what each SLURM array task executes."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from permenum.cli.common import err, existing_run, out
from permenum.cli.options import Renaming, index_option, task_options
from permenum.cli.runner import open_device, task_options as checked_options
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.words import plural

if TYPE_CHECKING:
    from permenum.jobs.environment import StopRequest


@click.command(cls=Renaming, renamed={"--partition": "--index", "--shard": "--index"}, short_help="Count one partition (one array task).")
@click.argument("run", type=click.Path(file_okay=False))
@index_option("The partition to count: its number in the pool, 0-based (the array task's index).", click.INT)
@task_options
@click.option("--max-seconds", type=float, default=None,
              help="Checkpoint and stop (exit 75) once this attempt has run this long (at least one chunk).")
@click.option("--force", is_flag=True, help="Count a partition that already has a result again (kept as a duplicate).")
@click.pass_obj
def task(stop: "StopRequest | None", run: str, index: int, device: str | None, kernel: str | None, count_nodes: bool,
         chunk_seconds: float, max_seconds: float | None, force: bool) -> None:
    """Count one partition of RUN (what each SLURM array task executes) and write its result file.

    On SIGUSR1/SIGTERM the task finishes its chunk, checkpoints and exits 75: after a time limit's
    warning or a preemption it requeues itself, after a user's scancel it stops for good; a restart
    resumes. A partition that is done already is not counted again unless --force.
    """
    from permenum.jobs.environment import TaskEnvironment
    from permenum.jobs.task import EXIT_INTERRUPTED, TaskInterrupted, run_task

    partition = index
    if partition < 0:
        raise UserError(f"--index must be non-negative (got {partition})")
    options = checked_options(device, kernel, count_nodes, chunk_seconds, max_seconds)
    where = existing_run(run)
    if not force and _already_done(where, partition):
        return
    if stop is None:  # invoked without main() (click's test runner): no early handler was installed
        from permenum.jobs.environment import StopRequest

        stop = StopRequest(err.print)
    stop.around_device_start(lambda: open_device(device))
    try:
        done = run_task(where, partition, options, stop.event, force=force)
    except TaskInterrupted as exc:
        err.print(f"{exc}; {TaskEnvironment.read().after_interrupt(stop.signum)}", markup=False)
        sys.exit(EXIT_INTERRUPTED)
    r = done.record
    out.print(f"partition {partition}: {r.weighted} solutions from {plural(r.states, 'state')} in "
              f"{r.seconds.total:.2f} s (kernel {r.seconds.kernel:.2f} s) on {'; '.join(d.label for d in r.devices)} "
              f"[{done.status}, attempt {r.attempt}, resumed from state {r.resumed_from}]", markup=False)


def _already_done(layout: RunLayout, partition: int) -> bool:
    """A partition with a sound result is not counted again (no work done twice): say so, exit 0."""
    from permenum.records import load_manifest, sound_result

    try:
        record = sound_result(layout, load_manifest(layout), partition)
    except UserError:
        return False  # no such partition (the task says so) or a damaged result (the task replaces it)
    if record is not None:
        out.print(f"partition {partition} is done already: {record.weighted} solutions, attempt {record.attempt} "
                  f"({layout.result_file(partition)}); nothing to do (--force counts it again)", markup=False)
    return record is not None
