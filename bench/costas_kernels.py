"""Costas kernel variants side by side: one launch over an in-memory pool each, every array checked.

    python bench/costas_kernels.py --device gpu --orders 16 17 18 19 20 --variants fc cf --nodes --target 1048576

No files, no chunks: this isolates the kernel (bench/bench.py times the whole flow). cf and mid run on a pool of
the centre mode (its own states), the others on one of ``--symmetry``; nodes are counted alike (1 + the
placements below a state that forward checking lets live), so their ratio is the search's. Every row's arrays
are checked by the host (permenum.problems.costas: each one a Costas array, classes counted at their
representatives) and its total compared with the published count. ``--nodes`` adds a node-counting
launch (a separate build) for each row. The last line gives the ratio of kernel seconds from order to
order (the fastest variant's rows) and projects orders 28-30 on the device that ran it by their fitted
growth (bench/costas_growth.py measures the growth of whole runs).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pyopencl as cl
from rich.console import Console
from rich.table import Table

from permenum.jobs.estimate import Growth
from permenum.known import known
from permenum.poolgen.generate import climb
from permenum.problems import StateBatch, get_problem
from permenum.solver.costas import CENTRE, CENTRE_KERNELS, VARIANTS, CostasKernel
from permenum.solver.devices import select_devices
from permenum.solver.opencl import DeviceContext, device_context

SECONDS_PER_YEAR = 365.25 * 24 * 3600


def build_note(dev: DeviceContext, kernel: cl.Kernel) -> str:
    """Private and local memory of a build (and NVIDIA's register line when the log has one)."""
    info = cl.kernel_work_group_info
    private = kernel.get_work_group_info(info.PRIVATE_MEM_SIZE, dev.ref.device)
    local = kernel.get_work_group_info(info.LOCAL_MEM_SIZE, dev.ref.device)
    program = kernel.get_info(cl.kernel_info.PROGRAM)
    log = program.get_build_info(dev.ref.device, cl.program_build_info.LOG)
    regs = [line.strip() for line in log.splitlines() if "registers" in line]
    return f"private {private} B, local {local} B" + (f"; {regs[-1]}" if regs else "")


def print_growth(console: Console, best: dict[int, float], fit_from: int) -> None:
    """The ratio of consecutive orders' seconds and orders 28-30 projected by their fitted growth
    (jobs.estimate.Growth, the model of `permenum estimate` and bench/costas_growth.py)."""
    orders = sorted(n for n in best if n >= fit_from)
    if len(orders) >= 2:
        fitted = Growth.fit([(n, best[n]) for n in orders])
        measured = ", ".join(f"{best[m] / best[m - 1]:.2f} ({m})" for m in orders[1:] if m - 1 in best)
        console.print(f"ratio of consecutive orders (fastest exact variant): {measured}; fitted {fitted.ratio:.2f}x "
                      "an order; projected on this device: " + ", ".join(
                          f"order {m} {fitted.seconds_at(m) / SECONDS_PER_YEAR:.2f}" for m in (28, 29, 30))
                      + " device-years", highlight=False)


def parse_spec(spec: str) -> tuple[str, int | None, int | None]:
    """VARIANT[:WG[:LANES]] -> the variant, its work-group size and the work-items a launch (None: defaults)."""
    variant, wg, lanes = (spec.split(":") + ["", ""])[:3]
    return variant, int(wg) if wg else None, int(lanes) if lanes else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None)
    ap.add_argument("--orders", type=int, nargs="+", default=[12, 13, 14])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS),
                    help=f"VARIANT, VARIANT:WG (work-group size) or VARIANT:WG:LANES (work-items a launch); variants: {', '.join(VARIANTS)}")
    ap.add_argument("--options", nargs="*", default=[], help="extra build options, e.g. -cl-nv-maxrregcount=64")
    ap.add_argument("--symmetry", default="canonical")
    ap.add_argument("--target", type=int, default=1 << 16, help="states in the pool (a GPU wants about 4 a lane)")
    ap.add_argument("--repeat", type=int, default=1, help="timed launches per row (the fastest is shown)")
    ap.add_argument("--nodes", action="store_true", help="also count nodes (a separate build)")
    ap.add_argument("--fit-from", type=int, default=17, help="first order of the growth fit (smaller ones: noise)")
    ap.add_argument("--split", type=int, default=None, help="fc: columns a lane places below each state itself (default: solver.costas.default_split)")
    ap.add_argument("--budget", type=float, default=float("inf"), help="skip a variant's larger orders past S s")
    args = ap.parse_args()
    dev = device_context(select_devices(args.device)[0])
    problem = get_problem("costas")
    console = Console(width=160)
    table = Table(title=f"Costas kernels on {dev.ref.label}")
    for col in ("order", "variant", "states", "pool s", "kernel s", "arrays", "classes", "nodes", "nodes/s", "exact"):
        table.add_column(col, justify="right")
    best: dict[int, float] = {}
    over: set[str] = set()
    for n in args.orders:
        pools: dict[str, tuple[StateBatch, float]] = {}
        verbose = ("-cl-nv-verbose",) if "NVIDIA" in dev.ref.label else ()
        for spec in args.variants:
            if spec in over:
                continue
            variant, wg, lanes = parse_spec(spec)
            symmetry = CENTRE if variant in CENTRE_KERNELS else args.symmetry  # they read only the centre mode's states
            if symmetry not in pools:
                t0 = time.perf_counter()
                pools[symmetry] = (climb(problem, n, args.target, 4.0, symmetry).states, time.perf_counter() - t0)
            states, pool_s = pools[symmetry]
            options = tuple(args.options)
            kernel = CostasKernel(dev, n, symmetry, variant=variant, wg=wg, build_options=options + verbose,
                                  split=args.split, lanes=lanes)
            if n == args.orders[0]:
                console.print(f"{spec}: {build_note(dev, kernel.kernel_for(states.depth))}", highlight=False)
            runs = [kernel(states) for _ in range(args.repeat)]
            seconds = min(r.kernel_seconds for r in runs)
            tally = problem.tally(states, runs[0].counts, runs[0].solutions, symmetry)
            nodes = None
            if args.nodes:
                out = CostasKernel(dev, n, symmetry, count_nodes=True, variant=variant, wg=wg, build_options=options,
                                   split=args.split, lanes=lanes)(states)
                nodes = int(np.sum(out.nodes, dtype=np.uint64))
            exact = tally.weighted == known("costas_total", n) and tally.classes == known("costas_classes", n)
            if exact:
                best[n] = min(best.get(n, math.inf), seconds)
            row = (str(n), spec, f"{len(states):,}", f"{pool_s:.2f}", f"{seconds:.3f}", f"{tally.weighted:,}",
                   f"{tally.classes:,}", f"{nodes:.3e}" if nodes else "-", f"{nodes / seconds:.3e}" if nodes else "-",
                   str(exact))
            table.add_row(*row)
            console.print(" | ".join(row), highlight=False)  # progress, in case the call is cut short
            if seconds > args.budget:
                over.add(spec)
    console.print(table)
    print_growth(console, best, args.fit_from)

if __name__ == "__main__":
    main()
