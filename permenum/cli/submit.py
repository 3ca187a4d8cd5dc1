"""`permenum submit RUN` and `permenum resubmit RUN`: the run's partitions as SLURM array jobs.

A failing SLURM command becomes one line (exit 2) naming the command, its exit code and SLURM's complaint.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from permenum.errors import UserError
from permenum.cli.common import err, existing_run, out, shard_set, slurm_backend, slurm_errors
from permenum.cli.options import ONLY_RENAMED, SBATCH_RENAMED, Renaming, only_option, sbatch_options, task_options
from permenum.slurm.script import DEFAULT_SIGNAL_SECONDS

if TYPE_CHECKING:
    from permenum.layout import RunLayout
    from permenum.slurm.script import SbatchOptions


@click.command(cls=Renaming, renamed={**ONLY_RENAMED, **SBATCH_RENAMED},
               short_help="Submit the partitions without a result to SLURM.")
@click.argument("run", type=click.Path(file_okay=False))
@sbatch_options
@click.option("--signal-seconds", type=int, default=DEFAULT_SIGNAL_SECONDS, show_default=True,
              help="--signal=B:USR1@S: seconds before the time limit at which tasks checkpoint and requeue.")
@task_options
@only_option("Submit only these partitions")
@click.option("--workers", "-w", type=int, default=None, metavar="W",
              help="An array of W tasks, each counting the partitions one after another until none is left (one "
                   "process start a task, not one a partition: for short partitions); default one task a partition.")
@click.option("--force", is_flag=True, help="Submit even while some partitions are still queued (those are skipped).")
@click.option("--dry-run", is_flag=True,
              help="Print the script, and the sbatch commands the submission would run; write and submit nothing.")
def submit(run: str, throttle: int | None, gpus_per_task: int | None, time_limit: str | None,
           slurm_partition: str | None, account: str | None, sbatch_args: tuple[str, ...], signal_seconds: int,
           device: str | None, kernel: str | None, count_nodes: bool, chunk_seconds: float, only: str | None,
           workers: int | None, force: bool, dry_run: bool) -> None:
    """Render RUN/slurm/array.sbatch and submit one array job (several past MaxArraySize) over every partition
    without a result.

    The task options (--device, --kernel, --count-nodes, --chunk-seconds) are those of `permenum task`
    and `run`, written into the script, so `resubmit` (which reuses it) keeps them.
    """
    from permenum.records import check_verification_options, load_manifest
    from permenum.slurm import submit as sub
    from permenum.slurm.script import SbatchOptions
    from permenum.task_options import TaskOptions

    layout = existing_run(run)
    manifest = load_manifest(layout)
    chosen = shard_set(only, manifest)
    options = SbatchOptions(throttle, gpus_per_task, time_limit, slurm_partition, account, tuple(sbatch_args),
                            signal_seconds, TaskOptions(device, kernel, count_nodes, chunk_seconds), workers)
    # what every task would fail on (a bad --device or --kernel) is refused before SLURM is asked anything:
    # where SLURM is unreachable, its complaint would otherwise hide the user's mistake
    check_verification_options(layout, kernel, device)
    script = sub.render_script(layout, manifest, options)
    if dry_run:
        said = _dry_run(layout, options, force, chosen)
        click.echo(script, nl=False)
        err.print(said, markup=False)
        err.print(f"dry run: nothing written or submitted (the script would be {layout.sbatch_script})")
        return
    with slurm_errors():
        backend, note = slurm_backend()
        outcome, _ = sub.submit(layout, backend, options, force, note, chosen)
    out.print(outcome.message, markup=False)
    if outcome.submitted:
        out.print(f"script: {layout.sbatch_script}; logs: {layout.slurm_log_pattern}; "
                  f"follow with `permenum status {shlex.quote(str(layout.root))}`", markup=False)


def _dry_run(layout: "RunLayout", options: "SbatchOptions", force: bool, chosen: list[int] | None) -> str:
    """The sbatch commands the submission would run (the arrays past MaxArraySize, with their offsets), as
    SLURM tells what to submit; where SLURM cannot be asked, a line saying so (the script is still shown)."""
    from permenum.slurm import submit as sub
    from permenum.slurm.commands import SlurmCommandError

    try:
        backend, note = slurm_backend()
        outcome, _ = sub.submit(layout, backend, options, force, note, chosen, dry_run=True)
    except SlurmCommandError as exc:
        return (f"dry run: SLURM could not be asked which partitions to submit and its MaxArraySize, so the "
                f"sbatch commands are not shown: {exc.summary()}")
    except UserError as exc:  # the real submit would refuse (partitions queued, a busy run): the script still shows
        return f"dry run: the submission would be refused: {exc}"
    return outcome.message


@click.command(cls=Renaming, renamed={**ONLY_RENAMED, **SBATCH_RENAMED},
               short_help="Submit the failed (or missing) partitions again.")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--include-missing", is_flag=True, help="Also submit partitions that never ran.")
@click.option("--force", is_flag=True, help="Submit even while other partitions are still pending or running.")
@click.option("--throttle", type=int, default=None, metavar="T",
              help="At most T array tasks at once (default: the throttle of the latest submission).")
@click.option("--dry-run", is_flag=True, help="Say what would be submitted; submit nothing.")
@only_option("Resubmit only within these partitions (default: those `submit --only` was given here, if any)")
def resubmit(run: str, include_missing: bool, force: bool, throttle: int | None, dry_run: bool,
             only: str | None) -> None:
    """Submit one array job over exactly the failed (and, if asked, missing) partitions of RUN, with the script
    and options of the latest submission (a task resumes from its checkpoint)."""
    from permenum.records import load_manifest
    from permenum.slurm import submit as sub

    layout = existing_run(run)
    chosen = shard_set(only, load_manifest(layout))
    with slurm_errors():
        backend, note = slurm_backend()
        outcome, _ = sub.resubmit(layout, backend, include_missing, force, throttle, dry_run, note, chosen)
    out.print(outcome.message, markup=False)
