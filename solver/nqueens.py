"""Host side of the N-Queens kernels: upload a batch of states, count every completion of each.

``lds64`` reads the pool's absolute masks and serves every symmetry mode; ``dfs``, ``dsl`` and ``lds``
(kept to compare: bench/NOTES.md) fill a block of rows below the placed ones, so they take masks
shifted to the next row, computed here, and only the top-down modes (mirror, none).
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.problems.nqueens import NQueens, lowest_bit_index
from permenum.solver.opencl import BatchCounts, DeviceContext, download, timed_launch, upload, zeros

#: variant -> (kernel function, build options); lds64-plain is lds64 without the in-place last two rows
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "lds64": ("nqueens_lds64", ("-DLAST_TWO=1",)), "lds64-plain": ("nqueens_lds64", ("-DLAST_TWO=0",)),
    "lds": ("nqueens_lds", ()), "dsl": ("nqueens_dsl", ()), "dfs": ("nqueens_dfs", ()),
}
ABSOLUTE = ("lds64", "lds64-plain")  # variants that read the absolute masks (every symmetry mode)
DEFAULT_VARIANT = "lds64"  # the only one for the dihedral mode: README "Kernels", bench/NOTES.md
TOP_DOWN = ("mirror", "none")  # symmetry modes whose open rows are one block at the bottom


def shifted_masks(n: int, batch: StateBatch) -> list[np.ndarray]:
    """cols, ld, rd of the next open row (bit c: column c is attacked) for the top-down kernels."""
    masks, full = batch.masks, np.uint64((1 << n) - 1)
    row = lowest_bit_index(masks["rows"]).astype(np.uint64)
    ld = (masks["d1"] >> (np.uint64(n - 1) - row)) & full
    rd = (masks["d2"] >> row) & full
    return [masks["cols"].astype(np.uint32), ld.astype(np.uint32), rd.astype(np.uint32)]


class NQueensKernel:
    def __init__(self, dev: DeviceContext, n: int, depth: int, symmetry: str, variant: str = DEFAULT_VARIANT,
                 count_nodes: bool = False, wg: int = 64):
        if variant not in VARIANTS:
            raise UserError(f"unknown nqueens kernel {variant!r} (choose from {', '.join(VARIANTS)})")
        if variant not in ABSOLUTE and symmetry not in TOP_DOWN:
            raise UserError(f"nqueens kernel {variant!r} needs symmetry {' or '.join(TOP_DOWN)}; use lds64 for {symmetry}")
        self.dev, self.n, self.depth, self.count_nodes, self.variant = dev, n, depth, count_nodes, variant
        self.local = wg if dev.ref.is_gpu or variant.startswith("lds") else None
        stack = max(NQueens().levels_left(n, depth, symmetry), 1)
        function, extra = VARIANTS[variant]
        options = [f"-DSTACK={stack}", f"-DWG={self.local or wg}", *extra] + (["-DCOUNT_NODES"] if count_nodes else [])
        self.kernel = cl.Kernel(dev.program("nqueens.cl", tuple(options)), function)

    def __call__(self, batch: StateBatch) -> BatchCounts:
        nstates = len(batch)
        if nstates == 0:
            return BatchCounts(np.zeros(0, np.uint64), np.zeros(0, np.uint64) if self.count_nodes else None, 0.0)
        dev = self.dev
        if self.variant in ABSOLUTE:
            ins = [upload(dev, batch.masks[k].astype(t)) for k, t in
                   (("cols", np.uint32), ("d1", np.uint64), ("d2", np.uint64), ("rows", np.uint32))]
            head: list[object] = [np.uint32(self.n), np.uint32(nstates)]
        else:
            ins = [upload(dev, m) for m in shifted_masks(self.n, batch)]
            head = [np.uint32(self.n), np.uint32(self.depth), np.uint32(nstates)]
        counts = zeros(dev, nstates, np.uint64)
        nodes = zeros(dev, nstates if self.count_nodes else 1, np.uint64)
        seconds = timed_launch(dev, self.kernel, nstates, self.local, *head, *ins, counts, nodes, zeros(dev, 1, np.uint32))
        return BatchCounts(download(dev, counts, nstates, np.uint64),
                           download(dev, nodes, nstates, np.uint64) if self.count_nodes else None, seconds)
