"""How evenly a run's work was spread: per-partition times, imbalance, device throughput, and how well
the pool's cost estimates predicted the measured cost. Read from the ledger that `collect` rebuilds.

Imbalance is the slowest task's time over the mean task time (``seconds_total``: what a SLURM array
task or a local worker is busy for): 1.00 means every partition took as long as the average, and
the run's wall time on P devices is that factor above the ideal.
"""

from __future__ import annotations

import math
import statistics
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from permenum.atomic import write_atomic
from permenum.errors import UserError
from permenum.jobs.collect import Collected, collect
from permenum.layout import RunLayout


@dataclass(frozen=True)
class PartitionTime:
    partition: int
    seconds_total: float
    seconds_kernel: float
    states: int
    solutions: float  # weighted (what the partition's states stand for)
    estimated_cost: float | None
    measured_cost: float | None
    device: str
    model: str  # the devices' models (ledger column "models")


@dataclass(frozen=True)
class DeviceThroughput:
    device: str
    partitions: int
    states: int
    solutions: float
    kernel_seconds: float

    @property
    def states_per_s(self) -> float:
        return self.states / self.kernel_seconds if self.kernel_seconds > 0 else math.nan

    @property
    def solutions_per_s(self) -> float:
        return self.solutions / self.kernel_seconds if self.kernel_seconds > 0 else math.nan


@dataclass
class Report:
    collected: Collected
    parts: list[PartitionTime]
    cost_unit: str  # what measured_cost is: "nodes" (node-counting build) or "kernel seconds"

    @property
    def balance(self) -> str:
        return self.collected.manifest.generator.balance

    @property
    def seconds(self) -> list[float]:
        return [p.seconds_total for p in self.parts]

    @property
    def imbalance(self) -> float:
        """Slowest / mean task time."""
        return max(self.seconds) / statistics.fmean(self.seconds)

    @property
    def kernel_imbalance(self) -> float:
        kernel = [p.seconds_kernel for p in self.parts]
        mean = statistics.fmean(kernel)
        return max(kernel) / mean if mean > 0 else math.nan

    def devices(self, by_model: bool = False) -> list[DeviceThroughput]:
        """Throughput per device label (``P:D platform / name``), or per model: one row for every H100 of a
        cluster, whichever node and index it had."""
        by: dict[str, list[PartitionTime]] = {}
        for p in self.parts:
            by.setdefault(p.model if by_model else p.device, []).append(p)
        return [DeviceThroughput(d, len(ps), sum(p.states for p in ps), sum(p.solutions for p in ps),
                                 sum(p.seconds_kernel for p in ps)) for d, ps in sorted(by.items())]

    def cost_pairs(self) -> tuple[list[float], list[float]]:
        pairs = [(p.estimated_cost, p.measured_cost) for p in self.parts
                 if p.estimated_cost is not None and p.measured_cost is not None]
        return [e for e, _ in pairs], [m for _, m in pairs]

    def cost_correlation(self) -> float | None:
        """Pearson r of estimated vs measured cost over partitions; None where it means nothing (fewer
        than 3 partitions, or estimates equal to within 0.1%, as cost balancing makes them: r would measure noise)."""
        est, meas = self.cost_pairs()
        if len(est) < 3 or _cv(est) < 1e-3 or _cv(meas) == 0:
            return None
        return statistics.correlation(est, meas)

    def estimate_ratios(self) -> dict[int, float]:
        """Per partition: its share of the measured cost over its share of the estimated cost. 1.00 where
        the estimate was right, 1.30 where the partition cost 30% more than its estimate said. It means
        the same whether or not the estimates differ (under cost balancing they are all equal, and it is
        the partition's cost over the mean)."""
        pairs = [(p.partition, p.estimated_cost, p.measured_cost) for p in self.parts
                 if p.estimated_cost and p.estimated_cost > 0 and p.measured_cost is not None]
        est, meas = sum(e for _, e, _ in pairs), sum(m for _, _, m in pairs)
        if not pairs or meas <= 0:
            return {}
        return {i: (m / meas) / (e / est) for i, e, m in pairs}

    def worst_estimate(self) -> int | None:
        """The partition whose cost was furthest from its estimate (by factor, either way)."""
        ratios = self.estimate_ratios()
        return max(ratios, key=lambda i: abs(math.log(ratios[i])) if ratios[i] > 0 else math.inf, default=None)

    def cost_ratio_spread(self) -> float | None:
        """max / min of the estimate ratios: 1.00 when the estimates predict exactly (up to a constant)."""
        ratios = list(self.estimate_ratios().values())
        return max(ratios) / min(ratios) if ratios and min(ratios) > 0 else None


def _cv(values: list[float]) -> float:
    mean = statistics.fmean(values)
    return statistics.pstdev(values) / mean if mean else 0.0


