"""Ladder climbing (DoubleSweep-Light paper): lock one more row/column at a time until the pool is big enough.

Rules, in order, at each rung: stop when the pool has reached the soft target ``S``; stop when the
next rung would exceed the hard limit ``factor * S``; stop when the next rung is smaller than this
one (a downward slope: deeper would only shrink the pool and lose parallelism); stop when the
states are complete. Every state kept can still be advanced (dead ends are removed on expansion).

A rung is built from slices of its parents and abandoned as soon as it passes the hard limit (its
count in ``rungs`` is then where it was abandoned): N-Queens 21 built an 18.9 M-state rung, 2.6 GB,
only to refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from permenum.problems import Problem, StateBatch

EXPAND_SLICE = 1 << 15  # parents expanded at once


@dataclass
class LadderResult:
    states: StateBatch
    depth: int
    rungs: list[int] = field(default_factory=list)  # pool size at every depth tried
    stop_reason: str = ""


def climb(problem: Problem, n: int, target: int, factor: float, symmetry: str,
          start: StateBatch | None = None) -> LadderResult:
    """The ladder from the root, or from ``start`` (a task refining a coarse chunk, jobs.refine)."""
    batch = problem.root(n, symmetry) if start is None else start
    rungs = [len(batch)]
    while True:
        if len(batch) >= target:
            reason = f"reached the target {target}"
            break
        if problem.complete(n, batch) or len(batch) == 0:
            reason = "states are complete" if len(batch) else "no state survives"
            break
        nxt = _next_rung(problem, n, batch, symmetry, int(factor * target))
        if isinstance(nxt, int):
            rungs.append(nxt)
            reason = f"next rung (over {nxt}) exceeds the hard limit {factor:g} x {target}"
            break
        rungs.append(len(nxt))
        if len(nxt) < len(batch):
            reason = f"downward slope ({len(batch)} -> {len(nxt)})"
            break
        batch = nxt
    return LadderResult(batch, batch.depth, rungs, reason)


def _next_rung(problem: Problem, n: int, batch: StateBatch, symmetry: str, limit: int) -> StateBatch | int:
    """The next rung, or the count at which it passed ``limit`` (then it is not built further)."""
    parts: list[StateBatch] = []
    count = 0
    for start in range(0, len(batch), EXPAND_SLICE):
        part = problem.expand(n, batch.take(slice(start, start + EXPAND_SLICE)), symmetry)
        count += len(part)
        if count > limit:
            return count
        parts.append(part)
    return StateBatch.concat(parts)  # climb() never expands an empty rung
