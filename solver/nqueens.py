"""Host side of the N-Queens kernels: upload a batch of states, count every completion of each."""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.solver.opencl import BatchCounts, DeviceContext, download, timed_launch, upload, zeros

VARIANTS = {"dfs": "nqueens_dfs", "dsl": "nqueens_dsl", "lds": "nqueens_lds"}
DEFAULT_VARIANT = "lds"  # fastest on the H200 (3x dsl, 5x dfs) and on PoCL here: README "Kernels", bench/NOTES.md


class NQueensKernel:
    def __init__(self, dev: DeviceContext, n: int, depth: int, variant: str = DEFAULT_VARIANT, count_nodes: bool = False):
        if variant not in VARIANTS:
            raise UserError(f"unknown nqueens kernel {variant!r} (choose from {', '.join(VARIANTS)})")
        self.dev, self.n, self.depth, self.count_nodes = dev, n, depth, count_nodes
        self.local = 64 if dev.ref.is_gpu or variant == "lds" else None
        options = [f"-DSTACK={max(n - depth, 1)}", f"-DWG={self.local or 64}"] + (["-DCOUNT_NODES"] if count_nodes else [])
        self.kernel = cl.Kernel(dev.program("nqueens.cl", tuple(options)), VARIANTS[variant])

    def __call__(self, batch: StateBatch) -> BatchCounts:
        nstates = len(batch)
        if nstates == 0:
            return BatchCounts(np.zeros(0, np.uint64), np.zeros(0, np.uint64) if self.count_nodes else None, 0.0)
        dev = self.dev
        ins = [upload(dev, batch.masks[k].astype(np.uint32)) for k in ("cols", "ld", "rd")]
        counts = zeros(dev, nstates, np.uint64)
        nodes = zeros(dev, nstates if self.count_nodes else 1, np.uint64)
        seconds = timed_launch(dev, self.kernel, nstates, self.local, np.uint32(self.n), np.uint32(self.depth),
                               np.uint32(nstates), *ins, counts, nodes, zeros(dev, 1, np.uint32))
        return BatchCounts(download(dev, counts, nstates, np.uint64),
                           download(dev, nodes, nstates, np.uint64) if self.count_nodes else None, seconds)
