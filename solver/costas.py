"""Host side of the Costas kernel: complete a batch of prefixes and collect every array found.

The output buffer is sized from a guess; the kernel counts every array even past the buffer's end,
so when it overflows the batch is run again with room for exactly that many (no array is lost).
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.solver.opencl import BatchCounts, DeviceContext, Staged, download, timed_launch, upload, zeros


#: variant -> whether its per-column arrays live in __local memory ([column][lane]); retired: bench/NOTES.md
_LOCAL_STACKS: dict[str, bool] = {"dfs": False, "lds": True}
VARIANTS: tuple[str, ...] = tuple(_LOCAL_STACKS)


def default_variant(dev: DeviceContext) -> str:
    """lds on a GPU (H200, n=18: 2.31 s vs 7.76 s for dfs, bench/NOTES.md); dfs, private arrays, elsewhere."""
    return "lds" if dev.ref.is_gpu else "dfs"


class CostasKernel:
    """The Costas kernel built for one order and symmetry mode; called on a batch of prefixes (any depth)."""

    variants: tuple[str, ...] = VARIANTS
    default_variant = staticmethod(default_variant)

    @classmethod
    def build(cls, dev: DeviceContext, n: int, depth: int, symmetry: str, variant: str | None,
              count_nodes: bool) -> "CostasKernel":
        return cls(dev, n, symmetry, count_nodes, variant=variant)

    @staticmethod
    def check(variant: str, symmetry: str) -> None:
        """Refuse a variant this build does not have (both serve every symmetry mode)."""
        if variant not in VARIANTS:
            raise UserError(f"unknown costas kernel {variant!r} (choose from {', '.join(VARIANTS)})")

    def __init__(self, dev: DeviceContext, n: int, symmetry: str, count_nodes: bool = False, capacity: int = 4096,
                 variant: str | None = None):
        variant = variant or default_variant(dev)
        self.check(variant, symmetry)
        self.dev, self.n, self.count_nodes, self.capacity = dev, n, count_nodes, max(capacity, 1)
        self.variant = variant
        local_stacks = _LOCAL_STACKS[variant]
        self.local = 64 if dev.ref.is_gpu or local_stacks else None
        options = [f"-DNMAX={max(n, 1)}", f"-DCANONICAL={int(symmetry == 'canonical')}",
                   f"-DLOCAL_STACKS={int(local_stacks)}", f"-DWG={self.local or 64}"]
        options += ["-DCOUNT_NODES"] if count_nodes else []
        self.kernel = cl.Kernel(dev.program("costas.cl", tuple(options)), "costas_dfs")
        self.reruns = 0  # how often a batch overflowed the output buffer (tests check this path)

    def stage(self, batch: StateBatch) -> Staged:
        """The prefixes uploaded (any thread)."""
        return Staged(batch, [upload(self.dev, batch.prefix.astype(np.uint8))] if len(batch) else [])

    def __call__(self, batch: StateBatch) -> BatchCounts:
        return self.run(self.stage(batch))

    def run(self, staged: Staged) -> BatchCounts:
        """Count a staged batch (in the device's own thread: it sets the kernel's arguments)."""
        batch = staged.batch
        n, nstates, dev = self.n, len(batch), self.dev
        if nstates == 0:
            return BatchCounts(np.zeros(0, np.uint64), np.zeros(0, np.uint64) if self.count_nodes else None, 0.0,
                               np.zeros((0, n), np.uint8))
        (prefixes,) = staged.buffers
        capacity, seconds = self.capacity, 0.0
        while True:
            counts = zeros(dev, nstates, np.uint64)
            nodes = zeros(dev, nstates if self.count_nodes else 1, np.uint64)
            found = zeros(dev, capacity * n, np.uint8)
            nfound = zeros(dev, 1, np.uint32)
            seconds += timed_launch(dev, self.kernel, nstates, self.local, np.uint32(n), np.uint32(batch.depth),
                                    np.uint32(nstates), prefixes, counts, nodes, zeros(dev, 1, np.uint32), found,
                                    nfound, np.uint32(capacity))
            total = int(download(dev, nfound, 1, np.uint32)[0])
            if total <= capacity:
                break
            self.reruns += 1
            capacity = total
        arrays = download(dev, found, total * n, np.uint8).reshape(total, n)
        return BatchCounts(download(dev, counts, nstates, np.uint64),
                           download(dev, nodes, nstates, np.uint64) if self.count_nodes else None, seconds, arrays)
