"""Host side of the N-Queens kernels: upload a batch of states, count every completion of each."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.solver.opencl import DeviceContext, launch_lanes

VARIANTS = {"dfs": "nqueens_dfs", "dsl": "nqueens_dsl"}
DEFAULT_VARIANT = "dsl"  # measured faster on PoCL (README "Kernels"); GPU figures in bench/NOTES.md


@dataclass
class BatchCounts:
    """Per-state raw counts (uint64), optional per-state node counts, and the kernel's own time."""

    counts: np.ndarray
    nodes: np.ndarray | None
    kernel_seconds: float


class NQueensKernel:
    def __init__(self, dev: DeviceContext, n: int, depth: int, variant: str = DEFAULT_VARIANT, count_nodes: bool = False):
        if variant not in VARIANTS:
            raise UserError(f"unknown nqueens kernel {variant!r} (choose from {', '.join(VARIANTS)})")
        self.dev, self.n, self.depth, self.count_nodes = dev, n, depth, count_nodes
        options = [f"-DSTACK={max(n - depth, 1)}"] + (["-DCOUNT_NODES"] if count_nodes else [])
        self.kernel = cl.Kernel(dev.program("nqueens.cl", tuple(options)), VARIANTS[variant])
        self.local = 64 if dev.ref.is_gpu else None

    def __call__(self, batch: StateBatch) -> BatchCounts:
        nstates = len(batch)
        if nstates == 0:
            return BatchCounts(np.zeros(0, np.uint64), np.zeros(0, np.uint64) if self.count_nodes else None, 0.0)
        ctx, queue = self.dev.context, self.dev.queue
        mf = cl.mem_flags
        ins = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(batch.masks[k], np.uint32)) for k in ("cols", "ld", "rd")]
        counts = np.zeros(nstates, np.uint64)
        nodes = np.zeros(nstates if self.count_nodes else 1, np.uint64)
        counts_buf = cl.Buffer(ctx, mf.WRITE_ONLY, counts.nbytes)
        nodes_buf = cl.Buffer(ctx, mf.WRITE_ONLY, nodes.nbytes)
        next_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(1, np.uint32))
        lanes = launch_lanes(self.dev.ref, nstates, self.local)
        t0 = time.perf_counter()
        event = self.kernel(
            queue, (lanes,), (self.local,) if self.local else None,
            np.uint32(self.n), np.uint32(self.depth), np.uint32(nstates), *ins, counts_buf, nodes_buf, next_buf,
        )
        event.wait()
        wall = time.perf_counter() - t0
        try:
            seconds = (event.profile.end - event.profile.start) * 1e-9
        except cl.Error:
            seconds = wall
        cl.enqueue_copy(queue, counts, counts_buf)
        if self.count_nodes:
            cl.enqueue_copy(queue, nodes, nodes_buf)
        queue.finish()
        return BatchCounts(counts, nodes if self.count_nodes else None, seconds)
