"""The cluster half of the `permenum` command: submit, status, resubmit, and `cluster up|down|status`.

Thin like cli.py: parse, call permenum.slurm, print. A failing SLURM command becomes a one-line UserError
(exit 2) naming the command, its exit code and SLURM's complaint.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from permenum.cli_options import task_options
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.slurm.script import DEFAULT_SIGNAL_SECONDS

if TYPE_CHECKING:
    from permenum.slurm.backend import Backend
    from permenum.slurm.status import StatusReport

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

#: `permenum cluster` keeps its daemons' state here unless --state-dir or $PERMENUM_CLUSTER_DIR says otherwise.
DEFAULT_CLUSTER_DIR = Path("~/.permenum/cluster")
#: Failure evidence lines shown per partition (newest first); --json has them all.
SHOWN_EVIDENCE = 3


@contextmanager
def slurm_errors() -> Iterator[None]:
    from permenum.slurm.cluster import ClusterError
    from permenum.slurm.commands import SlurmCommandError

    try:
        yield
    except SlurmCommandError as exc:
        hint = "" if os.environ.get("SLURM_CONF") else " (SLURM_CONF is not set: `permenum cluster up` prints it)"
        raise UserError(exc.summary() + hint) from None
    except ClusterError as exc:
        raise UserError(" | ".join(line for line in str(exc).splitlines() if line.strip())) from None


def _run_layout(run: str) -> RunLayout:
    layout = RunLayout(Path(run))
    if not layout.root.is_dir():
        raise UserError(f"{run}: no such run directory")
    return layout


def slurm_backend() -> tuple[Backend, str]:
    from permenum.slurm.backend import select_backend

    return select_backend()


@click.command()
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--throttle", "-T", type=int, default=None, help="At most T array tasks at once (--array=...%T).")
@click.option("--gpus-per-task", "-G", type=int, default=None, help="Request --gres=gpu:G for every task.")
@click.option("--time", "time_limit", default=None, help="Time limit per task, e.g. 01:30:00.")
@click.option("--partition", "slurm_partition", default=None, help="SLURM partition (queue) to submit to.")
@click.option("--account", default=None, help="SLURM account to charge.")
@click.option("--sbatch-arg", "sbatch_args", multiple=True,
              help="Extra sbatch option for the script, repeatable: --sbatch-arg=--mem=4G.")
@click.option("--signal-seconds", type=int, default=DEFAULT_SIGNAL_SECONDS, show_default=True,
              help="--signal=B:USR1@S: seconds before the time limit at which tasks checkpoint and requeue.")
@task_options
@click.option("--force", is_flag=True, help="Submit even while some partitions are still queued (those are skipped).")
@click.option("--dry-run", is_flag=True, help="Print the script; write and submit nothing.")
def submit(run: str, throttle: int | None, gpus_per_task: int | None, time_limit: str | None,
           slurm_partition: str | None, account: str | None, sbatch_args: tuple[str, ...], signal_seconds: int,
           device: str | None, kernel: str | None, count_nodes: bool, chunk_seconds: float, force: bool,
           dry_run: bool) -> None:
    """Render RUN/slurm/array.sbatch and submit one array job over every partition without a result.

    The task options (--device, --kernel, --count-nodes, --chunk-seconds) are those of `permenum task`
    and `run`, written into the script, so `resubmit` (which reuses it) keeps them.
    """
    from permenum.task_options import TaskOptions
    from permenum.records import load_manifest
    from permenum.slurm import submit as sub
    from permenum.slurm.script import SbatchOptions

    layout = _run_layout(run)
    options = SbatchOptions(throttle, gpus_per_task, time_limit, slurm_partition, account, tuple(sbatch_args),
                            signal_seconds, TaskOptions(device, kernel, count_nodes, chunk_seconds))
    if dry_run:
        click.echo(sub.render_script(layout, load_manifest(layout), options), nl=False)
        err.print(f"dry run: nothing written or submitted (the script would be {layout.sbatch_script})")
        return
    with slurm_errors():
        backend, note = slurm_backend()
        outcome, _ = sub.submit(layout, backend, options, force, note)
    out.print(outcome.message, markup=False)
    if outcome.submitted:
        out.print(f"script: {layout.sbatch_script}; logs: {layout.slurm_log_pattern}; "
                  f"follow with `permenum status {shlex.quote(str(layout.root))}`", markup=False)


@click.command()
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--include-missing", is_flag=True, help="Also submit partitions that never ran.")
@click.option("--force", is_flag=True, help="Submit even while other partitions are still pending or running.")
@click.option("--throttle", "-T", type=int, default=None, help="Default: the throttle of the latest submission.")
@click.option("--dry-run", is_flag=True, help="Say what would be submitted; submit nothing.")
def resubmit(run: str, include_missing: bool, force: bool, throttle: int | None, dry_run: bool) -> None:
    """Submit one array job over exactly the failed (and, if asked, missing) partitions."""
    from permenum.slurm import submit as sub

    layout = _run_layout(run)
    with slurm_errors():
        backend, note = slurm_backend()
        outcome, _ = sub.resubmit(layout, backend, include_missing, force, throttle, dry_run, note)
    out.print(outcome.message, markup=False)


@click.command()
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def status(run: str, as_json: bool) -> None:
    """Which partitions are done, running, pending, failed or missing (result files + SLURM's view).

    Exits 1 when a partition failed (`permenum resubmit` submits those), else 0.
    A run never submitted (no RUN/slurm/array.sbatch, no RUN/submissions.jsonl) is a local run: only its
    results, error records and checkpoints are read, and no scheduler is asked.
    """
    from permenum.slurm.status import gather, was_submitted

    layout = _run_layout(run)
    if layout.search_plan.exists():
        from permenum.cli_search import print_search_status

        print_search_status(layout, ask_scheduler=was_submitted(layout))
        return
    if was_submitted(layout):
        with slurm_errors():
            backend, note = slurm_backend()
            report = gather(layout, backend, note)
    else:
        report = gather(layout, None)
    if as_json:
        click.echo(json.dumps(report.as_json()))
    else:
        _print_status(report)
    if report.states["failed"]:
        sys.exit(1)


def _print_status(report: "StatusReport") -> None:
    from permenum.ranges import compact_ranges
    from permenum.slurm.status import NOT_ASKED, STATES

    who = f"jobs named {report.job_name}" if report.scheduler_asked else f"scheduler: {NOT_ASKED}"
    out.print(f"{report.run}: {report.num_partitions} partitions, {who}", markup=False)
    table = Table(box=None, show_header=True, pad_edge=False, header_style="bold")
    table.add_column("state")
    table.add_column("count", justify="right")
    table.add_column("partitions")
    colour = {"done": "green", "running": "cyan", "pending": "yellow", "failed": "red", "missing": "magenta"}
    for state in STATES:
        parts = report.states[state]
        jobs = report.queued_jobs.get(state)
        where = f"  (job {', '.join(map(str, jobs))})" if jobs else ""
        table.add_row(f"[{colour[state]}]{state}[/]", str(len(parts)), (compact_ranges(parts) or "-") + where)
    out.print(table)
    prog = report.progress
    if prog is not None:
        for i, (done, total) in sorted(prog.partial.items()):
            out.print(f"partition {i}: {done}/{total} states checkpointed ({100 * done / max(total, 1):.0f}%)", markup=False)
        idle = report.scheduler_asked and not report.queued
        eta = ("none: nothing is queued" if idle else "unknown" if prog.eta_seconds is None
               else f"{prog.eta_seconds:.0f} s")
        out.print(f"progress: {prog.states_done}/{prog.states_total} states "
                  f"({100 * prog.states_done / max(prog.states_total, 1):.1f}%), ETA {eta}", markup=False)
    for i in report.states["failed"]:
        why = report.evidence[i]
        more = f"; and {len(why) - SHOWN_EVIDENCE} older (see --json)" if len(why) > SHOWN_EVIDENCE else ""
        out.print(f"[red]failed {i}:[/red] " + escape("; ".join(why[:SHOWN_EVIDENCE]) + more))
        if i in report.logs:
            out.print(f"  log: {report.logs[i]}", markup=False)
    for note_line in report.notes:
        out.print(f"note: {note_line}", markup=False)
    out.print("sources: " + "; ".join(f"{k}: {v}" for k, v in report.sources.items()), markup=False)
    out.print(f"backend: {report.backend}", markup=False)


# --------------------------------------------------------------------------- cluster


def _state_dir(state_dir: str | None) -> Path:
    chosen = state_dir or os.environ.get("PERMENUM_CLUSTER_DIR") or str(DEFAULT_CLUSTER_DIR)
    return Path(chosen).expanduser().absolute()


_state_dir_option = click.option(
    "--state-dir", default=None, type=click.Path(file_okay=False),
    help=f"Where the cluster's config, logs and state live (default: $PERMENUM_CLUSTER_DIR or {DEFAULT_CLUSTER_DIR}).")


@click.group()
def cluster() -> None:
    """A private single-node SLURM cluster on this machine (munged, slurmctld, slurmd; needs root)."""


@cluster.command(name="up")
@_state_dir_option
@click.option("--cpus", type=click.IntRange(min=1), default=None, help="CPUs the node offers (default: all of this machine's).")
@click.option("--max-array-size", type=click.IntRange(min=1), default=1001, show_default=True,
              help="SLURM's MaxArraySize (array indices must be below it).")
def cluster_up(state_dir: str | None, cpus: int | None, max_array_size: int) -> None:
    """Start the daemons (installing slurm-wlm and munge if missing) and print the SLURM_CONF to export."""
    from permenum.slurm import cluster as c

    with slurm_errors():
        c.ensure_installed()
        info = c.up(_state_dir(state_dir), cpus, max_array_size)
    err.print(f"cluster up in {info.state_dir}; point SLURM's commands at it with:", markup=False)
    out.print(f"export SLURM_CONF={shlex.quote(str(info.conf_path))}", markup=False)


@cluster.command(name="down")
@_state_dir_option
def cluster_down(state_dir: str | None) -> None:
    """Stop the daemons this state dir started (by their recorded pids; nothing else is touched)."""
    from permenum.slurm import cluster as c

    with slurm_errors():
        c.down(_state_dir(state_dir))
    out.print(f"cluster in {_state_dir(state_dir)} is down", markup=False)


@cluster.command(name="status")
@_state_dir_option
def cluster_status(state_dir: str | None) -> None:
    """Which daemons are alive, and sinfo's view."""
    from permenum.slurm import cluster as c

    st = c.status(_state_dir(state_dir))
    alive = cast(dict[str, bool], st["alive"])
    out.print(f"{st['state_dir']}: " + ", ".join(f"{d} {'up' if up else 'down'}" for d, up in alive.items()),
              markup=False)
    if st["sinfo"]:
        out.print(str(st["sinfo"]).rstrip(), markup=False)
    if all(alive.values()):
        err.print("(`permenum cluster up` is idempotent: run it again to print the SLURM_CONF line)", markup=False)


def register(group: click.Group) -> None:
    """Add the SLURM commands to the `permenum` group."""
    for command in (submit, status, resubmit, cluster):
        group.add_command(command)
