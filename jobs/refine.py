"""Refinement inside the task: a coarse pool's chunk is expanded on the host to the grain its device
needs, then counted by the kernel built for the depth it reached.

Why: a GPU launch needs millions of states (16-32 per lane) to keep its warps busy, but a pool at that
grain for thousands of partitions does not fit on any host (N-Queens 24, 100 partitions: 16.6 GB).
So the pool holds as many states as partitioning and balance need, and each chunk -- a range of the
partition's coarse states, sized by time like any chunk -- is climbed (poolgen.generate.climb, the
pool's own ladder) until it holds the device's target: children stay beside their parent, the tree
order that keeps a warp's lanes in step. Memory is bounded by the refining ladder's limit (REFINE_FACTOR x the
target) per chunk in flight; the fine pool never exists as a whole. Checkpoints stay exact because
the chunk ledger counts coarse states: a chunk is counted whole or not at all.

On the host rather than in an OpenCL expansion step, for now: expanding a chunk is numpy over a few
million states on the node's cores, done on a thread of its own while the device counts the chunk
before (jobs.task), and it reuses the tested expansion and symmetry weights instead of a second
implementation of them in OpenCL. What refinement still costs on an H100 is in bench/NOTES.md
(session 9): mostly the refined chunk's transfers and tally, not the climb.
"""

from __future__ import annotations

from collections.abc import Callable

from permenum.poolgen.generate import climb
from permenum.problems import Problem, StateBatch
from permenum.solver.opencl import BatchCounts
from permenum.solver.registry import Solver


#: A refined chunk stops below its target where the next rung would pass this factor over it: on the
#: H100, N-Queens 21's first chunk (439 states) went to 20.3 M states at depth 9 under the pool's 4x,
#: 0.15 s of kernel for 1.6 s of host work and transfers (a few states per lane fill the GPU already).
REFINE_FACTOR = 2.0


class RefiningSolver:
    """A device's kernels over chunks of any grain: each chunk climbed to ``target`` states (None: as it is)."""

    def __init__(self, build: Callable[[int], Solver], depth: int, problem: Problem, n: int, symmetry: str,
                 target: int | None):
        self._build, self._solvers = build, {depth: build(depth)}  # the pool's depth now: it times the setup
        self.problem, self.n, self.symmetry, self.target = problem, n, symmetry, target
        self.variant = self._solvers[depth].variant

    def refine(self, chunk: StateBatch) -> StateBatch:
        if self.target is None or len(chunk) >= self.target:
            return chunk
        return climb(self.problem, self.n, self.target, REFINE_FACTOR, self.symmetry, start=chunk, predict=True).states

    def count(self, fine: StateBatch) -> BatchCounts:
        """Count refined states with the kernel built for their depth (built here, in the device's thread)."""
        if fine.depth not in self._solvers:
            self._solvers[fine.depth] = self._build(fine.depth)
        return self._solvers[fine.depth](fine)
