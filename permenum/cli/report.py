"""`permenum report RUN [--plot FILE.png]`: how a run went, as a table and a picture.

Parse, call permenum.jobs.ledger.report, print.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from permenum.cli.common import existing_run, out
from permenum.cli.options import in_existing_folder
from permenum.cli.runner import conflicts_line
from permenum.errors import printable

if TYPE_CHECKING:
    from permenum.jobs.ledger.report import Report


@click.command(short_help="How a run went: total, checks, balance, a PNG.")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None, callback=in_existing_folder,
              help="Also write a PNG: the total and its checks, kernel seconds and overhead per partition, the "
                   "estimates' error per partition, throughput per device.")
@click.option("--by-model", is_flag=True, help="Throughput per device model (every H100 of the cluster in one row), "
              "not per device.")
def report(run: str, plot_file: str | None, by_model: bool) -> None:
    """How RUN went: its total and checks, the verified share, balance (kernel seconds per partition) beside
    task overhead, device throughput, and estimated vs measured cost."""
    from permenum.jobs.ledger.collect import spread
    from permenum.jobs.ledger.report import build_report, plot_format, plot_report

    if plot_file:
        plot_format(Path(plot_file))  # refused before any work
    where = existing_run(run)
    rep = build_report(where)
    c, m = rep.collected, rep.collected.manifest
    lo, med, hi = spread(rep.seconds)
    summary = Table(title=f"{m.problem} n={m.n}: run {m.run_id}, {rep.total_line}", show_header=False,
                    title_justify="left")
    summary.add_column(style="bold")
    summary.add_column()
    summary.add_row("partitions", f"{len(rep.parts)}/{m.num_partitions} counted, balanced by {rep.balance}")
    summary.add_row("total" if c.complete else "partial sum", f"{rep.counted} ({rep.check})")
    if rep.evidence_line is not None:
        summary.add_row("evidence", escape(rep.evidence_line))
    summary.add_row("verified", rep.verified_share if rep.verified_share != "no verifications"
                    else "no verifications (`permenum verify RUN --sample F`)")
    summary.add_row("balance", f"{rep.kernel_imbalance:.3f}: the largest partition's kernel seconds over the mean")
    conflicts = conflicts_line(where)
    if conflicts:
        summary.add_row("[red]conflict[/red]", escape(conflicts))
    worst = rep.largest_overhead()
    summary.add_row("overhead", f"mean {statistics.fmean(rep.overheads):.3f} s, max "
                    f"{worst.seconds_total - worst.seconds_kernel:.3f} s (partition {worst.partition}) a task besides "
                    "its kernel: loading, kernel builds, writing")
    summary.add_row("task time", f"min {lo:.3f} / median {med:.3f} / max {hi:.3f} s; slowest / mean "
                    f"{rep.imbalance:.3f}")
    summary.add_row("estimated vs measured", _estimates_line(rep))
    source = "node-counting build" if rep.cost_unit == "nodes" else "no node counts"
    summary.add_row("measured cost", f"{rep.cost_unit} ({source})")
    out.print(summary)
    devices = Table(title=f"throughput per {'model' if by_model else 'device'} (kernel time)", title_justify="left")
    devices.add_column("model" if by_model else "device", overflow="fold", max_width=36 if by_model else 60)  # a device: its bus id too
    for name in ("partitions", "states", "kernel s", "states/s", "solutions/s"):
        devices.add_column(name, justify="right")
    for d in rep.devices(by_model):
        devices.add_row(escape(printable(d.device)), str(d.partitions), f"{d.states:,}", f"{d.kernel_seconds:.2f}",
                        f"{d.states_per_s:,.0f}", f"{d.solutions_per_s:,.0f}")
    out.print(devices)
    if plot_file:
        plot_report(rep, Path(plot_file))
        out.print(f"plot: {plot_file}", markup=False)


def _estimates_line(rep: "Report") -> str:
    """How good the cost estimates were, per partition: measured over estimated share, and the worst."""
    ratios = rep.estimate_ratios()
    if not ratios:
        return "n/a (no estimates or no measured cost)"
    worst = rep.worst_estimate()
    assert worst is not None
    within = sum(0.8 <= v <= 1.2 for v in ratios.values())
    r = rep.cost_correlation()
    return (f"measured/estimated per partition min {min(ratios.values()):.2f} / median "
            f"{statistics.median(ratios.values()):.2f} / max {max(ratios.values()):.2f}; {within}/{len(ratios)} within "
            f"20%; worst partition {worst} ({ratios[worst]:.2f})" + ("" if r is None else f"; Pearson r {r:.2f}"))
