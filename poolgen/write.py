"""Shuffle the pool, split it into partitions, write zstd Parquet files and then the manifest.

The same settings give byte-identical partitions: the shuffle is a seeded Fisher-Yates
(numpy's ``Generator.permutation`` on PCG64), the cost estimates are seeded, and the Parquet
writer options are fixed.

Partitioning (``balance``): every state carries a Knuth estimate of its subtree size
(``est_cost``, see :mod:`permenum.poolgen.cost`). With ``cost`` (the default) the shuffled states
are dealt out by greedy LPT on their estimates (largest first, each to the partition with the least
estimated cost so far); with ``rows`` the same dealing with unit costs, i.e. round robin, so row
counts differ by at most one (at the climb's depth: a pool written a level deeper, below, holds each
partition's children). LPT rather than contiguous cuts of the shuffled pool at equal
cumulative cost: both equalise large partitions alike, but with few states per partition a cut
is off by up to a state on each side, where LPT deals the small states last, into the gaps. On
N-Queens 16-17 pools of 1-1.5k states (exact node counts, 1024 walks per state) LPT left max/mean
1.02-1.04 at 64 partitions and 1.09-1.13 at 256, where cuts left 1.05-1.06 and 1.20-1.26 (equal
rows: 1.09-1.13 and 1.24-1.40).
Rows inside a partition are kept in tree order (the climb's order: siblings side by side), so that
the lanes of a GPU warp, which take consecutive states, walk similar subtrees in step and diverge
less. Largest-first rows had looked right for the tail, but cost twice the kernel time: N-Queens 21
on an H200, 1.93 M states in one launch, 106.7 s shuffled by cost vs 56.5 s in tree order (two
machines of the same model and driver); on PoCL here tree order is 15% faster than shuffled
(N-Queens 15-16). Partitions are numbered by decreasing estimated cost, so that an array job
(index = partition number, started in index order) or the local executor starts the largest first.

A climb the hard limit stops short of STATES_PER_PARTITION a partition (the next rung too large to
hold at once, whatever the target) is dealt at its depth and each partition written one level deeper,
a wave at a time; its children share their parent's estimate, so the order by estimated cost holds
approximately, and a partition whose parents all lose their children is written empty.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import shutil
import socket
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from permenum import __version__
from permenum.atomic import fsync_dir, write_new_file
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.lock import run_lock
from permenum.sealed import arrow_reader, read_sealed
from permenum.poolgen.cost import default_probes, estimate_costs, settle_outliers, shared_costs
from permenum.poolgen.generate import climb, expand_with_parents
from permenum.poolgen.sizes import DEFAULT_TARGET, STATES_PER_PARTITION
from permenum.problems import Problem, StateBatch, get_problem
from permenum.records import (Generator, Manifest, PartitionEntry, identity_difference, load_manifest, now_utc,
                              write_manifest)

#: States a partition of `enumerate`'s pool aims at (one partition a worker, ``partitions=None``): enough
#: for a task's chunks, which it refines to its device's grain, and a short climb (N-Queens 16 here: 45 k
#: states in 0.47 s instead of 252 k in 1.0 s at DEFAULT_TARGET; N-Queens 21: no 299 k-state rung built
#: past the hard limit only to be dropped).
STATES_PER_WORKER = 1 << 14
DEFAULT_FACTOR = 4.0
#: Peak bytes per state while a pool is built (climb, cost walks, Parquet): N-Queens 24, 91.7 M states, 16.6 GB.
BYTES_PER_STATE = 200
BALANCE_MODES = ("cost", "rows")
#: Threads making, writing and fsyncing partition files (fsyncs of separate files overlap on most filesystems).
WRITE_THREADS = 8
#: States taken (and deepened) at once while partitions are written: bounded memory, few numpy calls.
WAVE_STATES = 1 << 15


@dataclass(frozen=True)
class PoolSettings:
    problem: str
    n: int
    #: None: up to auto_partitions, fewer when the pool has fewer states (what `enumerate` uses)
    partitions: int | None = 1
    target_states: int | None = None  # None: `target`'s default
    hard_factor: float = DEFAULT_FACTOR
    seed: int = 0
    symmetry: str | None = None
    balance: str = "cost"
    cost_probes: int | None = None  # walks per state; None: default_probes(pool size, partitions)
    auto_partitions: int = 1  # what partitions=None means, before the pool-size cap

    def validate(self) -> None:
        problem = get_problem(self.problem)
        problem.check_n(self.n)
        problem.check_symmetry(self.resolved_symmetry)
        if self.partitions is not None and self.partitions < 1:
            raise UserError(f"--num-partitions must be at least 1 (got {self.partitions})")
        if self.target_states is not None and self.target_states < 1:
            raise UserError(f"--target-states must be at least 1 (got {self.target_states})")
        if self.hard_factor < 1:
            raise UserError(f"the hard-limit factor must be at least 1 (got {self.hard_factor})")
        if self.seed < 0:
            raise UserError(f"--seed must be non-negative (got {self.seed})")
        if self.balance not in BALANCE_MODES:
            raise UserError(f"--balance must be one of {', '.join(BALANCE_MODES)} (got {self.balance!r})")
        if self.cost_probes is not None and self.cost_probes < 1:
            raise UserError(f"the number of cost probes must be at least 1 (got {self.cost_probes})")

    def check_memory(self) -> None:
        """Refuse, up front, a pool whose climb could not fit in this machine's memory: a rung may
        reach hard_factor x target states, each costing about BYTES_PER_STATE while the pool is built."""
        need = self.target * self.hard_factor * BYTES_PER_STATE
        have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if need > have:
            raise UserError(f"--target-states {self.target}: its climb may hold up to {self.hard_factor:g} x that "
                            f"many states, about {need / 2**30:,.0f} GiB while the pool is built; this machine has "
                            f"{have / 2**30:,.0f} GiB (use a smaller --target-states)")

    @property
    def target(self) -> int:
        """The climb's soft target: --target-states, else enough for partitioning and balance (at least
        STATES_PER_PARTITION a partition; `enumerate`'s: STATES_PER_WORKER a worker), never at a device's
        grain: tasks refine (jobs.counting.refine)."""
        if self.target_states is not None:
            return self.target_states
        if self.partitions is None:
            return STATES_PER_WORKER * self.auto_partitions
        return max(DEFAULT_TARGET, STATES_PER_PARTITION * self.partitions)

    def identity(self, partitions: int) -> dict[str, Any]:
        """The pool these settings make, as Manifest.identity says it (``partitions`` where none were asked)."""
        return {"problem": self.problem, "params": {"n": self.n}, "symmetry": self.resolved_symmetry,
                "generator": {"target_states": self.target, "hard_factor": self.hard_factor, "seed": self.seed,
                              "balance": self.balance},
                "num_partitions": self.partitions or partitions}

    @property
    def resolved_symmetry(self) -> str:
        return self.symmetry or get_problem(self.problem).default_symmetry


def _check_target_dir(layout: RunLayout, settings: PoolSettings) -> Manifest | None:
    """Return the existing manifest if it is this very pool; refuse any other non-empty directory."""
    root = layout.root
    if layout.manifest.exists():
        existing = load_manifest(layout)
        if existing.identity() != settings.identity(existing.num_partitions):
            raise UserError(
                f"{root} already holds a different pool ({existing.problem} n={existing.n}, "
                f"{existing.num_partitions} partitions, run {existing.run_id}); choose another directory"
            )
        return existing
    if root.exists():
        leftovers = [p.name for p in root.iterdir() if p.name != "pool" and p != layout.lock_file]
        if leftovers:
            raise UserError(f"{root} is not empty and holds no pool ({', '.join(sorted(leftovers)[:3])} ...); choose another directory")
    return None


def write_pool(layout: RunLayout, settings: PoolSettings, like: Manifest | None = None) -> tuple[Manifest, bool]:
    """Generate and write the pool; returns (manifest, created). An identical existing pool is kept.

    ``like``: another site's manifest of this pool. The pool built here must be that very pool (settings
    and every partition's sha256), and then takes its manifest, run id included: this directory is
    then a copy of that run, whose results `permenum merge` can bring together. Any difference is
    refused, naming the first, and nothing is left behind."""
    settings.validate()
    if layout.root.exists() and not layout.root.is_dir():
        raise UserError(f"{layout.root} exists and is not a directory")
    try:
        layout.root.mkdir(parents=True)  # atomic: only the call that made the directory may remove it
        created = True
    except FileExistsError:
        created = False
    with run_lock(layout, "pool"):
        try:
            return _write_pool(layout, settings, like)
        except BaseException:
            if created:  # refused or failed: leave no directory behind (all in it is this call's, under its lock)
                shutil.rmtree(layout.root, ignore_errors=True)
            raise


def _write_pool(layout: RunLayout, settings: PoolSettings, like: Manifest | None) -> tuple[Manifest, bool]:
    if like is not None:  # settings first: a mistyped option is refused before a long build
        difference = identity_difference(settings.identity(like.num_partitions), like.identity())
        if difference is not None:
            raise UserError(f"not the same pool as run {like.run_id}: {difference} (give that run's options)")
    existing = _check_target_dir(layout, settings)
    if existing is not None:
        if like is not None:
            _check_same_pool(existing, like, existing=True)
        return existing, False
    settings.check_memory()
    problem = get_problem(settings.problem)
    symmetry = settings.resolved_symmetry
    ladder = climb(problem, settings.n, settings.target, settings.hard_factor, symmetry)
    states = ladder.states
    rows = len(states)
    partitions = settings.partitions or min(settings.auto_partitions, max(rows, 1))
    if partitions > max(rows, 1):
        raise UserError(
            f"{partitions} partitions but the pool has only {rows} states at depth {ladder.depth}; "
            f"use --num-partitions {max(rows, 1)} or fewer, or a larger --target-states"
        )
    probes = settings.cost_probes or default_probes(rows, partitions)
    costs = estimate_costs(problem, settings.n, states, symmetry, probes, settings.seed)
    costs = settle_outliers(problem, settings.n, states, symmetry, costs, probes, partitions, settings.seed).astype(np.float32)
    if partitions == 1:  # shuffled, dealt and put back in tree order: the pool as it is (seconds per 10 M rows)
        groups = [np.arange(rows)]
    else:
        order = np.random.default_rng(settings.seed).permutation(rows)
        states, costs = states.take(order), costs[order]
        groups = deal_lpt(costs if settings.balance == "cost" else np.ones(rows, np.float32), partitions)
        part_costs = [float(np.sum(costs[g], dtype=np.float64)) for g in groups]
        groups = [groups[k] for k in sorted(range(len(groups)), key=lambda k: (-part_costs[k], k))]  # largest first
        groups = [g[np.argsort(order[g], kind="stable")] for g in groups]  # tree order inside (module docstring)
    if layout.pool_dir.exists():  # an interrupted earlier attempt: no manifest was written, so no pool
        shutil.rmtree(layout.pool_dir)
    layout.pool_dir.mkdir(parents=True)
    deeper = ladder.capped and rows < STATES_PER_PARTITION * partitions
    deepen = partial(_one_level_deeper, problem, settings.n, symmetry) if deeper else None
    parts = _write_partitions(layout, states, costs, groups, deepen)
    written = sum(p.rows for p in parts)
    depth, reason = ladder.depth, ladder.stop_reason
    estimates = {"method": "knuth random probes", "probes": probes, "unit": "search nodes (plain DFS)"}
    if deeper:
        depth += 1
        reason += f"; each partition written one level deeper ({written} states)"
        estimates["walked_at_depth"] = ladder.depth  # probes per parent; a child holds its share
    generator = Generator(settings.target, settings.hard_factor, settings.seed, depth, ladder.rungs, reason,
                          settings.balance, cost_estimate=estimates)
    manifest = Manifest(uuid.uuid4().hex, settings.problem, settings.n, symmetry, generator, tuple(parts), written,
                        sum(p.weight for p in parts), now_utc(), socket.gethostname(), __version__)
    if like is not None:
        _check_same_pool(manifest, like)
        manifest = like
    write_manifest(layout, manifest)
    layout.logs_dir.mkdir(exist_ok=True)  # SLURM cannot create its --output directory: a hand `sbatch` needs it
    return manifest, True


def _check_same_pool(built: Manifest, like: Manifest, existing: bool = False) -> None:
    """``built`` (``existing``: found in the directory, not built now) must be ``like``'s pool."""
    difference = built.first_difference(like)
    if difference is not None:
        raise UserError(f"not the same pool as run {like.run_id}: {difference} (copy that run's directory instead)")
    if existing and built.run_id != like.run_id:
        raise UserError(f"this directory holds the same pool as another run ({built.run_id}, not {like.run_id}): "
                        "rebuild with --same-as in an empty directory")


