"""`permenum status RUN`: which partitions are done, running, pending, failed or missing."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from permenum.cli.common import existing_run, out, ranges, shard_set, slurm_backend, slurm_errors
from permenum.cli.options import ONLY_RENAMED, Renaming, only_option
from permenum.cli.runner import conflicts_line, print_search_status
from permenum.errors import printable
from permenum.words import plural

if TYPE_CHECKING:
    from permenum.slurm.status import StatusReport

#: Failure evidence lines shown per partition (newest first); --json has them all.
SHOWN_EVIDENCE = 3


@click.command(cls=Renaming, renamed=ONLY_RENAMED, short_help="What is done, running, pending, failed, missing.")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@only_option("Also sum up these partitions (default: those `submit --only` was given here, if any)")
def status(run: str, as_json: bool, only: str | None) -> None:
    """Which partitions are done, running, pending, failed or missing (result files + SLURM's view).

    Exits 1 when a partition failed (`permenum resubmit` submits those), else 0.
    A run never submitted (no RUN/slurm/array.sbatch, no RUN/submissions.jsonl) is a local run: only its
    results, error records and checkpoints are read, and no scheduler is asked.
    """
    from permenum.records import load_manifest
    from permenum.slurm.status import gather, states_json, was_submitted
    from permenum.slurm.submissions import site_shards

    layout = existing_run(run)
    if layout.search_plan.exists():
        print_search_status(layout, ask_scheduler=was_submitted(layout))
        return
    chosen = shard_set(only, load_manifest(layout))
    if was_submitted(layout):
        with slurm_errors():
            backend, note = slurm_backend()
            report = gather(layout, backend, note)
            if chosen is None:
                chosen = site_shards(layout, backend.config().get("ClusterName") or None)
    else:
        report = gather(layout, None)
    if as_json:
        extra = {} if chosen is None else {"shards": ranges(chosen),
                                           "shard_states": states_json(report.states_within(chosen))}
        click.echo(json.dumps({**report.as_json(), **extra}))
    else:
        _print_status(report)
        if chosen is not None:
            out.print(f"partitions {ranges(chosen)} ({len(chosen)} of the pool's {report.num_partitions}): "
                      + ", ".join(f"{len(parts)} {state}" for state, parts in report.states_within(chosen).items()),
                      markup=False)
        conflicts = conflicts_line(layout)
        if conflicts:
            out.print(f"[red]conflict:[/red] {escape(conflicts)}")
    if report.states["failed"]:
        sys.exit(1)


def _print_status(report: "StatusReport") -> None:
    from permenum.slurm.status import NOT_ASKED, STATES

    who = f"jobs named {report.job_name}" if report.scheduler_asked else f"scheduler: {NOT_ASKED}"
    out.print(f"{report.run}: {plural(report.num_partitions, 'partition')}, {who}", markup=False)
    table = Table(box=None, show_header=True, pad_edge=False, header_style="bold")
    table.add_column("state")
    table.add_column("count", justify="right")
    table.add_column("partitions")
    colour = {"done": "green", "running": "cyan", "pending": "yellow", "failed": "red", "missing": "magenta"}
    for state in STATES:
        parts = report.states[state]
        jobs = report.queued_jobs.get(state)
        where = f"  (job {', '.join(map(str, jobs))})" if jobs else ""
        if state == "running" and report.local:  # live claims of `permenum run` or a `task` by hand
            where += "  (local)" if report.local == parts else f"  (local: {ranges(report.local)})"
        table.add_row(f"[{colour[state]}]{state}[/]", str(len(parts)), (ranges(parts) or "-") + where)
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
        out.print(f"[red]failed {i}:[/red] " + escape(printable("; ".join(why[:SHOWN_EVIDENCE]) + more)))
        if i in report.logs:
            out.print(f"  log: {printable(report.logs[i])}", markup=False)
    for note_line in report.notes:
        out.print(f"note: {printable(note_line)}", markup=False)
    out.print("sources: " + "; ".join(f"{k}: {v}" for k, v in report.sources.items()), markup=False)
    out.print(f"backend: {report.backend}", markup=False)
