"""Kernel variants side by side: one launch over an in-memory pool each, counts checked, a table.

    python bench/kernels.py --nqueens 14 15 --variants skip:edges skip-soa:edges skip-all:edges dfs:mirror --wg 64 128

No files, no cost estimates, no chunks: this isolates the kernel (bench/bench.py times the whole
flow). A variant is KERNEL:SYMMETRY. ``--nodes-upto N`` adds a node-counting launch (a separate
build) for sizes <= N; nodes/s divides its count by the timed launch's seconds.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyopencl as cl
from rich.console import Console
from rich.table import Table

from permenum.known import known
from permenum.poolgen.generate import climb
from permenum.problems import get_problem
from permenum.solver.devices import select_devices
from permenum.solver.nqueens import TOP_DOWN, VARIANTS, NQueensKernel
from permenum.solver.opencl import DeviceContext, device_context


def _print_build(console: Console, dev: DeviceContext, kernel: cl.Kernel) -> None:
    info = cl.kernel_work_group_info
    program = kernel.get_info(cl.kernel_info.PROGRAM)
    log = program.get_build_info(dev.ref.device, cl.program_build_info.LOG).strip()
    private = kernel.get_work_group_info(info.PRIVATE_MEM_SIZE, dev.ref.device)
    local = kernel.get_work_group_info(info.LOCAL_MEM_SIZE, dev.ref.device)
    name = kernel.get_info(cl.kernel_info.FUNCTION_NAME)
    console.print(f"build of {name}: private {private} B, local {local} B per work-group", highlight=False)
    for line in log.splitlines():
        if name in line or "registers" in line or "spill" in line:
            console.print(f"  {line}", highlight=False, markup=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None)
    ap.add_argument("--nqueens", type=int, nargs="+", default=[14])
    ap.add_argument("--variants", nargs="+", default=["skip:edges", "skip-soa:edges", "skip-all:edges"],
                    help=f"KERNEL:SYMMETRY pairs; kernels: {', '.join(VARIANTS)} "
                    f"({', '.join(k for k, v in VARIANTS.items() if v.private)}: {' or '.join(TOP_DOWN)} only)")
    ap.add_argument("--wg", type=int, nargs="+", default=[0], help="work-group sizes (0: the solver's default)")
    ap.add_argument("--target-states", type=int, default=1 << 16)
    ap.add_argument("--nodes-upto", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="timed launches per row (the fastest is shown)")
    ap.add_argument("--options", nargs="*", default=[], help="extra build options, e.g. -cl-nv-maxrregcount=32")
    ap.add_argument("--build-log", action="store_true", help="print each build's log (NVIDIA: with -cl-nv-verbose, "
                    "registers and spills) and the kernel's private/local memory")
    ap.add_argument("--ptx", default=None, help="folder to write each build's device binary to (NVIDIA: PTX text)")
    args = ap.parse_args()
    dev = device_context(select_devices(args.device)[0])
    problem = get_problem("nqueens")
    console = Console(width=160)
    table = Table(title=f"N-Queens kernels on {dev.ref.label}")
    for col in ("N", "kernel", "symmetry", "WG", "states", "pool s", "kernel s", "solutions/s", "nodes", "nodes/s", "exact"):
        table.add_column(col, justify="right")
    for n in args.nqueens:
        pools = {}
        for variant in args.variants:
            kernel, symmetry = variant.split(":")
            if symmetry not in pools:
                t0 = time.perf_counter()
                pools[symmetry] = (climb(problem, n, args.target_states, 4.0, symmetry), time.perf_counter() - t0)
            ladder, pool_s = pools[symmetry]
            for wg in args.wg:
                options = tuple(args.options) + (("-cl-nv-verbose",) if args.build_log and "NVIDIA" in dev.ref.label else ())
                solver = NQueensKernel(dev, n, ladder.depth, symmetry, kernel, wg=wg or None, build_options=options)
                if args.build_log:
                    _print_build(console, dev, solver.kernel)
                if args.ptx:
                    binary = solver.kernel.get_info(cl.kernel_info.PROGRAM).get_info(cl.program_info.BINARIES)[0]
                    Path(args.ptx).mkdir(parents=True, exist_ok=True)
                    Path(args.ptx, f"{kernel}-{symmetry}-{n}.ptx").write_bytes(bytes(binary))
                runs = [solver(ladder.states) for _ in range(args.repeat)]
                seconds = min(r.kernel_seconds for r in runs)
                total = int(problem.tally(ladder.states, runs[0].counts, None, symmetry).weighted)
                nodes = None
                if n <= args.nodes_upto:
                    out = NQueensKernel(dev, n, ladder.depth, symmetry, kernel, count_nodes=True, wg=wg or None,
                                        build_options=tuple(args.options))(ladder.states)
                    nodes = int(np.sum(out.nodes, dtype=np.uint64))
                row = (str(n), kernel, symmetry, str(solver.local or wg), f"{len(ladder.states):,}", f"{pool_s:.2f}", f"{seconds:.3f}",
                       f"{total / max(seconds, 1e-9):.3e}", f"{nodes:.3e}" if nodes else "-",
                       f"{nodes / max(seconds, 1e-9):.3e}" if nodes else "-", str(total == known("nqueens_total", n)))
                table.add_row(*row)
                console.print(" | ".join(row), highlight=False)  # progress, in case the call is cut short
    console.print(table)


if __name__ == "__main__":
    main()
