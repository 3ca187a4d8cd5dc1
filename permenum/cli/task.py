"""`permenum task RUN --index I`: one partition, what each SLURM array task executes; `permenum task RUN --only
LIST`: every partition of LIST without a result, one after another (a worker of `submit --workers`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from permenum.cli.common import err, existing_run, out
from permenum.cli.options import Renaming, index_option, only_option, task_options
from permenum.cli.runner import open_device, report_failures, task_options as checked_options
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.words import plural

if TYPE_CHECKING:
    from permenum.task_options import TaskOptions
    from permenum.jobs.counting.environment import StopRequest


@click.command(cls=Renaming, renamed={"--partition": "--index", "--shard": "--index"}, short_help="Count one partition (one array task).")
@click.argument("run", type=click.Path(file_okay=False))
@index_option("The partition to count: its number in the pool, 0-based (the array task's index).", click.INT,
              required=False)
@only_option("Instead of --index: count every partition of LIST that has no result, one after another, until none "
             "is left (what each task of `submit --workers` runs)")
@task_options
@click.option("--max-seconds", type=float, default=None,
              help="Checkpoint and stop (exit 75) once this attempt has run this long (at least one chunk).")
@click.option("--force", is_flag=True, help="Count a partition that already has a result again (kept as a duplicate).")
@click.pass_obj
def task(stop: "StopRequest | None", run: str, index: int | None, only: str | None, device: str | None,
         kernel: str | None, count_nodes: bool, chunk_seconds: float, max_seconds: float | None, force: bool) -> None:
    """Count one partition of RUN (what each SLURM array task executes) and write its result file; with --only,
    every partition of a list that has no result (what each task of `submit --workers` executes).

    On SIGUSR1/SIGTERM the task finishes its chunk, checkpoints and exits 75: after a time limit's
    warning or a preemption it requeues itself, after a user's scancel it stops for good; a restart
    resumes. A partition that is done already is not counted again unless --force.
    """
    from permenum.jobs.counting.environment import TaskEnvironment
    from permenum.jobs.counting.task import EXIT_INTERRUPTED, TaskInterrupted, run_task

    if (index is None) == (only is None):
        raise UserError("give the partition to count (--index I) or a list to count until none is left (--only LIST)")
    if index is not None and index < 0:
        raise UserError(f"--index must be non-negative (got {index})")
    if only is not None and force:
        raise UserError("--force counts one partition again (--index), not a list")
    options = checked_options(device, kernel, count_nodes, chunk_seconds, max_seconds)
    where = existing_run(run)
    partitions = None if only is None else _listed(where, only)
    if index is not None and not force and _already_done(where, index):
        return
    if stop is None:  # invoked without main() (click's test runner): no early handler was installed
        from permenum.jobs.counting.environment import StopRequest

        stop = StopRequest(err.print)
    if partitions is not None:
        from permenum.jobs.counting.children import start_early
        from permenum.cli.runner import WORKERS

        start_early([WORKERS])  # the workers' and devices' processes import while this one counts the devices (as `run`)
    stop.around_device_start(lambda: open_device(device))
    if partitions is not None:
        _count_list(where, partitions, options, stop)
        return
    assert index is not None
    try:
        done = run_task(where, index, options, stop.event, force=force)
    except TaskInterrupted as exc:
        err.print(f"{exc}; {TaskEnvironment.read().after_interrupt(stop.signum)}", markup=False)
        sys.exit(EXIT_INTERRUPTED)
    r = done.record
    out.print(f"partition {index}: {r.weighted} solutions from {plural(r.states, 'state')} in "
              f"{r.seconds.total:.2f} s (kernel {r.seconds.kernel:.2f} s) on {'; '.join(d.label for d in r.devices)} "
              f"[{done.status}, attempt {r.attempt}, resumed from state {r.resumed_from}]", markup=False)


def _listed(layout: RunLayout, only: str) -> list[int]:
    """The partitions of ``--only`` (each one of the pool's), refused in one line before a device opens."""
    from permenum.cli.common import shard_set
    from permenum.records import load_manifest

    return shard_set(only, load_manifest(layout)) or []


def _count_list(layout: RunLayout, partitions: list[int], options: "TaskOptions", stop: "StopRequest") -> None:
    """A worker of `submit --workers`: the local executor over the list, on the devices SLURM gave this task
    (one worker a GPU, each taking partitions under their claims until none is left; jobs.local), leaving out
    those that failed under this array already (a requeued worker does not fail them again: `resubmit`
    does). Stopped by a signal: exit 75 after the module's rule (requeue, or stop for good after scancel)."""
    from permenum.jobs.counting.environment import TaskEnvironment
    from permenum.jobs.local import run_local
    from permenum.ranges import compact_ranges
    from permenum.signals import EXIT_INTERRUPTED

    origin = TaskEnvironment.read().origin
    failed_here = _failed_under(layout, partitions, origin.slurm_array_job_id)
    todo = [p for p in partitions if p not in failed_here]
    summary = run_local(layout, None, options, console=err, stop=stop.event, shards=todo)
    left = f"; left to other executors: {compact_ranges(sorted(summary.claimed))}" if summary.claimed else ""
    out.print(f"worker: counted {plural(len(summary.ran), 'partition')}{left}", markup=False)
    if summary.interrupted or summary.not_started:
        err.print(f"worker stopped: {compact_ranges(summary.interrupted) or 'none'} checkpointed, "
                  f"{compact_ranges(summary.not_started) or 'none'} not started; "
                  f"{TaskEnvironment.read().after_interrupt(stop.signum)}", markup=False)
        sys.exit(EXIT_INTERRUPTED)
    report_failures(summary)
    if summary.failed or failed_here:
        sys.exit(1)


def _failed_under(layout: RunLayout, partitions: list[int], array_job: int | None) -> set[int]:
    """The partitions whose error record a task of ``array_job`` wrote (this worker array's, before a requeue)."""
    from permenum.records import read_failure

    if array_job is None:
        return set()
    recorded = layout.with_failure_file()
    out: set[int] = set()
    for p in partitions:
        if p in recorded:
            try:
                failure = read_failure(layout, p)
            except UserError:
                continue
            if failure is not None and failure.origin.slurm_array_job_id == array_job:
                out.add(p)
    return out


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
