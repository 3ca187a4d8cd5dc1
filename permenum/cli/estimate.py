"""`permenum estimate PROBLEM N [--device D] [--gpus G]`: device-hours of a full run, from a timed sample.

Parse, call permenum.jobs.estimate, print.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click
from rich.table import Table

from permenum.cli.common import out
from permenum.cli.options import KERNEL, KERNEL_HELP, PROBLEM, SYMMETRY, SYMMETRY_HELP, Renaming

if TYPE_CHECKING:
    from permenum.jobs.estimate import Estimate, Growth


def _hours(seconds: float) -> str:
    """Seconds as the unit a reader plans in: s, h, days or years."""
    if seconds < 600:
        return f"{seconds:.3g} s"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.2f} h"
    if seconds < 2 * 365 * 86400:
        return f"{seconds / 86400:.1f} days"
    return f"{seconds / (365.25 * 86400):.1f} years"


@click.command(cls=Renaming, renamed={"-G": "--gpus"}, short_help="Predict the device-hours of a full run.")
@click.argument("problem", type=PROBLEM)
@click.argument("n", type=int)
@click.option("--device", "-d", default=None, help="The device to measure: gpu | cpu | PLATFORM:DEVICE (the first of them).")
@click.option("--gpus", type=click.IntRange(min=1), default=1, show_default=True, metavar="G",
              help="Devices of this kind a run would use in all (as sbatch --gpus): the wall time is the device time "
                   "over G.")
@click.option("--sample-seconds", type=float, default=20.0, show_default=True,
              help="Kernel seconds of the timed sample.")
@click.option("--max-fraction", type=float, default=0.1, show_default=True,
              help="The sample counts at most this fraction of the estimated work, or more where that is "
                   "under half a second of kernel (shorter samples time noise).")
@click.option("--kernel", "-k", type=KERNEL, default=None, help=KERNEL_HELP)
@click.option("--symmetry", type=SYMMETRY, default=None, help=SYMMETRY_HELP)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the pool's cost walks and of the sample.")
@click.option("--project/--no-project", default=True, show_default=True,
              help="Also estimate the 3 sizes below N, fit their growth and project the record sizes above N "
                   "(N-Queens to 28, Costas to 30) on this device: each one's tree estimated on the host (seconds "
                   "a size) at the fitted seconds per estimated node.")
@click.option("--json", "as_json", is_flag=True, help="Print the estimate as JSON.")
def estimate(problem: str, n: int, device: str | None, gpus: int, sample_seconds: float, max_fraction: float,
             kernel: str | None, symmetry: str | None, seed: int, project: bool, as_json: bool) -> None:
    """Predict the device-hours of `enumerate PROBLEM N` (and the wall time on G devices) from a timed sample.

    The coarse pool's cost estimates are calibrated by counting a seeded random sample of its states on
    the device; nothing is written.
    """
    from permenum.jobs import estimate as est

    def estimate_at(size: int) -> "est.Estimate":
        return est.estimate(problem, size, device, sample_seconds, max_fraction, seed, kernel, symmetry)

    result = estimate_at(n)
    growth, below = est.growth(result, estimate_at) if project else (None, [])
    cost = est.cost_growth((*below, result)) if growth else None  # the same sizes as growth's: those that took time
    doubt = est.doubts(growth, cost, (*below, result)) if growth and cost else None
    if doubt:
        cost = None  # nothing is projected from an unreliable fit
    sizes = [m for m in est.PROJECTED.get(result.problem, ()) if m > n]
    projected = est.project(cost, sizes, lambda m: est.tree_nodes(problem, m, symmetry, seed)) if cost else []
    if as_json:
        _print_json(result, gpus, growth, below, cost, projected, doubt)
        return
    _print_estimate(result, gpus)
    if project:
        _print_growth(result, gpus, growth, below, cost, projected, doubt)


def _print_json(result: "Estimate", gpus: int, growth: "Growth | None", below: list["Estimate"], cost: "Growth | None",
                projected: list[tuple[int, float, float]], doubt: str | None) -> None:
    out.print_json(json.dumps({
        "problem": result.problem, "n": result.n, "symmetry": result.symmetry, "device": result.device,
        "pool_states": result.states, "pool_depth": result.depth, "estimated_nodes": result.estimated_total,
        "sample_blocks": len(result.blocks), "sample_states": sum(b.states for b in result.blocks),
        "sample_fraction": result.sampled_fraction, "sample_kernel_seconds": result.sample_seconds,
        "seconds_per_estimated_node": result.seconds_per_node, "device_seconds": result.device_seconds,
        "relative_error": result.relative_error, "gpus": gpus, "wall_seconds": result.device_seconds / gpus,
        "growth": None if growth is None else {  # None: --no-project, or too small a size to fit
            "device_seconds": {str(e.n): e.device_seconds for e in (*below, result)},
            "fitted_sizes": list(growth.sizes), "ratio_per_size": growth.ratio,
            "estimated_nodes": {str(e.n): e.estimated_total for e in (*below, result)},
            "seconds_per_estimated_node": {str(e.n): e.seconds_per_node for e in (*below, result)},
            # the drift a size of those seconds per node, fitted: what the projection carries (None: unreliable)
            "seconds_per_node_ratio_per_size": None if cost is None else cost.ratio},
        # each projected size: its tree's estimated nodes and their predicted kernel seconds ({} when unreliable)
        "projected_estimated_nodes": {str(k): nodes for k, nodes, _ in projected},
        "projected_device_seconds": {str(k): v for k, _, v in projected},
        "projection_unreliable": doubt,  # why the sizes above are not projected, None where nothing says so
        "blocks": [{"states": b.states, "estimated_nodes": b.estimated, "kernel_seconds": b.seconds}
                   for b in result.blocks],
    }))


def _print_estimate(result: "Estimate", gpus: int) -> None:
    """The pool, the sample and the prediction of size N."""
    out.print(f"{result.problem} {result.n} on {result.device} ({result.symmetry} symmetry)")
    out.print(f"pool: {result.states:,} states at depth {result.depth}, {result.estimated_total:.4g} estimated nodes")
    out.print(f"sample: {sum(b.states for b in result.blocks):,} states in {len(result.blocks)} blocks, "
              f"{result.sampled_fraction:.2%} of the estimated work, {result.sample_seconds:.2f} kernel s "
              f"({result.seconds_per_node:.3g} s per estimated node)")
    error = result.relative_error
    spread = "" if error is None else f" (+-{error:.0%}, one standard error of the sample)"
    out.print(f"predicted kernel time of a full run: {_hours(result.device_seconds)}"
              f" = {result.device_seconds / 3600:.4g} device-hours{spread}")
    if gpus > 1:
        out.print(f"wall on {gpus} such devices: {_hours(result.device_seconds / gpus)} (every device kept busy)")


def _print_growth(result: "Estimate", gpus: int, growth: "Growth | None", below: list["Estimate"],
                  cost: "Growth | None", projected: list[tuple[int, float, float]], doubt: str | None) -> None:
    """The sizes below N, their fitted growth, and the record sizes above N projected (jobs.estimate.project):
    none, and why, where the fit is not to be trusted (jobs.estimate.doubts)."""
    sizes = f"{result.problem} {below[0].n if below else result.n}-{result.n}"
    if growth is None:
        out.print(f"no projection: fewer than two of {sizes} took any kernel time")
        return
    out.print("predicted kernel time a size: " + ", ".join(f"{e.n}: {_hours(e.device_seconds)}" for e in (*below, result))
              + f"; fitted growth {growth.ratio:.2f}x a size")
    if doubt:
        out.print(f"no projection: unreliable, as {doubt}; estimate a larger N", markup=False)
        return
    if not projected or cost is None:
        return
    table = Table(title=f"projected on {result.device}: each size's estimated nodes at the seconds per node of "
                        f"{sizes} ({cost.ratio:.3f}x a size)")
    table.add_column("N", justify="right")
    table.add_column("estimated nodes", justify="right")
    table.add_column("device-hours", justify="right")
    table.add_column("kernel time", justify="right")
    if gpus > 1:
        table.add_column(f"wall on {gpus}", justify="right")
    for size, nodes, seconds in projected:
        row = [str(size), f"{nodes:.3e}", f"{seconds / 3600:.4g}", _hours(seconds)]
        table.add_row(*row, *([_hours(seconds / gpus)] if gpus > 1 else []))
    out.print(table)
