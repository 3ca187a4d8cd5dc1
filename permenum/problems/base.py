"""What every problem provides: a state schema, host-side expansion of the search tree, symmetry weights.

A state is a partial solution: the placed prefix (one value per locked row or column) plus the
problem's derived columns (bitmasks) and the symmetry ``weight`` it stands for. States travel as
:class:`StateBatch` between the pool generator, the Parquet files and the kernels.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.ma  # noqa: F401  (numpy's lazy submodules that threads use, loaded first: below)
import numpy.random  # noqa: F401
import pyarrow as pa

from permenum.errors import UserError
from permenum.known import known

# numpy imports np.ma (which pa.array looks up) and np.random (the cost walks' generators) on first use.
# Two threads' first lookups race: CPython marks the submodule loaded before it sets numpy's attribute, and
# a thread that comes between recurses in numpy's __getattr__ until RecursionError (the pool's writer
# threads in CI, 2026-12-07, numpy 2.4.6, CPython 3.11.7). Every flow that starts threads imports this
# module first, so both are loaded before any thread runs.


@dataclass
class StateBatch:
    """Column-oriented states: ``prefix`` is (rows, depth) uint8, ``weight`` (rows,) uint8."""

    prefix: np.ndarray
    weight: np.ndarray
    masks: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.weight.shape[0])

    @property
    def depth(self) -> int:
        return int(self.prefix.shape[1])

    def take(self, index: np.ndarray | slice) -> "StateBatch":
        return StateBatch(self.prefix[index], self.weight[index], {k: v[index] for k, v in self.masks.items()})

    @classmethod
    def concat(cls, batches: list["StateBatch"]) -> "StateBatch":
        """One batch of the rows of ``batches`` (same depth and masks), in order."""
        return cls(np.concatenate([b.prefix for b in batches]), np.concatenate([b.weight for b in batches]),
                   {k: np.concatenate([b.masks[k] for b in batches]) for k in batches[0].masks})

    def to_table(self) -> pa.Table:
        """One row per state: mask columns, ``prefix`` as fixed-size list<uint8>, ``weight``."""
        arrays: dict[str, pa.Array] = {k: pa.array(v) for k, v in self.masks.items()}
        flat = pa.array(np.ascontiguousarray(self.prefix, dtype=np.uint8).reshape(-1))
        arrays["prefix"] = pa.FixedSizeListArray.from_arrays(flat, max(self.depth, 0)) if self.depth else pa.array(
            [[]] * len(self), type=pa.list_(pa.uint8(), 0)
        )
        arrays["weight"] = pa.array(self.weight.astype(np.uint8))
        return pa.table(arrays)

    @classmethod
    def from_table(cls, table: pa.Table, mask_names: tuple[str, ...]) -> "StateBatch":
        prefix_col = table.column("prefix").combine_chunks()
        depth = prefix_col.type.list_size
        flat = prefix_col.values.to_numpy(zero_copy_only=False).astype(np.uint8)
        prefix = flat.reshape(len(table), depth)
        weight = table.column("weight").to_numpy().astype(np.uint8)
        masks = {k: table.column(k).to_numpy() for k in mask_names}
        return cls(prefix, weight, masks)


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each uint32 (numpy's own from numpy 2; before it, by unpacking the bytes)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words.astype(np.uint32, copy=False))
    bits = np.unpackbits(np.ascontiguousarray(words, dtype="<u4").view(np.uint8).reshape(-1, 4), axis=1)
    return bits.sum(axis=1, dtype=np.int64)


@dataclass
class ChildBatch:
    """The states one level below ``parents`` -- each parent's children, in (parent, value) order, values
    ascending -- held as the parents and each one's bitmask of child values (``choices``): a device makes
    the children itself (jobs.counting.refine), so the host never builds the level that holds most states. Children
    whose own next step is dead are kept (they count 0). Sliced only at parent boundaries."""

    parents: StateBatch
    choices: np.ndarray  # (parents,) uint32: the values each parent's children take
    first: np.ndarray = field(init=False)  # (parents + 1,) int64: each parent's first child, then the total

    def __post_init__(self) -> None:
        self.first = np.concatenate([[0], np.cumsum(_popcount(self.choices), dtype=np.int64)])

    def __len__(self) -> int:
        return int(self.first[-1])

    @property
    def depth(self) -> int:
        return self.parents.depth + 1

    @property
    def weight(self) -> np.ndarray:
        """(children,) uint8: each child stands for its parent's symmetric copies."""
        return np.repeat(self.parents.weight, np.diff(self.first))

    def take(self, index: slice) -> "ChildBatch":
        """The children in [start, stop), stop moved on to the next parent boundary (start must be one)."""
        start, stop = index.start or 0, len(self) if index.stop is None else index.stop
        lo = int(np.searchsorted(self.first, start))
        if self.first[lo] != start:
            raise ValueError(f"child {start} is not a parent's first child")
        hi = max(int(np.searchsorted(self.first, min(stop, len(self)))), lo + 1)
        return ChildBatch(self.parents.take(slice(lo, hi)), self.choices[lo:hi])