def build_report(layout: RunLayout) -> Report:
    """Collect the run (rebuilding the ledger) and read the per-partition figures from the ledger."""
    collected = collect(layout)
    if not collected.records:
        raise UserError(f"{layout.root} has no results yet: run its partitions first (`permenum run` or `permenum submit`)")
    rows = [r for r in collected.ledger.to_pylist() if r["counted"]]
    # one measure for every partition: nodes where all counted them, else kernel seconds for all
    unit = "nodes" if all(r.get("nodes") is not None for r in rows) else "kernel seconds"
    parts = [PartitionTime(int(r["partition"]), float(r["seconds_total"]), float(r["seconds_kernel"]), int(r["states"]),
                         float(r["solutions"]), r["estimated_nodes"],
                         float(r["nodes"]) if unit == "nodes" else float(r["seconds_kernel"]),
                         r["devices"] or "?", r["models"] or "?") for r in rows]
    return Report(collected, parts, unit)


def plot_report(report: Report, path: Path) -> None:
    """Write the report as a PNG: sorted task times with the mean, estimated vs measured cost, throughput per device."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import EngFormatter
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'permenum[plot]'") from None
    m = report.collected.manifest
    fig, (ax_t, ax_c, ax_d) = plt.subplots(1, 3, figsize=(16, 5), gridspec_kw={"width_ratios": [2.2, 1.3, 1.2]})
    fig.suptitle(f"{m.problem} n={m.n}: {len(report.parts)}/{m.num_partitions} partitions, balanced by {report.balance}, "
                 f"slowest/mean task time {report.imbalance:.2f}", fontsize=13)

    parts = sorted(report.parts, key=lambda p: p.seconds_total, reverse=True)
    x = range(len(parts))
    kernel = [p.seconds_kernel for p in parts]
    other = [max(p.seconds_total - p.seconds_kernel, 0.0) for p in parts]
    ax_t.bar(x, kernel, color="#4c72b0", label="kernel")
    ax_t.bar(x, other, bottom=kernel, color="#c7d3e8", label="load, build, write")
    mean = statistics.fmean(report.seconds)
    ax_t.axhline(mean, color="#c44e52", linestyle="--", label=f"mean {mean:.2f} s")
    ax_t.annotate(f"{report.imbalance:.2f} x mean", (-0.4, parts[0].seconds_total), xytext=(0, 4),
                  textcoords="offset points", ha="left", fontsize=9, color="#c44e52")
    ax_t.margins(y=0.08)
    ax_t.set_title("task time per partition, slowest first")
    ax_t.set_ylabel("seconds")
    ax_t.set_xlabel("partition")
    if len(parts) <= 48:
        ax_t.set_xticks(list(x), [str(p.partition) for p in parts], fontsize=8, rotation=90 if len(parts) > 24 else 0)
    ax_t.legend(loc="lower left", fontsize=9)

    _plot_estimates(ax_c, report)

    devices = report.devices()
    labels = [textwrap.fill(d.device, 24) for d in devices]
    ax_d.barh(labels, [d.states_per_s for d in devices], color="#8172b2")
    for i, d in enumerate(devices):
        ax_d.text(d.states_per_s, i, f"{d.solutions_per_s:,.0f} solutions/s ", va="center", ha="right", fontsize=8,
                  color="white")
    ax_d.set_title("throughput per device (kernel time)")
    ax_d.set_xlabel("states / s")
    ax_d.xaxis.set_major_formatter(EngFormatter())
    ax_d.locator_params(axis="x", nbins=4)
    ax_d.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    write_atomic(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)


def _plot_estimates(ax: Any, report: Report) -> None:
    """Per partition, measured over estimated cost (1 = as estimated), with the +-20% band: readable
    whether the estimates differ or, under cost balancing, are all equal."""
    ratios = report.estimate_ratios()
    order = sorted(ratios)
    x = range(len(order))
    ax.axhspan(0.8, 1.2, color="#e5e5e5", label="within 20%")
    ax.bar(x, [ratios[i] for i in order], color="#55a868", edgecolor="black", linewidth=0.3)
    ax.axhline(1.0, color="#333333", linewidth=1)
    r = report.cost_correlation()
    worst = report.worst_estimate()
    ax.set_title("measured / estimated cost, per partition" + (f" (r = {r:.2f})" if r is not None else "")
                 + (f"\nworst: partition {worst}, {ratios[worst]:.2f}" if worst is not None else ""), fontsize=10)
    ax.set_xlabel("partition")
    ax.set_ylabel(f"share of {report.cost_unit} / share of estimate")
    if len(order) <= 48:
        ax.set_xticks(list(x), [str(i) for i in order], fontsize=8, rotation=90 if len(order) > 24 else 0)
    ax.legend(loc="lower right", fontsize=9)
