"""Costas arrays: columns filled left to right; a state is a placed prefix with no repeated displacement.

Symmetry "canonical" (default): the 8 symmetries of the square act on Costas arrays; only arrays
whose p[0] equals the smallest of their 8 edge offsets are searched, and of those with a corner dot
(p[0] = 0) only the ones no larger than their transpose at column 1 (costas_symmetry.is_canonical;
left to right this searches about a quarter of the tree, not an eighth: bench/NOTES.md). "centre"
(the `cf` kernel's): a state holds the rows of the columns in the centre-out reading order, and only
arrays whose reading is the smallest of their 4 reflections are searched (CentreDots). "none"
searches all. In every mode the host counts each symmetry class once, at its representative (the
smallest of its 8 images, which the canonical search always finds; in the centre mode the image of the
smallest reading), as the class's size: every partition's counts are whole numbers
(costas_symmetry.share_in). States carry weight 1; the kernel reports every array it finds, and all of them are stored.
"""

from __future__ import annotations

import numpy as np

from permenum.problems.base import Problem, StateBatch, Tally, exact_sum
from permenum.problems.costas_symmetry import is_costas, reading_order, share_in

MAX_N = 32  # 2n-1 row differences per distance fit one 64-bit mask


class Displacements:
    """Columns placed so far as bitmasks: the rows used and, per distance d, the displacements seen.

    ``seen[d]`` has bit ``p[j+d] - p[j] + n - 1`` for every pair of columns d apart, so the rows the
    next column may not take are a shift of each ``seen[d]`` (by the row d columns back): O(k) mask
    operations per column instead of O(k^2 n) comparisons. Placing one more column is O(k) too,
    which is what the cost estimator's random walks (poolgen.cost) do at every level. ``prefix`` is
    kept as uint64, the type of every shift it takes part in.
    """

    def __init__(self, n: int, symmetry: str, prefix: np.ndarray, used: np.ndarray, seen: np.ndarray):
        self.n, self.symmetry, self.prefix, self.used, self.seen = n, symmetry, prefix, used, seen

    @classmethod
    def of(cls, n: int, prefix: np.ndarray, symmetry: str) -> "Displacements":
        rows, prefix = len(prefix), prefix.astype(np.uint64)
        state = cls(n, symmetry, prefix[:, :0], np.zeros(rows, np.uint64), np.zeros((n, rows), np.uint64))
        for j in range(prefix.shape[1]):
            state._record(prefix[:, j])
            state.prefix = prefix[:, : j + 1]
        return state

    def place(self, rows: np.ndarray, values: np.ndarray) -> "Displacements":
        """The states ``rows`` with one more column at row ``values``."""
        k = self.prefix.shape[1]
        seen = np.zeros((self.n, len(rows)), np.uint64)
        seen[: k + 1] = self.seen[: k + 1, rows]  # distances beyond k are still empty
        state = Displacements(self.n, self.symmetry, self.prefix[rows], self.used[rows], seen)
        state._record(values)
        state.prefix = np.concatenate([state.prefix, values.astype(np.uint64)[:, None]], axis=1)
        return state

    def _record(self, values: np.ndarray) -> None:
        """Add the used row and the new displacements of one more column (in place; prefix not yet extended)."""
        one, off, v = np.uint64(1), np.uint64(self.n - 1), values.astype(np.uint64)
        k = self.prefix.shape[1]
        for d in range(1, k + 1):
            self.seen[d] |= one << (v + off - self.prefix[:, k - d])
        self.used |= one << v

    def allowed(self) -> np.ndarray:
        """(rows,) uint32: bit v set where the next column may take row v."""
        n, p = self.n, self.prefix
        k = p.shape[1]
        one, off = np.uint64(1), np.uint64(n - 1)
        forbidden = self.used.copy()
        for d in range(1, k):
            forbidden |= self.seen[d] >> (off - p[:, k - d])  # row v repeats a displacement: v - p[k-d] + n - 1 seen
        allowed = ~forbidden & np.uint64((1 << n) - 1)
        if self.symmetry == "canonical" and k > 0:
            p0 = p[:, 0]
            col_ok = (k >= p0) & (n - 1 - k >= p0)  # rows 0 and n-1 only in columns p0..n-1-p0
            allowed = np.where(col_ok, allowed, allowed & ~np.uint64(1 | 1 << (n - 1)))
            if k == n - 1:  # the last column's row is an edge offset too: only rows p0..n-1-p0
                allowed &= ((one << (np.uint64(n) - p0)) - one) & ~((one << p0) - one)
            if k >= 2:  # a corner array no larger than its transpose: row 1 not in columns 2..p[1]-1
                allowed = np.where((p0 == 0) & (p[:, 1] > k), allowed & ~np.uint64(2), allowed)
        return allowed.astype(np.uint32)


