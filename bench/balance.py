"""Partitions balanced by estimated cost against partitions of equal row count, measured side by side.

    python bench/balance.py                      # N-Queens 17, 16 partitions, 3 rounds, PoCL here
    python bench/balance.py --repeat 1 --nodes   # one round; exact node counts per partition too
    python bench/balance.py --plots runs/        # also the `permenum report --plot` picture of each run

Pools the same problem twice with the same seed (``--balance rows`` and ``--balance cost``) and runs
both, one task at a time (what the local executor does with one worker: each task has the device
to itself) through the same ``run_task``, then prints slowest / mean task time for both, read from
each run's ledger as ``permenum report`` does.

This machine is shared (2 cores; other people's tests come and go), so a burst of someone else's
work can make a few tasks 15% slower, and the slowest task decides the figure. Hence: the two runs
are interleaved task by task (rows i, cost i, cost i+1, rows i+1, ...), so a burst hits both; each
task's CPU time (this process's, PoCL's threads included) is shown too, which such bursts leave
alone; and the kernel is built once before either run, so no run's first task pays the build
(under SLURM every task pays it alike). ``--nodes`` counts every partition's exact search nodes with
the node-counting build: the work itself, without any timing.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from permenum.jobs.ledger.report import build_report, plot_report
from permenum.jobs.counting.task import run_task
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.records import Manifest
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.problems import StateBatch, get_problem
from permenum.solver.devices import select_devices
from permenum.solver.opencl import device_context
from permenum.solver.registry import make_solver

MODES = ("rows", "cost")


def max_over_mean(values: list[float]) -> float:
    return max(values) / statistics.fmean(values)


def node_imbalance(layout: RunLayout, manifest: Manifest, device: str | None, kernel: str | None) -> float:
    """Slowest / mean partition by exact node count (the node-counting build)."""
    problem = get_problem(manifest.problem)
    solver = make_solver(problem.name, device_context(select_devices(device)[0]), manifest.n,
                         manifest.locked_depth, kernel, manifest.symmetry, count_nodes=True)
    nodes = []
    for i in range(manifest.num_partitions):
        batch = StateBatch.from_table(pq.read_table(layout.partition_file(i)), problem.mask_names)
        nodes.append(float(np.sum(solver(batch).nodes, dtype=np.uint64)))
    return max_over_mean(nodes)


def run_interleaved(runs: dict[str, RunLayout], partitions: int, device: str | None,
                    kernel: str | None) -> dict[str, list[float]]:
    """Run every partition of every run, alternating runs task by task; returns CPU seconds per task."""
    cpu: dict[str, list[float]] = {mode: [] for mode in runs}
    for i in range(partitions):
        for mode in MODES if i % 2 == 0 else MODES[::-1]:
            before = resource.getrusage(resource.RUSAGE_SELF)
            run_task(runs[mode], i, TaskOptions(device, kernel))
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpu[mode].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default="nqueens")
    ap.add_argument("--n", type=int, default=17)
    ap.add_argument("--partitions", "-P", type=int, default=16)
    ap.add_argument("--target-states", type=int, default=1 << 16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default=None)
    ap.add_argument("--kernel", default=None)
    ap.add_argument("--repeat", type=int, default=3, help="rounds of both runs (the summary line takes the median)")
    ap.add_argument("--nodes", action="store_true", help="also count exact nodes per partition")
    ap.add_argument("--plots", type=Path, default=None, help="write each run's report plot into this folder")
    args = ap.parse_args()
    console = Console(width=170, highlight=False)
    ref = select_devices(args.device)[0]
    with tempfile.TemporaryDirectory() as tmp:
        pools: dict[str, tuple[RunLayout, Manifest]] = {}
        for mode in MODES:
            layout = RunLayout(Path(tmp) / f"pool-{mode}")
            t0 = time.perf_counter()
            manifest, _ = write_pool(layout, PoolSettings(args.problem, args.n, args.partitions, args.target_states,
                                                          seed=args.seed, balance=mode))
            pools[mode] = (layout, manifest)
            console.print(f"pool --balance {mode}: {manifest.total_states:,} states in {time.perf_counter() - t0:.2f} s")
        nodes = {mode: node_imbalance(*pools[mode], args.device, args.kernel) for mode in MODES} if args.nodes else {}
        manifest = pools["cost"][1]
        make_solver(manifest.problem, device_context(ref), manifest.n, manifest.locked_depth,
                    args.kernel, manifest.symmetry)  # warm-up: builds the kernel once for both runs
        table = Table(title=f"{args.problem} n={args.n}, {args.partitions} partitions, seed {args.seed}, on {ref.label}")
        for col in ("balance", "round", "est. cost max/mean", "nodes max/mean", "task s min / median / max",
                    "slowest/mean task", "slowest/mean kernel", "slowest/mean task CPU", "total"):
            table.add_column(col, justify="right")
        results: dict[str, list[float]] = {mode: [] for mode in MODES}
        for rnd in range(args.repeat):
            runs = {}
            for mode in MODES:
                runs[mode] = RunLayout(Path(tmp) / f"run-{mode}-{rnd}")
                runs[mode].root.mkdir()
                for name in ("manifest.json", "pool"):
                    (runs[mode].root / name).symlink_to(pools[mode][0].root / name)  # same pool, fresh results
            cpu = run_interleaved(runs, args.partitions, args.device, args.kernel)
            for mode in MODES:
                report = build_report(runs[mode])
                est = [float(p.estimated_cost or 0) for p in pools[mode][1].partitions]
                lo, med, hi = min(report.seconds), statistics.median(report.seconds), max(report.seconds)
                results[mode].append(report.imbalance)
                row = (mode, str(rnd + 1), f"{max_over_mean(est):.4f}", f"{nodes[mode]:.4f}" if nodes else "-",
                       f"{lo:.2f} / {med:.2f} / {hi:.2f}", f"{report.imbalance:.3f}", f"{report.kernel_imbalance:.3f}",
                       f"{max_over_mean(cpu[mode]):.3f}",
                       f"{report.collected.total} ({'exact' if report.collected.matches else 'CHECK'})")
                table.add_row(*row)
                console.print(" | ".join(row))  # progress, in case the call is cut short
                if args.plots:
                    args.plots.mkdir(parents=True, exist_ok=True)
                    plot_report(report, args.plots / f"balance-{mode}-{rnd + 1}.png")
        console.print(table)
        rounds = " (median of rounds)" if args.repeat > 1 else ""
        console.print("slowest / mean task time" + rounds + ": "
                      + ", ".join(f"{mode} {statistics.median(v):.3f}" for mode, v in results.items()))


if __name__ == "__main__":
    main()
