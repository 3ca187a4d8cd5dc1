"""Time the whole local flow (pool + run + collect) for N-Queens N=12..16 with each kernel.

    python bench/bench_enumerate.py [--device cpu] [--n 12 13 14 15 16] [--kernels dfs dsl]

Prints one row per (N, kernel): pool seconds, run seconds, kernel seconds, solutions/s, and
whether the total matches the published count. Run it side by side, in one call, to compare.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from permenum.jobs.collect import collect
from permenum.jobs.local import run_local
from permenum.layout import RunLayout
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.solver.devices import select_devices


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--problem", default="nqueens")
    ap.add_argument("--n", type=int, nargs="+", default=[12, 13, 14, 15, 16])
    ap.add_argument("--kernels", nargs="+", default=["dfs", "dsl"])
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--target-states", type=int, default=1 << 16)
    args = ap.parse_args()
    device = select_devices(args.device)[0]
    table = Table(title=f"permenum enumerate, {args.problem}, on {device.label}")
    for col in ("N", "kernel", "states", "pool s", "run s", "kernel s", "solutions", "solutions/s", "exact"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            for kernel in args.kernels:
                layout = RunLayout(Path(tmp) / f"{n}-{kernel}")
                t0 = time.perf_counter()
                manifest, _ = write_pool(layout, PoolSettings(args.problem, n, args.partitions, args.target_states))
                t1 = time.perf_counter()
                run_local(layout, 1, args.device, kernel, show_progress=False)
                t2 = time.perf_counter()
                c = collect(layout)
                kernel_s = sum(float(r["seconds"]["kernel"]) for r in c.records)
                table.add_row(str(n), kernel, f"{manifest.total_states:,}", f"{t1 - t0:.2f}", f"{t2 - t1:.2f}",
                              f"{kernel_s:.2f}", f"{c.total:,}", f"{c.total / (t2 - t1):.3e}", str(c.matches))
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