class CentreDots:
    """The centre mode's states (rows of the columns in ``reading_order``) as bitmasks, for the pool and the
    cost walks: the rows used and, per distance d, the vectors seen in both orientations (``right[d]``: bit
    ``p[j+d] - p[j] + n - 1``, ``left[d]``: bit ``p[j] - p[j+d] + n - 1``). A row is forbidden by a vector
    with any placed column, not only the last (as left to right). The placed columns are a block around
    the centre and the next one lies at its end, so the midpoint case (a column between two placed ones
    whose rows it halves, costas_cf.cl's MID) never arises in this order.

    Symmetry is cut here only where the prefix decides it (a reflection whose reading is smaller); the
    kernel (costas_cf.cl) applies the whole rule as it starts from each state.
    """

    def __init__(self, n: int, prefix: np.ndarray, used: np.ndarray, right: np.ndarray, left: np.ndarray):
        self.n, self.prefix, self.used, self.right, self.left = n, prefix, used, right, left
        self.columns = reading_order(n)

    @classmethod
    def of(cls, n: int, prefix: np.ndarray) -> "CentreDots":
        rows = len(prefix)
        state = cls(n, prefix[:, :0].astype(np.uint64), np.zeros(rows, np.uint64), np.zeros((n, rows), np.uint64),
                    np.zeros((n, rows), np.uint64))
        for k in range(prefix.shape[1]):
            state._record(prefix[:, k].astype(np.uint64))
        return state

    def place(self, rows: np.ndarray, values: np.ndarray) -> "CentreDots":
        """The states ``rows`` with one more column at row ``values``."""
        state = CentreDots(self.n, self.prefix[rows], self.used[rows], self.right[:, rows], self.left[:, rows])
        state._record(values.astype(np.uint64))
        return state

    def _record(self, values: np.ndarray) -> None:
        one, off, c = np.uint64(1), np.uint64(self.n - 1), self.columns[self.prefix.shape[1]]
        for j, placed in zip(self.columns, self.prefix.T):
            d = abs(c - j)
            lo, hi = (placed, values) if j < c else (values, placed)
            self.right[d] |= one << (hi + off - lo)
            self.left[d] |= one << (lo + off - hi)
        self.used |= one << values
        self.prefix = np.concatenate([self.prefix, values[:, None]], axis=1)

    def allowed(self) -> np.ndarray:
        """(rows,) uint32: bit v set where the next column may take row v."""
        n, k = self.n, self.prefix.shape[1]
        if k == n:
            return np.zeros(len(self.prefix), np.uint32)
        off, c = np.uint64(n - 1), self.columns[k]
        forbidden = self.used.copy()
        for j, rows in zip(self.columns, self.prefix.T):  # row v forbidden where (c - j, v - p[j]) is a vector seen
            forbidden |= (self.right[c - j] if j < c else self.left[j - c]) >> (off - rows)
        return (~forbidden & np.uint64((1 << n) - 1)).astype(np.uint32)

    def dominated(self) -> np.ndarray:
        """(rows,) bool: a reflection (H, V or HV) reads smaller on the positions the prefix decides."""
        n, k = self.n, self.prefix.shape[1]
        place = {c: i for i, c in enumerate(self.columns[:k])}
        out = np.zeros(len(self.prefix), bool)
        for mirror_columns, mirror_rows in ((True, False), (False, True), (True, True)):
            settled = np.zeros(len(self.prefix), bool)
            for i, c in enumerate(self.columns[:k]):
                other = place.get(n - 1 - c if mirror_columns else c)
                if other is None:
                    break
                x = self.prefix[:, i].astype(np.int64)
                y = self.prefix[:, other].astype(np.int64)
                y = n - 1 - y if mirror_rows else y
                out |= ~settled & (x > y)
                settled |= x < y
        return out


def placed(n: int, prefix: np.ndarray, symmetry: str) -> Displacements | CentreDots:
    """The states' placed columns as the mode reads them: left to right, or the centre mode's reading order."""
    return CentreDots.of(n, prefix) if symmetry == "centre" else Displacements.of(n, prefix, symmetry)


def valid_next(n: int, prefix: np.ndarray, symmetry: str) -> np.ndarray:
    """(rows, n) bool: which rows the next column may take without repeating a displacement."""
    mask = placed(n, prefix, symmetry).allowed()
    return ((mask[:, None] >> np.arange(n, dtype=np.uint32)) & np.uint32(1)).astype(bool)