def _write_partitions(layout: RunLayout, states: StateBatch, costs: np.ndarray, groups: list[np.ndarray],
                      deepen: Callable[[StateBatch, np.ndarray, list[np.ndarray]], list[tuple[StateBatch, np.ndarray]]] | None
                      ) -> list[PartitionEntry]:
    """Partitions a wave at a time: this thread takes (and ``deepen``s, if given) the wave's states while
    WRITE_THREADS threads make the last wave's Parquet bytes in memory, hash the same bytes, and write and
    fsync them; memory holds two waves, however deep the pool is written. The pool directory is fsynced
    once. No temporary files: a pool is committed by its manifest, written after, and a pool directory
    without one is removed by the next attempt. (20,000 partitions written one by one through a temporary
    file, a rename, a second open for the hash and a directory fsync each took 55 s here: bench/NOTES.md.)"""

    def write(index: int, part: StateBatch, part_costs: np.ndarray) -> PartitionEntry:
        data, entry = partition_bytes(layout, index, part, part_costs)
        write_new_file(layout.partition_file(index), data)
        return entry

    parts: list[PartitionEntry] = []
    pending: list[Future[PartitionEntry]] = []
    with ThreadPoolExecutor(WRITE_THREADS) as pool:
        for start, stop in _waves(groups):
            members = groups[start:stop]
            made = deepen(states, costs, members) if deepen else [(states.take(g), costs[g]) for g in members]
            parts += [done.result() for done in pending]
            pending = [pool.submit(write, index, *part) for index, part in enumerate(made, start)]
        parts += [done.result() for done in pending]
    fsync_dir(layout.pool_dir)
    return parts