@dataclass(frozen=True)
class Tally:
    """What a batch of states contributed: all solutions (weighted), as searched (raw), and classes.

    Exact Python ints, whole for every batch: a symmetry class is counted once, by the batch that
    holds its representative, never as fractions spread over partitions.
    """

    weighted: int
    raw: int
    classes: int | None = None


_SUM_BLOCK = 1 << 23  # elements per partial sum: 2^23 x 2^40 < 2^64


def exact_sum(values: np.ndarray, weights: np.ndarray | None = None) -> int:
    """The sum of uint64 ``values`` (each times its uint8 weight), exact as a Python int.

    numpy's uint64 sum wraps silently past 2^64. Where the largest value times the largest weight times
    the length stays below 2^64, nothing can wrap and one uint64 pass is exact (a chunk's tally: 10 M
    states in 0.01 s, not 0.5 s); otherwise each value is split into 32-bit halves, a half times a weight
    stays below 2^40, and each block of 2^23 such terms sums below 2^64."""
    v = np.asarray(values).astype(np.uint64, copy=False)
    w8 = None if weights is None else np.asarray(weights).astype(np.uint8, copy=False)
    if len(v) == 0:
        return 0
    if int(v.max()) * (1 if w8 is None else int(w8.max())) * len(v) < 1 << 64:
        return int(v.sum(dtype=np.uint64)) if w8 is None else int(np.einsum("i,i->", v, w8, dtype=np.uint64))
    lo, hi = v & np.uint64(0xFFFFFFFF), v >> np.uint64(32)
    if w8 is not None:
        w = w8.astype(np.uint64)
        lo, hi = lo * w, hi * w
    total = 0
    for s in range(0, len(v), _SUM_BLOCK):
        total += int(lo[s:s + _SUM_BLOCK].sum(dtype=np.uint64)) + (int(hi[s:s + _SUM_BLOCK].sum(dtype=np.uint64)) << 32)
    return total


class Walk(Protocol):
    """Random walks down the search tree, one per row, all advancing together (poolgen.cost's probes)."""

    def allowed(self) -> np.ndarray:
        """(rows,) uint32: bit v set where the next level may take value v."""

    def place(self, rows: np.ndarray, values: np.ndarray) -> "Walk":
        """The walks ``rows`` one level deeper, having taken ``values``."""