class Costas(Problem):
    name = "costas"
    min_n = 1
    max_n = MAX_N
    total_series = "costas_total"
    classes_series = "costas_classes"
    symmetry_modes = ("canonical", "centre", "none")
    default_symmetry = "canonical"
    counts_classes = True
    search_max_n = 64  # search_costas.cl: 2n - 1 displacements in two 64-bit words
    reports_solutions = True  # every array found is stored (solutions/), checked and listed by `arrays`
    # a refined launch: heavy, uneven states need several per lane against the tail (H100, Costas 19: 4
    # launches of 0.1-0.3 M states, 1 per lane, took 9.98 s of kernel where one of 0.27 M took 7.49 s).
    # 64 a lane (deeper states, a shorter fc pass) was 2-3% less kernel, but the host then made 18-41 M
    # states a chunk and fell behind the device in a task's first chunks; since fc splits heavy states
    # on the lane (SPLIT), 16 is as fast a launch in all. H100, whole command / kernel s, 64 vs 16:
    # order 20 11.31 / 7.87 vs 9.45 / 8.13, order 21 43.04 / 38.87 vs 41.63 / 39.76 (bench/NOTES.md)
    states_per_lane = 16
    # but a sample block of `estimate` is a small part of the run: refined to 64 a lane (the runs' grain
    # then) its states were far lighter than a run's (order 20: depth 8-10 against the run's 6-7) and cost
    # more per node (H100 order 20: 1.71x the measured run); at 8 a lane the H100's estimates of orders
    # 18-21 were 1.03-1.19x
    sample_states_per_lane = 8

    # an array found weighs its class's size (1 to 8) where it is the class's representative, else 0
    solution_weights = {"canonical": (0, 8), "centre": (0, 8), "none": (0, 8)}

    def is_solution(self, solution: list[int]) -> bool:
        return is_costas(solution)

    def counts_disagree(self, symmetry: str, weighted: int, raw: int, classes: int | None) -> str | None:
        """Also: each class counted is one of the arrays found, and stands for 1 to 8 of them (the stored
        arrays themselves are checked against the counts by jobs.counting.solutions.check_arrays)."""
        why = super().counts_disagree(symmetry, weighted, raw, classes)
        if why is None and classes is not None and not (classes <= raw and classes <= weighted <= 8 * classes):
            why = f"{classes} classes for {raw} arrays found and {weighted} solutions"
        return why

    def walk(self, n: int, batch: StateBatch, symmetry: str) -> Displacements | CentreDots:
        return placed(n, batch.prefix, symmetry)

    def _alive(self, n: int, prefix: np.ndarray, symmetry: str) -> StateBatch:
        """The states with a next row left (unless whole) and, in the centre mode, no reflection reading smaller."""
        if len(prefix):
            dots = placed(n, prefix, symmetry)
            keep = dots.allowed() != 0 if prefix.shape[1] < n else np.ones(len(prefix), bool)
            if isinstance(dots, CentreDots):
                keep &= ~dots.dominated()
            prefix = prefix[keep]
        return StateBatch(prefix.astype(np.uint8), np.ones(len(prefix), np.uint8))

    def root(self, n: int, symmetry: str) -> StateBatch:
        self.check_n(n)
        self.check_symmetry(symmetry)
        first = np.arange((n + 1) // 2 if symmetry == "canonical" else n)
        return self._alive(n, first[:, None], symmetry)

    def expand(self, n: int, batch: StateBatch, symmetry: str) -> StateBatch:
        if batch.depth >= n:
            return batch
        parent, row = np.nonzero(valid_next(n, batch.prefix, symmetry))
        prefix = np.concatenate([batch.prefix[parent], row.astype(np.uint8)[:, None]], axis=1)
        return self._alive(n, prefix, symmetry)

    def tally(self, batch: StateBatch, counts: np.ndarray, solutions: np.ndarray | None, symmetry: str) -> Tally:
        """Check every array the kernel found (independently of it); count each class at its representative."""
        if solutions is None:
            raise RuntimeError("the Costas kernel returned no arrays")
        raw = exact_sum(counts)
        arrays = [tuple(int(x) for x in row) for row in solutions]
        if len(arrays) != raw or len(set(arrays)) != raw:
            raise RuntimeError(f"kernel reported {raw} arrays but returned {len(set(arrays))} distinct ones")
        bad = [a for a in arrays if not is_costas(a)]
        if bad:
            raise RuntimeError(f"kernel returned {len(bad)} arrays that are not Costas arrays, e.g. {bad[0]}")
        shares = [share_in(symmetry)(a) for a in arrays]
        return Tally(sum(s for s, _ in shares), raw, sum(c for _, c in shares))

