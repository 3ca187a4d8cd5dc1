"""Refinement inside the task: a coarse pool's chunk is expanded to the grain its device
needs, then counted by the kernel built for the depth it reached.

Why: a GPU launch needs millions of states (16-32 per lane) to keep its warps busy, but a pool at that
grain for thousands of partitions does not fit on any host (N-Queens 24, 100 partitions: 16.6 GB).
So the pool holds as many states as partitioning and balance need, and each chunk -- a range of the
partition's coarse states, sized by time like any chunk -- is climbed (poolgen.generate.climb, the
pool's own ladder) until it holds the device's target: children stay beside their parent, the tree
order that keeps a warp's lanes in step. Memory is bounded by the refining ladder's limit (REFINE_FACTOR x the
target) per chunk in flight; the fine pool never exists as a whole.

A launch stops on time over heavy states too: a refined chunk expected to outlast the chunk bound is
counted in slices of its fine states (`next_slice`), and a stop request is honoured between slices;
the ledger keeps such a chunk open (jobs.counting.partial.OpenChunk: the depth it reached, how many fine
states are counted), and a resumed task refines it to that depth again and counts the rest, so no
fine state is counted twice or skipped. Chunks expected to be heavy are refined deeper (up to
MAX_DEEPEN x the target), so that their slices still hold enough states per lane.

The last level on the device, the levels above it on the host (chosen by measurement): expanding a
chunk is numpy over its states on the node's cores, done on a thread of its own while the device
counts the chunk before (jobs.counting.task; that thread also uploads the chunk's first launch and builds its
kernel), reusing the tested expansion and symmetry rules. But the last level holds most of the fine
states, and on an H100 making it on the host was the bound: 64 N-Queens 22 partitions of 1.65 s of
kernel each, every one refined from 586 states to 4.5 M, kept 0.85 of one partition's kernel rate, a
task's first launch ready 2.4 s after it started. So where the problem allows it (Problem.choices:
N-Queens, every state with two rows or more open) the host stops one level short and hands the device
each parent with its bitmask of next values (problems.base.ChildBatch); nqueens_prepare_children
places them in the host's order, dead children kept (they count 0), so the host's work and uploads
shrink by the level's growth (about 8x): that run then kept 0.93 (0.98 once
buffers were freed under the launch lock: solver.opencl.Staged.release), and N-Queens 21's first launch began
0.56 s into its task instead of 0.85 s. Costas keeps the host's expansion (16 states a lane: see
problems.costas for why not more).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from permenum.poolgen.generate import choices, climb, descend
from permenum.problems import Problem, StateBatch
from permenum.problems.base import ChildBatch
from permenum.solver.opencl import BatchCounts, Staged
from permenum.solver.registry import Solver


#: A refined chunk stops below its target where the next rung would pass this factor over it: on the
#: H100, N-Queens 21's first chunk (439 states) went to 20.3 M states at depth 9 under the pool's 4x,
#: 0.15 s of kernel for 1.6 s of host work and transfers (a few states per lane fill the GPU already).
REFINE_FACTOR = 2.0
#: A chunk is refined no deeper than this share of its rows: a state below it holds little work, so making
#: more of them to fill the lanes only moves the search to the host (H100: N-Queens 16's first chunk, 2,814
#: states, was climbed to 3.5 M at depth 12 in 1.7 s for 5 ms of kernel; N-Queens 18's second to depth 10
#: in 0.74 s for 2 ms). Sizes that need the device's grain reach it higher: N-Queens 21-22 at depth 8,
#: Costas 21 at 7.
DEEPEST_SHARE = 0.5
#: A chunk expected to take longer than its bound is refined up to this many times deeper than the
#: target (host memory: N-Queens states are about 50 bytes; an H100's target is 8.6 M states).
MAX_DEEPEN = 4
#: Launches per refined chunk at most: past it a slice outlasts the bound (the next chunks are
#: refined deeper, and smaller by the measured rate).
MAX_SLICES = 64


def deepen(expected_seconds: float | None, bound_seconds: float) -> float:
    """How much deeper than its target a chunk is refined: enough that a slice of target states takes
    half the bound at the expected rate (1 while the rate is not known)."""
    if expected_seconds is None:
        return 1.0
    return min(max(expected_seconds / (0.5 * bound_seconds), 1.0), MAX_DEEPEN)


def next_slice(done: int, total: int, counted: int, seconds: float, expected_seconds: float | None,
               bound_seconds: float) -> int:
    """Fine states of a refined chunk's next launch, from ``done`` of ``total`` (``counted`` of them in
    ``seconds`` of kernel, by this attempt or the one that began it): the rest where it fits the bound, by the rate measured or else
    by the scheduler's expectation; else what half the bound holds at that rate; with neither, an
    eighth of the chunk to measure it. Never below total / MAX_SLICES."""
    rest = total - done
    floor = max(1, -(-total // MAX_SLICES))
    if counted:
        per_state = seconds / counted
        if per_state * rest <= bound_seconds:
            return rest
        return min(rest, max(floor, int(0.5 * bound_seconds / max(per_state, 1e-12))))
    if expected_seconds is not None and expected_seconds * rest / total <= bound_seconds:
        return rest
    return min(rest, max(floor, total // 8))


class RefiningSolver:
    """A device's kernels over chunks of any grain: each chunk climbed to ``target`` states (None: as it is).

    A kernel is built for each depth the first time a batch of that depth is staged, on the thread that
    stages it (the one refining ahead), so neither a build nor an upload waits in the device's thread."""

    def __init__(self, build: Callable[[int], Solver], variant: str, problem: Problem, n: int, symmetry: str,
                 target: int | None, launching: threading.Lock):
        self._build, self._solvers = build, dict[int, Solver]()
        self._launching = launching  # the device's (solver.opencl.DeviceContext.launching)
        self._lock = threading.Lock()  # the refining thread and the device's thread both look kernels up
        self.variant = variant  # the kernel build every depth's solver runs (recorded in the result)
        self.problem, self.n, self.symmetry, self.target = problem, n, symmetry, target

    def refine(self, chunk: StateBatch, scale: float = 1.0, depth: int | None = None) -> StateBatch | ChildBatch:
        """``chunk`` climbed to ``scale`` x the target, or expanded to exactly ``depth`` (an open chunk);
        the last level made on the device (ChildBatch) where the problem allows it."""
        if depth is not None:
            return self._fine_at(chunk, depth)
        target = None if self.target is None else int(self.target * scale)
        if target is None or len(chunk) >= target or chunk.depth >= self.deepest:
            return chunk
        return self._climb(chunk, target)

    @property
    def deepest(self) -> int:
        """The depth a refinement stops at, whatever its target (DEEPEST_SHARE)."""
        return max(1, int(self.n * DEEPEST_SHARE))

    def _fine_at(self, chunk: StateBatch, depth: int) -> StateBatch | ChildBatch:
        """The fine states of ``chunk`` at ``depth``, one rule for a first refinement and a resumed one:
        the children of the rung above made on the device where the problem allows it there, else the
        host's rung at that depth."""
        parents = descend(self.problem, self.n, chunk, self.symmetry, depth - 1)
        made = choices(self.problem, self.n, parents, self.symmetry) if parents.depth == depth - 1 else None
        if made is None:
            return descend(self.problem, self.n, parents, self.symmetry, depth)
        return ChildBatch(parents, made)

    def _climb(self, chunk: StateBatch, target: int) -> StateBatch | ChildBatch:
        """Rungs on the host until the children of the last one reach ``target`` (or the next rung's
        would pass REFINE_FACTOR x it, at the growth seen last, or the next rung has fewer states: the
        ladder's rules; or they are at the deepest depth): the children, the rung that holds most
        states, are then made on the device.
        Where the problem has no ChildBatch from the chunk on, the ladder on the host. What it returns
        is always ``_fine_at(chunk, its depth)``, so a resumed chunk is rebuilt state for state."""
        batch, children = chunk, None
        while True:
            made = choices(self.problem, self.n, batch, self.symmetry)
            if made is None:  # a state of this rung is one row from complete
                if children is not None:
                    return children
                return climb(self.problem, self.n, target, REFINE_FACTOR, self.symmetry, start=batch, predict=True,
                             deepest=self.deepest).states
            children = ChildBatch(batch, made)
            if (len(children) >= target or len(children) ** 2 / len(batch) > REFINE_FACTOR * target
                    or children.depth >= self.deepest):
                return children
            deeper = descend(self.problem, self.n, batch, self.symmetry, batch.depth + 1)
            if len(deeper) < len(batch):
                return children
            batch = deeper

    def stage(self, batch: StateBatch | ChildBatch) -> Staged:
        """``batch``'s inputs on the device, the kernel for its depth built (any thread)."""
        return self._solver(batch.depth).stage(batch)

    def count(self, work: StateBatch | ChildBatch | Staged) -> BatchCounts:
        """Count a batch, staged ahead or not (in the device's own thread)."""
        staged = work if isinstance(work, Staged) else self.stage(work)
        solver = self._solver(staged.batch.depth)
        with self._launching:  # its buffers freed before another task's kernel may start (Staged.release)
            out = solver.run(staged)
            staged.release()
            return out

    def discard(self, staged: Staged) -> None:
        """Free a staged batch that will not be counted, under the launch lock (Staged.release says why)."""
        with self._launching:
            staged.release()

    @property
    def builds(self) -> tuple[str, ...]:
        """Every program its depths' kernels built (solver.opencl.build_id), for the result."""
        with self._lock:
            return tuple(sorted({b for s in self._solvers.values() for b in s.builds}))

    def _solver(self, depth: int) -> Solver:
        with self._lock:
            if depth not in self._solvers:
                self._solvers[depth] = self._build(depth)
            return self._solvers[depth]
