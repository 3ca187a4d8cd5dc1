"""How a run went: its total and checks, how evenly its work was spread, device throughput, and how well the
pool's cost estimates predicted the measured cost. Read from the ledger that `collect` rebuilds.

Balance and overhead are two numbers, not one: the pool's balance is the largest partition's kernel
seconds over the mean (1.00: every partition kept its device as long as the others), and a task's
overhead is what it spent besides the kernel (loading, building, writing). A run of short partitions
can have a perfect balance and a first task whose kernel build dominates its time.
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
from permenum.jobs.ledger.collect import Collected, collect
from permenum.jobs.ledger.evidence import CostasEvidence, run_evidence
from permenum.jobs.ledger.verify import Verified
from permenum.layout import RunLayout
from permenum.ranges import compact_ranges


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
    verified: Verified | None = None  # the run's verifications (`permenum verify`), where it has any
    evidence: CostasEvidence | None = None  # a finished Costas run's own evidence (jobs.ledger.evidence)

    @property
    def counted(self) -> str:
        """The total (or partial sum) with its classes, where the problem counts them."""
        c = self.collected
        return f"{c.total}" + ("" if c.classes is None else f", {c.classes} classes")

    @property
    def total_line(self) -> str:
        return f"{'total' if self.collected.complete else 'partial sum'} {self.counted}"

    @property
    def evidence_line(self) -> str | None:
        """The run's own evidence in words (Costas: arrays checked, classes x orbits, constructions), else None."""
        if self.evidence is None:
            return None
        return f"{'sound' if self.evidence.sound else 'NOT SOUND'}: {self.evidence.describe()}"

    @property
    def check(self) -> str:
        """The total's standing: partial, checked against the published count, or nothing to check it with."""
        c = self.collected
        if c.missing:
            return f"partial: no result for {compact_ranges(c.missing)}"
        if c.known_total is None:
            return "no published count to compare with"
        return "matches the published count" if c.matches else f"MISMATCH: the published count is {c.known_total}"

    @property
    def verified_share(self) -> str:
        """How much of the run an independent re-count agreed with, in words."""
        v = self.verified
        if v is None or not (v.checks or v.unreadable):
            return "no verifications"
        share = f"{len(v.agreeing)}/{v.partitions} partitions ({100 * v.fraction:.0f}%) re-counted in agreement"
        return share + (f"; DISAGREE: {compact_ranges(v.disagreeing)}" if v.disagreeing else "")

    @property
    def kernel_imbalance(self) -> float:
        """The largest partition's kernel seconds over the mean: the pool's balance (1.00 is perfect)."""
        kernel = [p.seconds_kernel for p in self.parts]
        mean = statistics.fmean(kernel)
        return max(kernel) / mean if mean > 0 else math.nan

    @property
    def overheads(self) -> list[float]:
        """Per partition, the task's seconds besides the kernel: loading, kernel builds, refining, writing."""
        return [max(p.seconds_total - p.seconds_kernel, 0.0) for p in self.parts]

    def largest_overhead(self) -> PartitionTime:
        return max(self.parts, key=lambda p: p.seconds_total - p.seconds_kernel)

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
    if not collected.counted:
        raise UserError(f"{layout.root} has no results yet: run its partitions first (`permenum run` or `permenum submit`)")
    rows = [r for r in collected.ledger.to_pylist() if r["counted"]]
    # one measure for every partition: nodes where all counted them, else kernel seconds for all
    unit = "nodes" if all(r.get("nodes") is not None for r in rows) else "kernel seconds"
    parts = [PartitionTime(int(r["partition"]), float(r["seconds_total"]), float(r["seconds_kernel"]), int(r["states"]),
                         float(r["solutions"]), r["estimated_nodes"],
                         float(r["nodes"]) if unit == "nodes" else float(r["seconds_kernel"]),
                         r["devices"] or "?", r["models"] or "?") for r in rows]
    assert collected.verified is not None, "collect compares the verifications"
    m = collected.manifest
    evidence = (run_evidence(layout, m.problem, m.n, collected.total, collected.classes) if collected.complete
                else None)
    return Report(collected, parts, unit, collected.verified, evidence)


#: The band within which an estimate counts as good (measured over estimated share), and its colours.
BAND = (0.8, 1.2)
INSIDE, OUTSIDE = "#55a868", "#c44e52"


