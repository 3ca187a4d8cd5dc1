"""Host side of the N-Queens kernels: upload a batch of states, count every completion of each.

Every kernel takes masks shifted to the next open row, which a first kernel (``nqueens_prepare``)
computes on the device from the pool's absolute masks. ``skip`` and its builds serve every symmetry
mode (the dihedral border and the edges mode's word prepared the same way); ``dfs`` and ``dsl`` keep
private stacks and serve the top-down modes only (mirror, none). Retired variants: bench/NOTES.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.problems.base import ChildBatch
from permenum.problems.nqueens import edge_weight_masks, levels_left
from permenum.solver.opencl import BatchCounts, DeviceContext, Staged, build_id, download, event_seconds, timed_launch, upload, zeros


@dataclass(frozen=True)
class Variant:
    """One selectable kernel build: its function, extra build options, where its stacks live."""

    function: str
    options: tuple[str, ...] = ()
    private: bool = False  # private stacks (dfs, dsl): they read cols, ld, rd only, so the top-down modes only

    def words(self, symmetry: str) -> int:
        """__local words per level and work-item: skip's 4-word slot, plus the border table's word (dihedral)."""
        return 0 if self.private else 4 + (1 if symmetry == "dihedral" else 0)


VARIANTS: dict[str, Variant] = {
    "skip": Variant("nqueens_skip"),
    "skip-soa": Variant("nqueens_skip", ("-DSLOT_VEC=0",)),
    "skip-all": Variant("nqueens_skip", ("-DFILTER=0",)),  # no dead-child filter: the tests' check on it
    "dfs": Variant("nqueens_dfs", private=True),
    "dsl": Variant("nqueens_dsl", private=True),
}


def default_variant(dev: DeviceContext, symmetry: str) -> str:
    """skip on a GPU (H200, N=21 edges: 11.49 s vs 14.47 s for skip-all, the same search without the
    dead-child filter); on a CPU skip-soa, the same kernel with its slot words apart (PoCL N=16 edges,
    two runs: 2.01 / 1.91 s vs 2.17 / 2.10 s for skip: work-items vectorize over word-major slots)."""
    return "skip" if dev.ref.is_gpu else "skip-soa"


# nqueens_prepare's layout of each symmetry mode (nqueens.cl's LAYOUT_*): top-down, the dihedral
# border's table word, the edges mode's word (t, the rows of columns 0 and n-1)
LAYOUTS: dict[str, int] = {"mirror": 0, "none": 0, "dihedral": 1, "edges": 2}
GPU_WORK_GROUP = 128  # H200, lds dihedral N=20 (retired kernel): 7.17 s vs 7.68 s at 64, 7.14 s at 256 (bench/NOTES.md)
TOP_DOWN = ("mirror", "none")  # symmetry modes whose open rows are one block at the bottom


def _fitting_work_group(dev: DeviceContext, wg: int, bytes_per_item: int) -> int:
    """``wg``, halved while the work-group's stacks would not fit the device's __local memory
    (N-Queens 31-32 with few rows placed: 2 KB per level at 128 work-items, NVIDIA allows 48 KB)."""
    while wg > 32 and wg * bytes_per_item > dev.ref.device.local_mem_size:
        wg //= 2
    return wg


class NQueensKernel:
    """One N-Queens kernel built for a board size, depth and symmetry mode; called on a batch of states."""

    variants: tuple[str, ...] = tuple(VARIANTS)
    default_variant = staticmethod(default_variant)

    @classmethod
    def build(cls, dev: DeviceContext, n: int, depth: int, symmetry: str, variant: str | None,
              count_nodes: bool) -> "NQueensKernel":
        return cls(dev, n, depth, symmetry, variant, count_nodes)

    @staticmethod
    def check(variant: str, symmetry: str) -> None:
        """Refuse a variant this build does not have, or one that cannot serve the symmetry mode."""
        if variant not in VARIANTS:
            raise UserError(f"unknown nqueens kernel {variant!r} (choose from {', '.join(VARIANTS)})")
        if symmetry not in LAYOUTS:
            raise UserError(f"unknown nqueens symmetry {symmetry!r} (choose from {', '.join(LAYOUTS)})")
        if VARIANTS[variant].private and symmetry not in TOP_DOWN:
            raise UserError(f"nqueens kernel {variant!r} has no symmetry {symmetry!r}: it needs symmetry "
                            f"{' or '.join(TOP_DOWN)} (use skip for {symmetry})")

    def __init__(self, dev: DeviceContext, n: int, depth: int, symmetry: str, variant: str | None = None,
                 count_nodes: bool = False, wg: int | None = None, build_options: tuple[str, ...] = ()) -> None:
        variant = variant or default_variant(dev, symmetry)
        self.check(variant, symmetry)
        spec = VARIANTS[variant]
        self.variant = variant
        self.dev, self.n, self.depth, self.count_nodes, self.spec = dev, n, depth, count_nodes, spec
        self.symmetry = symmetry
        stack = max(levels_left(n, depth, symmetry), 1)
        wg = wg or _fitting_work_group(dev, GPU_WORK_GROUP if dev.ref.is_gpu else 64, stack * spec.words(symmetry) * 4)
        self.local = wg if dev.ref.is_gpu or not spec.private else None
        options = [f"-DSTACK={stack}", f"-DWG={self.local or wg}", f"-DBORDER={int(symmetry == 'dihedral')}",
                   *spec.options, *build_options] + (["-DCOUNT_NODES"] if count_nodes else []) + (
                   ["-DEDGES=1"] if symmetry == "edges" else [])
        program = dev.program("nqueens.cl", tuple(options))
        self.builds = (build_id("nqueens.cl", tuple(options)),)  # recorded in the result
        self.kernel = cl.Kernel(program, spec.function)
        self.prepare = cl.Kernel(program, "nqueens_prepare")
        self.prepare_children = cl.Kernel(program, "nqueens_prepare_children")
        # the edges mode's leaf weights where a border queen ties (one table per board size)
        self.extra = [dev.constant(("edge_weight_masks", n), lambda: edge_weight_masks(n).reshape(-1))] if symmetry == "edges" else []

    def stage(self, batch: StateBatch | ChildBatch) -> Staged:
        """The pool's masks and the border columns uploaded (a ChildBatch's: its parents', with their
        choices and first children), and the counts zeroed (any thread)."""
        dev, nstates = self.dev, len(batch)
        if nstates == 0:
            return Staged(batch, [])
        states = batch.parents if isinstance(batch, ChildBatch) else batch
        m = states.masks
        if self.symmetry == "dihedral":  # left row, right row, bottom column
            border = [np.ascontiguousarray(states.prefix[:, k]) for k in (2, 3, 1)]
        elif self.symmetry == "edges":  # the prefix matrix; the device finds t and the side rows
            border = [np.ascontiguousarray(states.prefix).reshape(-1), np.zeros(1, np.uint8), np.zeros(1, np.uint8)]
        else:
            border = [np.zeros(1, np.uint8)] * 3
        ins = [upload(dev, m["cols"].astype(np.uint32, copy=False)), upload(dev, m["d1"].astype(np.uint64, copy=False)),
               upload(dev, m["d2"].astype(np.uint64, copy=False)), upload(dev, m["rows"].astype(np.uint32, copy=False)),
               *(upload(dev, column) for column in border)]
        if isinstance(batch, ChildBatch):
            ins += [upload(dev, batch.choices.astype(np.uint32)), upload(dev, batch.first[:-1].astype(np.uint32))]
        return Staged(batch, ins + [zeros(dev, nstates, np.uint64), zeros(dev, nstates if self.count_nodes else 1, np.uint64)])

    def _prepared(self, staged: Staged) -> tuple[list[cl.Buffer], cl.Event]:
        """cols, ld, rd, span and the border word of every state (nqueens.cl says what they mean),
        computed on the device from the pool's masks -- a ChildBatch's children made there from their
        parents' -- so the host only uploads columns it holds (no per-state work here, so the threads
        that feed several GPUs do not queue on the interpreter)."""
        dev, batch, ins = self.dev, staged.batch, staged.buffers[:-2]
        nstates = len(batch)
        outs = [cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 4 * nstates) for _ in range(5)]
        layout = np.uint32(LAYOUTS[self.symmetry])
        if isinstance(batch, ChildBatch):
            nparents = len(batch.parents)
            event = self.prepare_children(dev.queue, (nparents,), None, np.uint32(self.n), layout, np.uint32(nparents),
                                          np.uint32(batch.parents.prefix.shape[1]), *ins, *outs)
        else:
            event = self.prepare(dev.queue, (nstates,), None, np.uint32(self.n), layout, np.uint32(nstates),
                                 np.uint32(batch.prefix.shape[1]), *ins, *outs)
        return outs, event

    def __call__(self, batch: StateBatch | ChildBatch) -> BatchCounts:
        return self.run(self.stage(batch))

    def run(self, staged: Staged) -> BatchCounts:
        """Count a staged batch (in the device's own thread: it sets the kernels' arguments)."""
        nstates = len(staged.batch)
        if nstates == 0:
            return BatchCounts(np.zeros(0, np.uint64), np.zeros(0, np.uint64) if self.count_nodes else None, 0.0)
        dev = self.dev
        prepared, prep = self._prepared(staged)
        if self.spec.private:  # cols, ld, rd and the depth
            ins, head = prepared[:3], [np.uint32(self.n), np.uint32(self.depth), np.uint32(nstates)]
        else:  # and fl's buffer for three arguments that skip keeps but never reads (nqueens.cl says why)
            ins, head = prepared + [prepared[4]] * 3, [np.uint32(self.n), np.uint32(nstates)]
        counts, nodes = staged.buffers[-2:]
        seconds = timed_launch(dev, self.kernel, nstates, self.local, *head, *ins, counts, nodes, zeros(dev, 1, np.uint32),
                               *self.extra)
        seconds += event_seconds(prep)
        return BatchCounts(download(dev, counts, nstates, np.uint64),
                           download(dev, nodes, nstates, np.uint64) if self.count_nodes else None, seconds)
