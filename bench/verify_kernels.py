"""Cross-check kernel variants state by state on every device given (e.g. the GPU against PoCL).

    python bench/verify_kernels.py --problem nqueens --n 14 --devices gpu cpu --sample 2000

Reports, per (device, kernel), how many states' counts differ from the first pair's, with
the first few differing states; exits 1 on any difference. Used to chase device-specific bugs.
Without --kernels: every kernel of the problem that serves the symmetry mode (N-Queens dfs and dsl
only the top-down modes: ``--symmetry mirror`` to include them).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from permenum.poolgen.generate import climb
from permenum.problems import get_problem
from permenum.solver.devices import select_devices
from permenum.solver.nqueens import TOP_DOWN, VARIANTS as NQ_VARIANTS
from permenum.solver.opencl import device_context
from permenum.solver.registry import KERNELS, make_solver


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default="nqueens")
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--target-states", type=int, default=1 << 16)
    ap.add_argument("--sample", type=int, default=0, help="check only the first S states (0: all)")
    ap.add_argument("--devices", nargs="+", default=["default"])
    ap.add_argument("--kernels", nargs="+", default=None)
    ap.add_argument("--symmetry", default=None, help="the problem's symmetry mode (default: its default)")
    args = ap.parse_args()
    problem = get_problem(args.problem)
    symmetry = args.symmetry or problem.default_symmetry
    kernels = args.kernels or [k for k in KERNELS[args.problem]
                               if args.problem != "nqueens" or not NQ_VARIANTS[k].private or symmetry in TOP_DOWN]
    ladder = climb(problem, args.n, args.target_states, 4.0, symmetry)
    batch = ladder.states if not args.sample else ladder.states.take(slice(0, args.sample))
    print(f"{args.problem} n={args.n} ({symmetry}): {len(batch)} states at depth {ladder.depth}")
    reference: np.ndarray | None = None
    bad = 0
    for spec in args.devices:
        dev = device_context(select_devices(spec)[0])
        for kernel in kernels:
            out = make_solver(args.problem, dev, args.n, ladder.depth, kernel, symmetry)(batch)
            if reference is None:
                reference = out.counts
            diff = np.nonzero(out.counts != reference)[0]
            bad += len(diff)
            print(f"{dev.ref.label} {kernel}: sum {int(out.counts.sum())}, {len(diff)} states differ, {out.kernel_seconds:.3f} s")
            for i in diff[:5]:
                masks = {k: int(v[i]) for k, v in batch.masks.items()}
                print(f"   state {i} prefix {batch.prefix[i].tolist()} {masks}: {int(out.counts[i])} vs {int(reference[i])}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