def _waves(groups: list[np.ndarray]) -> list[tuple[int, int]]:
    """[start, stop) runs of partitions holding about WAVE_STATES states (at least one partition each)."""
    ends = np.cumsum([len(g) for g in groups])
    cuts = [0]
    while cuts[-1] < len(groups):
        base = ends[cuts[-1] - 1] if cuts[-1] else 0
        cuts.append(max(cuts[-1] + 1, int(np.searchsorted(ends, base + WAVE_STATES, side="right"))))
    return list(zip(cuts[:-1], cuts[1:]))


def _one_level_deeper(problem: Problem, n: int, symmetry: str, states: StateBatch, costs: np.ndarray,
                      members: list[np.ndarray]) -> list[tuple[StateBatch, np.ndarray]]:
    """The partitions ``members`` (rows of ``states``) expanded once, each child with its share of its
    parent's estimate: a climb the hard limit stopped short of STATES_PER_PARTITION a partition (its next
    rung too large to hold at once) is finished a wave of partitions at a time (N-Queens 27 with 20,000
    partitions: 80 states a partition at depth 5, 1,139 at depth 6)."""
    rows = np.concatenate(members)
    children, parent = expand_with_parents(problem, n, states.take(rows), symmetry)
    child_costs = shared_costs(costs[rows], parent)
    cuts = [0, *np.searchsorted(parent, np.cumsum([len(m) for m in members])).tolist()]
    return [(children.take(slice(a, b)), child_costs[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]


def partition_bytes(layout: RunLayout, index: int, states: StateBatch, costs: np.ndarray) -> tuple[memoryview, PartitionEntry]:
    """A partition file's bytes (zstd Parquet of the states and their estimated costs) and its manifest entry."""
    table = states.to_table().append_column("est_cost", pa.array(costs, pa.float32()))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", compression_level=3, use_dictionary=False)
    data = memoryview(sink.getvalue())  # Arrow's buffer as it is: no copy of a large partition
    entry = PartitionEntry(index, str(layout.partition_file(index).relative_to(layout.root)), len(states),
                           int(states.weight.astype(np.int64).sum()), hashlib.sha256(data).hexdigest(),
                           float(np.sum(costs, dtype=np.float64)))
    return data, entry


#: Rows dealt one by one (LPT) before the rest fills up (deal_lpt), in partitions' worth: at Costas 29 into
#: 20,000 partitions (centre mode), 2 / 8 / 32 gave max/mean 1.049 / 1.023 / 1.008 in 1.0 / 1.2 / 2.4 s.
HEAD_ROUNDS = 32


def deal_lpt(costs: np.ndarray, parts: int) -> list[np.ndarray]:
    """Greedy LPT, then water-filling: rows by decreasing cost (ties: pool order); the first HEAD_ROUNDS x
    parts each to the partition whose cost is the least so far (ties: lowest index), the rest filling the
    partitions up to one level in turn, taken in their own order (a row goes where the middle of its cost falls
    on the partitions' room below that level, laid end to end). Returns each partition's rows, largest first;
    costs must be > 0 (every estimate is at least 1), so each of the first ``parts`` rows opens a partition of
    its own.

    Why the rest in their own order (the pool's, shuffled): filled by decreasing cost, each partition took a
    band of the estimates, and estimates of a probe or a few are noisy -- the band of high ones over-estimates
    what it holds, the band of low ones under-estimates. N-Queens 17 on PoCL, kernel seconds a partition,
    max / mean: 1.63 at 2 partitions, 2.32 at 4 (equal row counts: 1.06); so in their own order each partition
    takes a random sample of them.

    Why: LPT row by row (a heap, in Python) took 6-19 s of a 60 s `pool costas 29 -P 20000` (5 M rows).
    The rows past the head are small beside a partition's share (under 0.03x there), and filling is within
    one of them of the level: max/mean 1.008 there (1.000 row by row), in 2.4 s."""
    order = np.argsort(-costs.astype(np.float64), kind="stable")
    ranked = costs[order].astype(np.float64)
    label = np.empty(len(costs), np.int64)
    head = min(len(order), HEAD_ROUNDS * parts)
    heap = [(0.0, k) for k in range(parts)]
    for i, cost in zip(order[:head].tolist(), ranked[:head].tolist()):
        load, k = heap[0]
        label[i] = k
        heapq.heapreplace(heap, (load + cost, k))
    loads = np.zeros(parts)
    for load, k in heap:
        loads[k] = load
    room = np.maximum(0.0, _water_level(loads, float(np.sum(ranked[head:], dtype=np.float64))) - loads)
    rest = np.sort(order[head:])  # in the rows' own (shuffled) order, not by cost: see the docstring
    rest_costs = costs[rest].astype(np.float64)
    middles = np.cumsum(rest_costs) - rest_costs / 2
    label[rest] = np.minimum(np.searchsorted(np.cumsum(room), middles, side="right"), parts - 1)
    ranked_rows = order[np.argsort(label[order], kind="stable")]  # by partition, largest first within each
    return np.split(ranked_rows, np.cumsum(np.bincount(label, minlength=parts))[:-1])


def _water_level(loads: np.ndarray, rest: float) -> float:
    """The level L with sum(max(0, L - load)) == rest: how high ``rest`` fills the partitions' loads."""
    ascending = np.sort(loads)
    levels = (rest + np.cumsum(ascending)) / np.arange(1, len(ascending) + 1)  # filling the j lowest
    return float(levels[np.nonzero(levels >= ascending)[0][-1]])


def load_partition(layout: RunLayout, entry: PartitionEntry) -> pa.Table:
    """The partition's table, read once: its bytes are checked against the manifest's sha256, then parsed."""
    return pq.read_table(arrow_reader(read_partition(layout, entry)))


def read_partition(layout: RunLayout, entry: PartitionEntry) -> bytes:
    """The partition file's bytes, checked against the manifest's sha256 (a clear error if missing or corrupted)."""
    return read_sealed(entry.path(layout), entry.sha256, f"partition {entry.index}: ", "manifest")