def require_matplotlib() -> None:
    """Before any output: `report --plot` without matplotlib is one line, not a report and then a traceback."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError("--plot needs matplotlib, which permenum installs: pip install matplotlib") from None


def plot_format(path: Path) -> str:
    """The image format ``path``'s suffix names, one matplotlib writes (png, pdf, svg, jpg, ...); a suffix it does
    not know is refused in one line, before any work (PNG bytes went into a .txt)."""
    require_matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in formats:
        raise UserError(f"--plot {path}: name an image file, one of " + ", ".join(f".{f}" for f in sorted(formats)))
    return suffix


def plot_report(report: Report, path: Path) -> None:
    """Write the report as an image, in the format its suffix names (plot_format): a header with the total, its check and the verified share; kernel seconds
    per partition (the balance) beside each task's overhead; the estimates' error per partition; throughput
    per device. A panel is drawn only where it compares more than one bar (a one-bar panel says nothing a
    number does not): a one-partition run's header carries its two numbers instead."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m, c = report.collected.manifest, report.collected
    ratios = report.estimate_ratios()
    devices = report.devices()
    several = len(report.parts) > 1
    panels = (["kernel", "overhead"] if several else []) + (["estimates"] if len(ratios) > 1 else []) \
        + (["devices"] if len(devices) > 1 else [])
    size = (2 + 4.6 * len(panels), 5.4) if panels else (9, 1.4)
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=size, squeeze=False)
    ax = dict(zip(panels, axes[0]))
    good = c.complete and c.matches is not False
    worst = report.largest_overhead()
    numbers = (f"balance {report.kernel_imbalance:.2f} (largest kernel seconds / mean); overhead mean "
               f"{statistics.fmean(report.overheads):.2f} s, max {worst.seconds_total - worst.seconds_kernel:.2f} s "
               f"(partition {worst.partition})" if several else
               f"one partition: kernel {worst.seconds_kernel:.3g} s, overhead {report.overheads[0]:.3g} s")
    evidence = "" if report.evidence_line is None else textwrap.fill(f"evidence {report.evidence_line}", 150) + "\n"
    good = good and (report.evidence is None or report.evidence.sound)
    fig.suptitle(f"{m.problem} n={m.n}: {report.total_line} ({report.check})\n"
                 f"{len(report.parts)}/{m.num_partitions} partitions counted; verified: {report.verified_share}\n"
                 + evidence + numbers, fontsize=11, color="black" if good else OUTSIDE)
    if not panels:  # one partition on one device: the header says it all
        axes[0][0].set_axis_off()
    if several:
        _plot_per_partition(ax["kernel"], report, [p.seconds_kernel for p in report.parts], "#4c72b0",
                            f"kernel seconds per partition: balance {report.kernel_imbalance:.2f}")
        _plot_per_partition(ax["overhead"], report, report.overheads, "#999999",
                            "overhead: a task's seconds besides its kernel")
    if "estimates" in ax:
        _plot_estimates(ax["estimates"], report, ratios)
    if "devices" in ax:
        _plot_devices(ax["devices"], devices)
    fig.tight_layout()
    write_atomic(path, lambda tmp: fig.savefig(tmp, format=plot_format(path), dpi=110))
    plt.close(fig)


def _plot_per_partition(ax: Any, report: Report, values: list[float], colour: str, title: str) -> None:
    """One bar per partition in pool order (as the estimates panel), with the mean as a dashed line."""
    x = range(len(values))
    mean = statistics.fmean(values)
    ax.bar(x, values, color=colour)
    ax.axhline(mean, color="#333333", linestyle="--", linewidth=1, label=f"mean {mean:.3g} s, max {max(values):.3g} s")
    ax.set_title(title, fontsize=10)
    ax.set_ylabel("seconds")
    ax.set_xlabel("partition")
    if len(values) <= 48:
        ax.set_xticks(list(x), [str(p.partition) for p in report.parts], fontsize=8,
                      rotation=90 if len(values) > 24 else 0)
    ax.set_ylim(0, max(values) * 1.2 or 1)
    ax.legend(loc="upper right", fontsize=9)


def _plot_estimates(ax: Any, report: Report, ratios: dict[int, float]) -> None:
    """Per partition, measured over estimated cost (1 = as estimated), coloured by the band: readable
    whether the estimates differ or, under cost balancing, are all equal."""
    order = sorted(ratios)
    x = range(len(order))
    values = [ratios[i] for i in order]
    ax.axhspan(*BAND, color="#eeeeee", zorder=0)
    colours = [INSIDE if BAND[0] <= v <= BAND[1] else OUTSIDE for v in values]
    ax.bar(x, values, color=colours, edgecolor="black", linewidth=0.3)
    ax.axhline(1.0, color="#333333", linewidth=1)
    inside = sum(colour == INSIDE for colour in colours)
    r = report.cost_correlation()
    ax.set_title(f"measured / estimated cost: {inside}/{len(values)} within 20%"
                 + (f" (r = {r:.2f})" if r is not None else ""), fontsize=10)
    ax.set_xlabel("partition")
    ax.set_ylabel(f"share of {report.cost_unit} / share of estimate")
    if len(order) <= 48:
        ax.set_xticks(list(x), [str(i) for i in order], fontsize=8, rotation=90 if len(order) > 24 else 0)
    from matplotlib.patches import Patch

    ax.set_ylim(0, max(max(values), BAND[1]) * 1.25)
    ax.legend(handles=[Patch(color=INSIDE, label="within 20%"), Patch(color=OUTSIDE, label="outside")],
              loc="upper left", ncol=2, fontsize=9)


def _plot_devices(ax: Any, devices: list[DeviceThroughput]) -> None:
    from matplotlib.ticker import EngFormatter

    labels = [textwrap.fill(d.device, 24) for d in devices]
    ax.barh(labels, [d.states_per_s for d in devices], color="#8172b2")
    ax.set_title("throughput per device (kernel time)")
    ax.set_xlabel("states / s")
    ax.xaxis.set_major_formatter(EngFormatter())
    ax.locator_params(axis="x", nbins=4)
    ax.tick_params(axis="y", labelsize=8)
