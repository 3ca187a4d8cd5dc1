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

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from permenum.problems import Problem, StateBatch

EXPAND_SLICE = 1 << 15  # parents expanded at once
EXPAND_THREADS = 16  # slices expanded side by side
#: Fewest parents a slice holds where a rung is split so that every thread has one: below it a thread's
#: hand-off costs more than the numpy it runs.
LEAST_SLICE = 1 << 12

T = TypeVar("T")


@dataclass
class LadderResult:
    states: StateBatch
    depth: int
    rungs: list[int] = field(default_factory=list)  # pool size at every depth tried
    stop_reason: str = ""
    capped: bool = False  # stopped by the hard limit: the next rung was too large to hold, not too small


def climb(problem: Problem, n: int, target: int, factor: float, symmetry: str,
          start: StateBatch | None = None, predict: bool = False, deepest: int | None = None) -> LadderResult:
    """The ladder from the root, or from ``start`` (a task refining a coarse chunk, jobs.counting.refine).

    ``predict``: also stop where the last rung's growth says the next one would pass the hard limit,
    without building it (refinement: N-Queens 21, 1024 states, built 34.5 M of a rung only to drop it,
    12.4 s of 17.5). Pools do not predict, so that the same settings keep giving the same pool.
    ``deepest``: also stop at that depth (refinement: jobs.counting.refine.DEEPEST_SHARE)."""
    batch = problem.root(n, symmetry) if start is None else start
    rungs = [len(batch)]
    growth = 0.0
    capped = False
    while True:
        if len(batch) >= target:
            reason = f"reached the target {target}"
            break
        if problem.complete(n, batch) or len(batch) == 0:
            reason = "states are complete" if len(batch) else "no state survives"
            break
        if deepest is not None and batch.depth >= deepest:
            reason = f"reached the deepest depth {deepest}"
            break
        if predict and len(batch) * growth > factor * target:
            reason = f"next rung (about {len(batch) * growth:.0f}) would exceed the hard limit {factor:g} x {target}"
            capped = True
            break
        nxt = _next_rung(problem, n, batch, symmetry, int(factor * target))
        if isinstance(nxt, int):
            rungs.append(nxt)
            reason = f"next rung (over {nxt}) exceeds the hard limit {factor:g} x {target}"
            capped = True
            break
        rungs.append(len(nxt))
        growth = len(nxt) / len(batch)
        if len(nxt) < len(batch):
            reason = f"downward slope ({len(batch)} -> {len(nxt)})"
            break
        batch = nxt
    return LadderResult(batch, batch.depth, rungs, reason, capped)


def descend(problem: Problem, n: int, batch: StateBatch, symmetry: str, depth: int) -> StateBatch:
    """``batch`` expanded to exactly ``depth``, in the order `climb` builds it (a resumed task refines a
    chunk it began again, to the depth it reached then: jobs.counting.partial.OpenChunk)."""
    while batch.depth < depth and len(batch):
        nxt = _next_rung(problem, n, batch, symmetry, 1 << 62)
        assert not isinstance(nxt, int)
        batch = nxt
    return batch


def expand_with_parents(problem: Problem, n: int, parents: StateBatch, symmetry: str) -> tuple[StateBatch, np.ndarray]:
    """``problem.expand`` of ``parents``, and each child's parent (its index in ``parents``): the state
    whose prefix the child's begins with (expand keeps prefixes; a parent may have no child left, dead
    ends are dropped), found by a hash of the prefix and then checked."""
    children = problem.expand(n, parents, symmetry)
    d = parents.depth
    key = (parents.prefix.astype(np.uint64) * _PREFIX_HASH[:d]).sum(axis=1, dtype=np.uint64)  # wraps: a hash
    order = np.argsort(key, kind="stable")
    child_key = (children.prefix[:, :d].astype(np.uint64) * _PREFIX_HASH[:d]).sum(axis=1, dtype=np.uint64)
    parent = order[np.minimum(np.searchsorted(key[order], child_key), max(len(parents) - 1, 0))]
    if not np.array_equal(parents.prefix[parent], children.prefix[:, :d]) or np.any(np.diff(parent) < 0):
        raise RuntimeError("children not in their parents' order, or a prefix hash matched the wrong parent")
    return children, parent


#: Odd 64-bit multipliers, one per prefix entry: expand_with_parents' hash of a prefix.
_PREFIX_HASH = np.random.default_rng(0x50726566).integers(1, 1 << 63, size=64, dtype=np.uint64) | np.uint64(1)


def _next_rung(problem: Problem, n: int, batch: StateBatch, symmetry: str, limit: int) -> StateBatch | int:
    """The next rung, or the count at which it passed ``limit`` (then it is not built further); the same
    as one thread's (``by_slices``)."""
    parts: list[StateBatch] = []
    count = 0
    for part in by_slices(lambda piece: problem.expand(n, piece, symmetry), batch):
        count += len(part)
        if count > limit:
            return count
        parts.append(part)
    return StateBatch.concat(parts)  # climb() never expands an empty rung


def choices(problem: Problem, n: int, batch: StateBatch, symmetry: str) -> np.ndarray | None:
    """``problem.choices`` of ``batch`` (None where some state has none), made by slices (``by_slices``)."""
    parts = list(by_slices(lambda piece: problem.choices(n, piece, symmetry), batch))
    if any(part is None for part in parts):
        return None
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def by_slices(work: Callable[[StateBatch], T], batch: StateBatch) -> Iterator[T]:
    """``work`` over slices of ``batch``'s rows, in their order, on up to EXPAND_THREADS threads (the CPUs
    this process may use): numpy leaves the GIL on these sizes, so a GPU node's cores refine a task's
    chunk side by side (N-Queens 21's first chunk, 1,758 states made into 10.6 M: its first launch waited
    on this). A rung is cut so that every thread gets a slice of at least LEAST_SLICE parents, at most
    EXPAND_SLICE; slices go a wave at a time, so memory stays near what one wave makes."""
    threads = max(1, min(EXPAND_THREADS, len(os.sched_getaffinity(0))))
    size = min(EXPAND_SLICE, max(LEAST_SLICE, -(-len(batch) // threads)))
    slices = [slice(start, start + size) for start in range(0, len(batch), size)]
    if len(slices) <= 1:
        yield work(batch)
        return
    with ThreadPoolExecutor(max_workers=min(threads, len(slices))) as pool:
        for wave in range(0, len(slices), threads):
            yield from pool.map(lambda sl: work(batch.take(sl)), slices[wave:wave + threads])
