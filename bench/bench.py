"""Time the whole local flow (pool + run + collect) per problem, size and kernel, and print a table.

    python bench/bench.py --nqueens 12 13 14 15 16 --kernels dfs dsl skip-soa
    python bench/bench.py --device gpu --nqueens 18 19 20 21 --costas 14 15 16 17 18 --target-states 4000000

Every row is checked against the published count ("exact"). Rows of one call are measured side by
side, so their ratios are comparable; absolute times count only on a GPU. ``--nodes-upto N`` also
runs the node-counting build for sizes <= N (a separate build: counting costs time) for nodes/s.
``--budget S`` skips a kernel's larger sizes once one of its runs took longer than S seconds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from permenum.jobs.ledger.collect import collect
from permenum.jobs.local import run_local
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.records import Manifest
from permenum.poolgen.write import PoolSettings, load_partition, write_pool
from permenum.problems import StateBatch, get_problem
from permenum.solver.devices import select_devices
from permenum.solver.opencl import device_context
from permenum.solver.nqueens import VARIANTS as NQ_VARIANTS
from permenum.solver.registry import KERNELS, make_solver


def count_nodes(layout: RunLayout, manifest: Manifest, device: str | None, kernel: str) -> int:
    problem = get_problem(manifest.problem)
    dev = device_context(select_devices(device)[0])
    solver = make_solver(problem.name, dev, manifest.n, manifest.locked_depth, kernel,
                         manifest.symmetry, count_nodes=True)
    total = 0
    for i in range(manifest.num_partitions):
        batch = StateBatch.from_table(load_partition(layout, manifest.partition(i)), problem.mask_names)
        out = solver(batch)
        total += int(np.sum(out.nodes, dtype=np.uint64))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None)
    ap.add_argument("--nqueens", type=int, nargs="*", default=[12, 13, 14, 15, 16])
    ap.add_argument("--costas", type=int, nargs="*", default=[])
    ap.add_argument("--kernels", nargs="+", default=None, help="N-Queens kernels (default: all)")
    ap.add_argument("--costas-kernels", nargs="+", default=None, help="Costas kernels (default: all)")
    ap.add_argument("--costas-target", type=int, default=1 << 16, help="pool target for Costas")
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--target-states", type=int, default=1 << 16)
    ap.add_argument("--nodes-upto", type=int, default=0)
    ap.add_argument("--budget", type=float, default=float("inf"))
    ap.add_argument("--symmetry", default=None,
                    help="N-Queens symmetry (default: the problem's; mirror for the top-down kernels dfs, dsl)")
    args = ap.parse_args()
    device = select_devices(args.device)[0]
    console = Console(width=160)
    table = Table(title=f"permenum on {device.label}")
    for col in ("problem", "N", "kernel", "states", "pool s", "kernel s", "whole s", "solutions", "solutions/s",
                "nodes/s", "exact"):
        table.add_column(col, justify="right")
    cases = [("nqueens", n, k) for k in (args.kernels or KERNELS["nqueens"]) for n in args.nqueens]
    cases += [("costas", n, k) for k in (args.costas_kernels or KERNELS["costas"]) for n in args.costas]
    over_budget: set[tuple[str, str]] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for problem, n, kernel in cases:
            if (problem, kernel) in over_budget:
                continue
            layout = RunLayout(Path(tmp) / f"{problem}-{n}-{kernel}")
            t0 = time.perf_counter()
            target = args.costas_target if problem == "costas" else args.target_states
            symmetry = args.symmetry if problem == "nqueens" else None
            if problem == "nqueens" and symmetry is None and kernel in NQ_VARIANTS and NQ_VARIANTS[kernel].private:
                symmetry = "mirror"
            manifest, _ = write_pool(layout, PoolSettings(problem, n, args.partitions, target, symmetry=symmetry))
            t1 = time.perf_counter()
            run_local(layout, 1, TaskOptions(args.device, kernel), show_progress=False)
            c = collect(layout)
            t2 = time.perf_counter()
            kernel_s = c.kernel_seconds
            nodes = f"{count_nodes(layout, manifest, args.device, kernel) / kernel_s:.3e}" if n <= args.nodes_upto else "-"
            row = (problem, str(n), f"{kernel} ({manifest.symmetry})", f"{manifest.total_states:,}", f"{t1 - t0:.2f}", f"{kernel_s:.3f}",
                   f"{t2 - t0:.2f}", f"{c.total:,}", f"{c.total / kernel_s:.3e}" if kernel_s else "-", nodes,
                   str(c.matches))
            table.add_row(*row)
            console.print(" | ".join(row), highlight=False)  # progress, in case the call is cut short
            if t2 - t0 > args.budget:
                over_budget.add((problem, kernel))
    console.print(table)


if __name__ == "__main__":
    main()
