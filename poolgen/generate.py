"""Ladder climbing (DoubleSweep-Light paper): lock one more row/column at a time until the pool is big enough.

Rules, in order, at each rung: stop when the pool has reached the soft target ``S``; stop when the
next rung would exceed the hard limit ``factor * S``; stop when the next rung is smaller than this
one (a downward slope: deeper would only shrink the pool and lose parallelism); stop when the
states are complete. Every state kept can still be advanced (dead ends are removed on expansion).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from permenum.problems import Problem, StateBatch


@dataclass
class LadderResult:
    states: StateBatch
    depth: int
    rungs: list[int] = field(default_factory=list)  # pool size at every depth tried
    stop_reason: str = ""


def climb(problem: Problem, n: int, target: int, factor: float, symmetry: str) -> LadderResult:
    batch = problem.root(n, symmetry)
    rungs = [len(batch)]
    while True:
        if len(batch) >= target:
            reason = f"reached the target {target}"
            break
        if problem.complete(n, batch) or len(batch) == 0:
            reason = "states are complete" if len(batch) else "no state survives"
            break
        nxt = problem.expand(n, batch, symmetry)
        rungs.append(len(nxt))
        if len(nxt) > factor * target:
            reason = f"next rung ({len(nxt)}) exceeds the hard limit {factor:g} x {target}"
            break
        if len(nxt) < len(batch):
            reason = f"downward slope ({len(batch)} -> {len(nxt)})"
            break
        batch = nxt
    return LadderResult(batch, batch.depth, rungs, reason)
