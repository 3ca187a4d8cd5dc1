"""Host side of the Costas kernel: complete a batch of prefixes and collect every array found.

The output buffer is sized from a guess; the kernel counts every array even past the buffer's end,
so when it overflows the batch is run again with room for exactly that many (no array is lost).
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.solver.opencl import BatchCounts, DeviceContext, Staged, build_id, download, timed_launch, upload, zeros


#: variant -> (kernel file, function): costas.cl and costas_cf.cl say what each does; retired variants:
#: bench/NOTES.md. cf and mid (its plain search, for `verify`) read the centre mode's states (their own
#: reading order and symmetry rule), dfs and fc left-to-right prefixes.
_FUNCTIONS: dict[str, tuple[str, str]] = {"dfs": ("costas.cl", "costas_dfs"), "fc": ("costas.cl", "costas_fc"),
                                          "cf": ("costas_cf.cl", "costas_cf"), "mid": ("costas_cf.cl", "costas_mid")}
VARIANTS: tuple[str, ...] = tuple(_FUNCTIONS)
CENTRE = "centre"  # the symmetry mode cf and mid serve, and only they
#: On a CPU these run in work-groups of one: PoCL keeps a group's private tables side by side, and its own
#: choice of group made cf 2.6x slower at order 14 (2.77 s against 1.07 s; mid 5.76 s against 3.02 s).
CENTRE_KERNELS = ("cf", "mid")
#: On a GPU they run on 128 lanes a compute unit, not every resident one: their 3 KB of private tables a lane
#: live in local memory, which then stays in cache (H100, order 19: 110 s on every lane, 36 s on 128 a unit).
CENTRE_GPU_LANES_PER_UNIT = 128
FC_MAX_N = 31  # costas_fc marks the columns past the last with bit 31 (order 32: --kernel dfs)


def default_variant(dev: DeviceContext, symmetry: str) -> str:
    """cf for the centre mode's pools; otherwise fc on every device since its steps stopped asking whether a column exists (H100 order 20: 13.7 s vs
    32.6 s for the retired lds, itself 3.4x dfs there; PoCL order 14: 0.83 s vs 1.23 s for dfs)."""
    return "cf" if symmetry == CENTRE else "fc"


def default_split(dev: DeviceContext, n: int, depth: int) -> int:
    """Columns a GPU lane places itself below each state before searching (SPLIT in costas.cl): its pass
    then looks at that many distances fewer, for a start per child. Heavy states only, by the distances
    they leave (H100, kernel s: order 19 from depth 6, 12 distances, 1.60 -> 1.51 with one; order 20
    from 6, 13: 8.47 -> 7.93 with one, 8.04 with two; order 21 from 6, 14: 44.2 -> 41.1 with one, 39.1
    with two). None on a CPU (PoCL order 14: 0.68 s with one, 0.70 without, 0.99 with two)."""
    if not dev.ref.is_gpu:
        return 0
    distances = n - 1 - depth
    return 2 if distances >= 14 else 1 if distances >= 12 else 0


class CostasKernel:
    """The Costas kernel built for one order and symmetry mode; called on a batch of prefixes (any depth)."""

    variants: tuple[str, ...] = VARIANTS
    default_variant = staticmethod(default_variant)

    @classmethod
    def build(cls, dev: DeviceContext, n: int, depth: int, symmetry: str, variant: str | None,
              count_nodes: bool) -> "CostasKernel":
        """A kernel with its build for ``depth`` made now (refinement builds on its own thread)."""
        kernel = cls(dev, n, symmetry, count_nodes, variant=variant)
        kernel.kernel_for(depth)
        return kernel

    @staticmethod
    def check(variant: str, symmetry: str) -> None:
        """Refuse a variant this build does not have, or one that cannot read the pool's states (cf reads the
        centre mode's, the others left-to-right prefixes)."""
        if variant not in VARIANTS:
            raise UserError(f"unknown costas kernel {variant!r} (choose from {', '.join(VARIANTS)})")
        if (variant in CENTRE_KERNELS) != (symmetry == CENTRE):
            raise UserError(f"costas kernel {variant} does not search symmetry {symmetry}: kernels cf and mid go "
                            f"with symmetry {CENTRE}, and only they")

    def __init__(self, dev: DeviceContext, n: int, symmetry: str, count_nodes: bool = False, capacity: int = 4096,
                 variant: str | None = None, wg: int | None = None, build_options: tuple[str, ...] = (),
                 split: int | None = None, lanes: int | None = None):
        variant = variant or default_variant(dev, symmetry)
        self.check(variant, symmetry)
        if variant == "fc" and n > FC_MAX_N:
            raise UserError(f"costas kernel fc serves orders up to {FC_MAX_N} (order {n}: use --kernel dfs)")
        self.dev, self.n, self.count_nodes, self.capacity = dev, n, count_nodes, max(capacity, 1)
        self.variant = variant
        self.source, self.function = _FUNCTIONS[variant]
        self.local = wg or (64 if dev.ref.is_gpu or variant == "fc" else 1 if variant in CENTRE_KERNELS else None)
        self.options = (f"-DNMAX={max(n, 1)}", f"-DCANONICAL={int(symmetry == 'canonical')}", f"-DWG={self.local or 64}",
                        *(["-DCOUNT_NODES"] if count_nodes else []), *build_options)
        self._kernels: dict[tuple[int, int], cl.Kernel] = {}
        self.builds: tuple[str, ...] = ()  # recorded in the result: one build per pool depth met
        self.split = split  # None: default_split
        self.reruns = 0  # how often a batch overflowed the output buffer (tests check this path)
        # work-items a launch may use (None: the device's resident limit)
        centre_gpu = dev.ref.is_gpu and variant in CENTRE_KERNELS
        self.max_lanes = lanes or (CENTRE_GPU_LANES_PER_UNIT * dev.ref.device.max_compute_units if centre_gpu else None)

    def split_for(self, depth: int) -> int:
        """Columns the build for states of this depth places below each state itself (fc only; see
        default_split). With node counts at most one, so that nodes are those of the unsplit search."""
        split = default_split(self.dev, self.n, depth) if self.split is None else self.split
        if self.count_nodes:
            split = min(split, 1)
        if self.function != "costas_fc" or not 2 <= depth <= self.n - 3 - split:
            return 0
        return split

    def kernel_for(self, depth: int) -> cl.Kernel:
        """The build for states of this depth: costas_fc's stack holds only the levels below it."""
        if depth < 1:
            raise ValueError("Costas states hold at least their first column")
        split = self.split_for(depth)
        key = (min(depth, self.n - 1) + split, split) if self.function == "costas_fc" else (0, 0)
        if key not in self._kernels:
            options = self.options + ((f"-DMIN_DEPTH={key[0]}", f"-DSPLIT={split}") if self.function == "costas_fc" else ())
            self._kernels[key] = cl.Kernel(self.dev.program(self.source, options), self.function)
            self.builds = (*self.builds, build_id(self.source, options))
        return self._kernels[key]

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
            seconds += timed_launch(dev, self.kernel_for(batch.depth), nstates, self.local, np.uint32(n), np.uint32(batch.depth),
                                    np.uint32(nstates), prefixes, counts, nodes, zeros(dev, 1, np.uint32), found,
                                    nfound, np.uint32(capacity), max_lanes=self.max_lanes)
            total = int(download(dev, nfound, 1, np.uint32)[0])
            if total <= capacity:
                break
            self.reruns += 1
            capacity = total
        arrays = download(dev, found, total * n, np.uint8).reshape(total, n)
        return BatchCounts(download(dev, counts, nstates, np.uint64),
                           download(dev, nodes, nstates, np.uint64) if self.count_nodes else None, seconds, arrays)