class Problem(ABC):
    """One enumeration problem. Subclasses are stateless; ``n`` is passed to every call."""

    name: str
    min_n: int
    max_n: int
    total_series: str
    classes_series: str
    mask_names: tuple[str, ...] = ()
    counts_classes = False  # whether tally() reports symmetry classes
    reports_solutions = False  # whether the kernel's solutions are stored beside the result (solutions/)
    states_per_lane = 1  # states per device lane of one launch, where a task refines a coarse pool (jobs.counting.refine)
    sample_states_per_lane: int | None = None  # the same for `estimate`'s sample blocks (None: states_per_lane)
    symmetry_modes: tuple[str, ...] = ("mirror", "none")
    default_symmetry: str = "mirror"
    #: symmetry mode -> the fewest and the most solutions one solution found can stand for
    solution_weights: dict[str, tuple[int, int]] = {"mirror": (1, 2), "none": (1, 1)}

    def counts_disagree(self, symmetry: str, weighted: int, raw: int, classes: int | None) -> str | None:
        """Why a result's counts cannot have come from one search under ``symmetry``; None where they can.

        Why: a result resealed with a changed count passes its seal; what holds between its counts is
        checked without counting again (only a re-count, `verify`, catches a change that keeps them)."""
        if (classes is not None) != self.counts_classes:
            return f"{'no' if classes is None else 'a'} class count, where {self.name} counts {'' if self.counts_classes else 'no '}classes"
        low, high = self.solution_weights[symmetry]
        if not low * raw <= weighted <= high * raw:
            each = f"{low}" if low == high else f"{low} to {high}"
            return f"{weighted} solutions from {raw} found, each standing for {each} under symmetry {symmetry}"
        return None

    def levels_left(self, n: int, depth: int, symmetry: str) -> int:
        """At most how many more levels a state with a prefix of ``depth`` entries has (kernel stacks, walks)."""
        return max(n - depth, 0)

    def complete(self, n: int, batch: StateBatch) -> bool:
        """Whether every state of the batch is a complete solution (the ladder stops)."""
        return batch.depth >= n

    def check_n(self, n: int) -> None:
        if not self.min_n <= n <= self.max_n:
            raise UserError(f"{self.name}: n={n} is outside what the kernel supports ({self.min_n}..{self.max_n})")

    # local search (permenum search): sizes it takes, sizes with no solution at all, the answer's check
    search_max_n: int = 0
    no_solution: tuple[int, ...] = ()

    def check_search(self, n: int) -> None:
        """Refuse, in one line, a size the search cannot take or one with nothing to find."""
        if n in self.no_solution:
            raise UserError(f"{self.name} n={n} has no solution (none exists for n = "
                            f"{' and '.join(map(str, self.no_solution))})")
        if not 1 <= n <= self.search_max_n:
            raise UserError(f"{self.name} search supports n from 1 to {self.search_max_n} (got {n})")

    def is_solution(self, solution: "list[int]") -> bool:
        """Whether a search's answer (row of each column) is a solution: the problem's own check, not a kernel's."""
        raise NotImplementedError(f"{self.name} has no solution check")

    def check_symmetry(self, symmetry: str) -> None:
        if symmetry not in self.symmetry_modes:
            raise UserError(f"{self.name}: unknown symmetry mode {symmetry!r} (choose from {', '.join(self.symmetry_modes)})")

    @abstractmethod
    def root(self, n: int, symmetry: str) -> StateBatch:
        """The states after the first locked row/column, dead ends removed."""

    @abstractmethod
    def walk(self, n: int, batch: StateBatch, symmetry: str) -> Walk:
        """Walks starting at every state of the batch: the cost estimator's moves, by the problem's own rules."""

    @abstractmethod
    def expand(self, n: int, batch: StateBatch, symmetry: str) -> StateBatch:
        """Every child of every state one level deeper, dead ends removed, in (parent, value) order."""

    reflected_modes: tuple[str, ...] = ()  # the symmetry modes whose states have mirror images (`reflected`)

    def reflected(self, n: int, batch: StateBatch, symmetry: str) -> StateBatch | None:
        """Each state's mirror image, a state of the same mode whose subtree must count the same (a check
        that a kernel's search is symmetric, `verify --reflect`); None in a mode not in ``reflected_modes``."""
        return None

    def choices(self, n: int, batch: StateBatch, symmetry: str) -> np.ndarray | None:
        """Each state's next values as a bitmask, where the device makes the children (ChildBatch, in
        the order `expand` has, dead ends kept); None: children are made on the host."""
        return None

    def tally(self, batch: StateBatch | ChildBatch, counts: np.ndarray, solutions: np.ndarray | None,
              symmetry: str) -> Tally:
        """Weighted total from per-state counts, exact (the weights are all it reads of the batch);
        problems that report solutions override this."""
        return Tally(exact_sum(counts, batch.weight), exact_sum(counts))

    def known_total(self, n: int) -> int | None:
        return known(self.total_series, n)

    def known_classes(self, n: int) -> int | None:
        return known(self.classes_series, n)
