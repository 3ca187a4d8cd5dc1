"""Host side of the N-Queens kernels: upload a batch of states, count every completion of each.

Every kernel but ``lds64`` takes masks shifted to the next open row, which a first kernel
(``nqueens_prepare``) computes on the device from the pool's absolute masks. ``skip`` (the default),
``fused``, ``lds`` and their variants serve
every symmetry mode -- for the dihedral mode with the border prepared the same way; ``lds64``/
``lds64-plain`` read the absolute masks themselves; ``dsl`` and ``dfs`` only the top-down modes
(mirror, none). All but the defaults are kept to compare (bench/NOTES.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.problems.nqueens import NQueens, edge_weight_masks
from permenum.solver.opencl import BatchCounts, DeviceContext, download, event_seconds, timed_launch, upload, zeros

@dataclass(frozen=True)
class Variant:
    """One selectable kernel build: its function, extra build options, what it reads, its stack."""

    function: str
    options: tuple[str, ...] = ()
    reads: str = "shifted"  # "shifted": next-row masks; "events" / "table": those plus the border (nqueens.cl's
    # EVENTS / TABLE layouts); "absolute": pool masks
    stack_words: int = 4  # 32-bit words per level and work-item in __local memory (0: private stacks)
    table_words: int = 0  # words per level added by the border table (dihedral mode only)

    def words(self, symmetry: str) -> int:
        """__local words per level and work-item in this symmetry mode."""
        return self.stack_words + (self.table_words if symmetry == "dihedral" else 0)

    @property
    def any_mode(self) -> bool:
        """Whether it fills around the dihedral border (the others need the top-down modes)."""
        return self.reads != "shifted"


VARIANTS: dict[str, Variant] = {
    "lds": Variant("nqueens_lds", reads="events"),
    "lds-batch": Variant("nqueens_lds", ("-DPERSIST=0",), reads="events"),
    "lds-l2": Variant("nqueens_lds", ("-DLAST_TWO=1",), reads="events"),
    "lds2": Variant("nqueens_lds", ("-DPACKED=1",), reads="events", stack_words=2),
    "lds64": Variant("nqueens_lds64", ("-DLAST_TWO=1",), reads="absolute", stack_words=2),
    "lds64-plain": Variant("nqueens_lds64", ("-DLAST_TWO=0",), reads="absolute", stack_words=2),
    "fused": Variant("nqueens_fused", reads="events", stack_words=3),
    "fused-l2": Variant("nqueens_fused", ("-DLEAF_ROWS=2",), reads="events", stack_words=3),
    "fused-la": Variant("nqueens_fused", ("-DLOOKAHEAD=1",), reads="events", stack_words=3),
    "fused-keep": Variant("nqueens_fused", ("-DSKIP_DEAD=0",), reads="events", stack_words=3),
    "fused-sd": Variant("nqueens_fused", ("-DSTORE_ON_DESCENT=1",), reads="events", stack_words=3),
    "fused-t": Variant("nqueens_fused", ("-DTABLE=1",), reads="table", stack_words=3, table_words=1),
    "skip": Variant("nqueens_skip", ("-DTABLE=1",), reads="table", stack_words=4, table_words=1),
    "skip-ev": Variant("nqueens_skip", ("-DFILTER=0",), reads="events", stack_words=4),
    "skip-nf": Variant("nqueens_skip", ("-DTABLE=1", "-DEDGE_FORCING=0"), reads="table", stack_words=4, table_words=1),
    "skip-all": Variant("nqueens_skip", ("-DTABLE=1", "-DFILTER=0"), reads="table", stack_words=4, table_words=1),
    "skip-soa": Variant("nqueens_skip", ("-DTABLE=1", "-DSLOT_VEC=0"), reads="table", stack_words=4, table_words=1),
    "skip-sel": Variant("nqueens_skip", ("-DTABLE=1", "-DPOP_SIBLINGS=0"), reads="table", stack_words=4, table_words=1),
    "dsl": Variant("nqueens_dsl", stack_words=0),
    "dfs": Variant("nqueens_dfs", stack_words=0),
}


def default_variant(dev: DeviceContext) -> str:
    """skip on a GPU (H200, N=21 edges: 11.49 s vs 14.47 s for skip-all, the same search without the
    dead-child filter); on a CPU skip-soa, the same kernel with its slot words apart (PoCL N=16 edges,
    two runs: 2.01 / 1.91 s vs 2.17 / 2.10 s for skip: work-items vectorize over word-major slots)."""
    return "skip" if dev.ref.is_gpu else "skip-soa"


LAYOUTS = {"events": 1, "table": 2}  # nqueens_prepare's border layouts (0: top-down, no border)
LAYOUT_EDGES = 3  # top-down masks and the edges mode's word (t, column 0's and n-1's rows)
# the kernels with the edges mode's bounds and leaf weights: nqueens_skip in its table builds (skip-ev reads events)
EDGES_VARIANTS = tuple(name for name, v in VARIANTS.items() if v.function == "nqueens_skip" and v.reads == "table")
GPU_WORK_GROUP = 128  # H200, lds dihedral N=20: 7.17 s vs 7.68 s at 64, 7.14 s at 256 (bench/NOTES.md)
TOP_DOWN = ("mirror", "none")  # symmetry modes whose open rows are one block at the bottom


def _fitting_work_group(dev: DeviceContext, wg: int, bytes_per_item: int) -> int:
    """``wg``, halved while the work-group's stacks would not fit the device's __local memory
    (N-Queens 31-32 with few rows placed: 2 KB per level at 128 work-items, NVIDIA allows 48 KB)."""
    while wg > 32 and wg * bytes_per_item > dev.ref.device.local_mem_size:
        wg //= 2
    return wg


class NQueensKernel:
    def __init__(self, dev: DeviceContext, n: int, depth: int, symmetry: str, variant: str | None = None,
                 count_nodes: bool = False, wg: int | None = None, build_options: tuple[str, ...] = ()):
        variant = variant or default_variant(dev)
        if variant not in VARIANTS:
            raise UserError(f"unknown nqueens kernel {variant!r} (choose from {', '.join(VARIANTS)})")
        if variant == "lds2" and n > 30:
            raise UserError("nqueens kernel 'lds2' keeps two flags in a 32-bit word: n <= 30 (use lds)")
        spec = VARIANTS[variant]
        if symmetry == "edges" and variant not in EDGES_VARIANTS:
            raise UserError(f"nqueens kernel {variant!r} has no symmetry 'edges' (use skip)")
        if not spec.any_mode and symmetry not in TOP_DOWN:
            raise UserError(f"nqueens kernel {variant!r} needs symmetry {' or '.join(TOP_DOWN)}; use lds for {symmetry}")
        self.dev, self.n, self.depth, self.count_nodes, self.spec = dev, n, depth, count_nodes, spec
        self.symmetry = symmetry
        stack = max(NQueens().levels_left(n, depth, symmetry), 1)
        wg = wg or _fitting_work_group(dev, GPU_WORK_GROUP if dev.ref.is_gpu else 64, stack * spec.words(symmetry) * 4)
        self.local = wg if dev.ref.is_gpu or spec.stack_words else None
        options = [f"-DSTACK={stack}", f"-DWG={self.local or wg}", f"-DBORDER={int(symmetry == 'dihedral')}",
                   *spec.options, *build_options] + (["-DCOUNT_NODES"] if count_nodes else []) + (
                   ["-DEDGES=1"] if symmetry == "edges" else [])
        program = dev.program("nqueens.cl", tuple(options))
        self.kernel = cl.Kernel(program, spec.function)
        self.prepare = cl.Kernel(program, "nqueens_prepare")
        # the edges mode's leaf weights where a border queen ties (one table per board size)
        self.extra = [upload(dev, edge_weight_masks(n).reshape(-1))] if symmetry == "edges" else []

    def _prepared(self, batch: StateBatch) -> tuple[list[cl.Buffer], cl.Event]:
        """cols, ld, rd, span, fl, fr, e1, e2 of every state in the variant's layout (nqueens.cl says what
        they mean), computed on the device from the pool's masks: the host only uploads columns it holds
        (no per-state work here, so the threads that feed several GPUs do not queue on the interpreter)."""
        dev, nstates, m = self.dev, len(batch), batch.masks
        if self.symmetry == "dihedral":
            layout = LAYOUTS[self.spec.reads]
            border = [np.ascontiguousarray(batch.prefix[:, k]) for k in (2, 3, 1)]
        elif self.symmetry == "edges":  # the prefix matrix; the device finds t and the side rows
            layout, border = LAYOUT_EDGES, [np.ascontiguousarray(batch.prefix).reshape(-1), np.zeros(1, np.uint8), np.zeros(1, np.uint8)]
        else:
            layout, border = 0, [np.zeros(1, np.uint8)] * 3
        ins = [upload(dev, m["cols"].astype(np.uint32, copy=False)), upload(dev, m["d1"].astype(np.uint64, copy=False)),
               upload(dev, m["d2"].astype(np.uint64, copy=False)), upload(dev, m["rows"].astype(np.uint32, copy=False)),
               *(upload(dev, column) for column in border)]  # left row, right row, bottom column
        outs = [cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 4 * nstates) for _ in range(8)]
        event = self.prepare(dev.queue, (nstates,), None, np.uint32(self.n), np.uint32(layout), np.uint32(nstates),
                             np.uint32(batch.prefix.shape[1]),
                             *ins, *outs)
        return outs, event

    def __call__(self, batch: StateBatch) -> BatchCounts:
        nstates = len(batch)
        if nstates == 0:
            return BatchCounts(np.zeros(0, np.uint64), np.zeros(0, np.uint64) if self.count_nodes else None, 0.0)
        dev = self.dev
        if self.spec.reads == "absolute":
            ins = [upload(dev, batch.masks[k].astype(t)) for k, t in
                   (("cols", np.uint32), ("d1", np.uint64), ("d2", np.uint64), ("rows", np.uint32))]
            head: list[object] = [np.uint32(self.n), np.uint32(nstates)]
        else:
            prepared, prep = self._prepared(batch)
            if self.spec.reads in LAYOUTS:
                ins, head = prepared, [np.uint32(self.n), np.uint32(nstates)]
            else:  # the top-down kernels read the first three
                ins, head = prepared[:3], [np.uint32(self.n), np.uint32(self.depth), np.uint32(nstates)]
        counts = zeros(dev, nstates, np.uint64)
        nodes = zeros(dev, nstates if self.count_nodes else 1, np.uint64)
        seconds = timed_launch(dev, self.kernel, nstates, self.local, *head, *ins, counts, nodes, zeros(dev, 1, np.uint32),
                               *self.extra)
        if self.spec.reads != "absolute":
            seconds += event_seconds(prep)
        return BatchCounts(download(dev, counts, nstates, np.uint64),
                           download(dev, nodes, nstates, np.uint64) if self.count_nodes else None, seconds)
