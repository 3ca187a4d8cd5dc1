"""Per-state cost estimates: Knuth's random-probe estimate of the size of each state's subtree.

Why: states at the same depth differ in how much search they hide, so partitions of equal row count
need not take equal time. The pool writer deals out partitions of equal *estimated* cost with
these numbers, stores them (``est_cost``), and the ledger sets them against the measured cost.

Knuth (1975): walk down from a state choosing one child uniformly at random at every level until
a dead end or a complete solution; with b_i the number of children met at level i,
``1 + b1 + b1*b2 + ...`` is an unbiased estimate of the subtree's node count. That is what the
kernels' node-counting build counts for the plain DFS (the state, every placement, the leaves);
the DoubleSweep-Light kernel visits fewer nodes, roughly in proportion (0.68x on N-Queens 17).
The mean of ``probes`` walks per state is stored; :func:`default_probes` gives small pools more.

All walks of all states advance together, one level per step, as numpy arrays: a problem only says
which values may come next (a uint32 mask, bit v = value v) and how a state takes one. The random
stream is seeded, so the same pool gives the same estimates, bit for bit. Measured on the 2 cores
here with 32 walks per state: N-Queens 17 (114k states) 1.1 s, Costas 17 (213k states) 5 s.
Against the node-counting build on N-Queens 17, the per-state estimate correlates 0.90 (Pearson)
with the plain DFS's nodes and 0.89 with DoubleSweep-Light's (0.94 / 0.94 with 64 walks, 0.98 / 0.98
with 256); the estimates' sum is within 0.1% of the plain DFS's node total.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from permenum.problems import Problem, StateBatch
from permenum.problems.base import Walk

MIN_PROBES, MAX_PROBES = 1, 1024
WALK_BUDGET = 1 << 21  # walks per pool when the pool is small enough: about a second here
#: Walks per partition where fewer partitions need fewer: balance needs each partition's *sum* precise,
#: and 32 k walks make it so; an `enumerate` of 1-4 partitions then walks for 0.02-0.07 s, not a second
#: (N-Queens 16 on PoCL here: the walks were a third of the whole command).
WALKS_PER_PARTITION = 1 << 15
_CHUNK_WALKS = 1 << 18  # walks advanced at once: bounds memory (Costas: n x 8 bytes per walk) for pools of any size
WALK_THREADS = 16  # chunks walked side by side (N-Queens 21 pool on a 16-core node: 16.7 s instead of ~35 s)


@functools.cache
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """Popcount of every 16-bit value, and the position of its k-th set bit (``select[v, k]``); made on first
    use, not at import (35-50 ms of every command that imports the pool's writer)."""
    values = np.arange(1 << 16, dtype=np.uint32)
    bits = ((values[:, None] >> np.arange(16, dtype=np.uint32)) & 1).astype(np.uint8)
    select = np.argsort(1 - bits, axis=1, kind="stable").astype(np.uint8)  # set bits first, ascending
    pop = bits.sum(axis=1).astype(np.uint8)
    pop.setflags(write=False)
    select.setflags(write=False)
    return pop, select


def _pick(mask: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Branching factor of each uint32 mask, and a uniformly chosen set bit (``u`` in [0, 1))."""
    pop16, select16 = _tables()
    lo, hi = mask & np.uint32(0xFFFF), mask >> np.uint32(16)
    count_lo = pop16[lo].astype(np.int64)
    count = count_lo + pop16[hi]
    k = (u * count).astype(np.int64)  # < count, since u < 1
    upper = k >= count_lo
    half = np.where(upper, hi, lo)
    k = k - np.where(upper, count_lo, 0)
    return count, select16[half, k].astype(np.int64) + 16 * upper


def default_probes(states: int, partitions: int | None = None) -> int:
    """Walks per state: the pool gets about WALK_BUDGET walks in all (a second here), so a small pool gets
    many per state (few states per partition: each estimate weighs) and a pool of millions one per state
    (its partitions average out millions of noisy estimates; 32 per state made a 7 M-state pool take
    100 s on a GPU node). A pool of few ``partitions`` gets WALKS_PER_PARTITION a partition, if fewer."""
    budget = WALK_BUDGET if partitions is None else min(WALK_BUDGET, WALKS_PER_PARTITION * partitions)
    return int(min(MAX_PROBES, max(MIN_PROBES, budget // max(states, 1))))


def estimate_costs(problem: Problem, n: int, batch: StateBatch, symmetry: str, probes: int = MIN_PROBES,
                   seed: int = 0) -> np.ndarray:
    """(rows,) float64: the mean Knuth estimate of every state's subtree node count over ``probes`` walks."""
    per_chunk = max(1, _CHUNK_WALKS // probes)
    levels = problem.levels_left(n, batch.depth, symmetry)
    out = np.empty(len(batch))

    def chunk(index: int) -> None:
        # each chunk its own stream (the shuffle's is untouched): the same pool gives the same
        # estimates however many threads walk it
        rng = np.random.default_rng([seed, 0x4B6E7574, index])
        start = index * per_chunk
        part = batch.take(slice(start, start + per_chunk))
        walk = np.repeat(np.arange(len(part)), probes)  # walk w belongs to state w // probes
        out[start : start + len(part)] = _walk(problem.walk(n, part.take(walk), symmetry), len(walk), rng, levels).reshape(-1, probes).mean(axis=1)

    chunks = range(-(-len(batch) // per_chunk))
    # numpy leaves the GIL on these array sizes: a GPU node's cores walk chunks side by side
    # at most WALK_THREADS chunks in memory at once, and no more threads than this process may use
    _tables()  # made here, once, not by each thread that would miss the cache at the same moment
    with ThreadPoolExecutor(max_workers=max(1, min(len(chunks), WALK_THREADS, len(os.sched_getaffinity(0))))) as pool:
        list(pool.map(chunk, chunks))
    return out


#: Walks again for each state whose estimate alone is a large share of a partition's (settle_outliers).
OUTLIER_PROBES = 64
OUTLIER_SHARE = 0.25


def settle_outliers(problem: Problem, n: int, batch: StateBatch, symmetry: str, costs: np.ndarray, probes: int,
                    partitions: int, seed: int = 0) -> np.ndarray:
    """``costs`` with every state whose estimate passes OUTLIER_SHARE of a partition's mean walked
    OUTLIER_PROBES times more (its estimate then the mean of all its walks).

    Why: a pool of millions gets one walk a state, and a Knuth estimate is heavy-tailed: at Costas 29 into
    20,000 partitions single walks put 6 states at 1.1-2.6x a partition's mean cost, so the partitions
    dealt around them came out up to 2.16x the mean (centre mode; 256 walks put those states at 0.01-0.02x).
    The few such states cost a fraction of a second more; the partitions are then dealt by what they hold."""
    if partitions <= 1 or len(costs) == 0 or probes >= OUTLIER_PROBES:  # already walked as often
        return costs
    limit = OUTLIER_SHARE * float(np.sum(costs, dtype=np.float64)) / partitions
    heavy = np.nonzero(costs > limit)[0]
    if len(heavy) == 0:
        return costs
    again = estimate_costs(problem, n, batch.take(heavy), symmetry, OUTLIER_PROBES, seed + 1)
    settled = costs.copy()
    settled[heavy] = (probes * costs[heavy] + OUTLIER_PROBES * again) / (probes + OUTLIER_PROBES)
    return settled


def _walk(walk: Walk, rows: int, rng: np.random.Generator, levels: int) -> np.ndarray:
    """Advance all ``rows`` walks to their ends; returns each walk's estimate."""
    total = np.ones(rows)  # the state itself
    alive = np.arange(rows)
    product = np.ones(rows)
    for _ in range(levels):
        count, value = _pick(walk.allowed(), rng.random(len(alive)))
        keep = np.nonzero(count)[0]
        if len(keep) == 0:
            break
        alive, product = alive[keep], product[keep] * count[keep]
        total[alive] += product
        walk = walk.place(keep, value[keep])
    return total


def shared_costs(costs: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each child's share of its parent's estimate (``parent``: each child's index into ``costs``): a Knuth
    estimate is 1 + b x (a child's estimate) for a parent of b children, so each gets (cost - 1) / b, at
    least 1. A pool written a level below its walks (poolgen.write) keeps each partition's sum about as
    it was dealt by (less one a parent; a parent with no child left drops out)."""
    kids = np.bincount(parent, minlength=len(costs))
    share = np.maximum((costs.astype(np.float64) - 1) / np.maximum(kids, 1), 1.0)
    return share[parent].astype(costs.dtype)
