"""N-Queens: one queen per row, bitmasks for columns and both diagonals.

State masks (the pool's columns and the kernels' input) are absolute, so a queen may sit in any
row, not only in a block at the top -- the border placements of the dihedral mode need that:

* ``cols`` uint32, bit c: column c holds a queen;
* ``d1`` uint64, bit c - r + n - 1: the "\\" diagonal through (r, c) holds a queen;
* ``d2`` uint64, bit c + r: the "/" diagonal through (r, c) holds a queen;
* ``rows`` uint32, bit r: row r still needs a queen.

The search always fills the lowest open row next.

Symmetry modes:

* ``none``: every column of the first row, weight 1.
* ``mirror``: the left half of the first row; a state stands for itself and its mirror image
  (weight 2), the middle column of an odd board for itself (weight 1).
* ``dihedral`` (Q27's approach): the queens on the border -- the one in row 0, in row n-1, in
  column 0 and in column n-1, corners shared -- are placed first, one configuration per orbit of
  the 8 symmetries of the square (the smallest (top column, bottom column, left row, right row)
  tuple), weighted by its orbit size 8/|stabiliser|. Every solution has exactly one border
  configuration and a symmetry g maps the completions of B one to one onto those of g(B), so the
  weighted sum counts every solution once. The open rows are then rows 1..n-2 less the side queens'.
* ``edges`` (Takaken's bounds, the same border orbits searched top-down): no border is placed in
  advance -- fixing all four border queens first repeats the upper rows' search for every bottom and
  side queen (N-Queens 14: 1.6x more nodes than this). Row 0's queen sits at column t, and a
  canonical border has every border queen at least t from the corners along its side: columns 0
  and n-1 are ruled out above row t and below row n-1-t, the last row outside columns t..n-1-t (and
  row n-1-t must take column 0 or n-1 if that column is still empty). The kernel weights each
  solution by its border's orbit (:func:`border_weight`: 8 unless a border queen ties with t; 0
  when a tie makes another image smaller), so these states have weight 1. A queen in a corner
  (t = 0) cannot tie that way: with (0, 0) taken, a solution and its transpose differ in where
  row 1's queen (column c1) and column 1's queen (row r1 != c1) sit, and the one with r1 > c1 is
  kept: column 1 is ruled out on rows 2..c1, weight 8 (the 4 corners times the transpose).
  Prefix: the column of each placed row from the top, as in mirror; every state starts at depth 2.

``prefix``: the column of each placed row from the top (none, mirror); for dihedral the border
tuple, then the columns placed in the open rows in row order. A state that is complete while
others of its rung are expanded gets ``PAD``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from permenum.errors import UserError
from permenum.problems.base import Problem, StateBatch

MAX_N = 32  # the kernels keep a row in one 32-bit mask and each diagonal family in 64 bits
PAD = 255  # prefix value of a complete state carried through an expansion
BORDER = 4  # prefix entries of the dihedral border tuple
_U64 = np.uint64


def _full(n: int) -> np.uint32:
    return np.uint32((1 << n) - 1)


def lowest_bit_index(x: np.ndarray) -> np.ndarray:
    """(rows,) int64: index of the lowest set bit of each uint32 (0 for 0)."""
    low = (x & (~x + np.uint32(1))).astype(np.float64)
    return np.where(x != 0, np.frexp(low)[1] - 1, 0).astype(np.int64)


def free_squares(n: int, masks: dict[str, np.ndarray], row: np.ndarray) -> np.ndarray:
    """(rows,) uint32: the squares of row ``row[i]`` that no queen of state i attacks."""
    r = row.astype(_U64)
    taken = masks["cols"].astype(_U64) | (masks["d1"] >> (_U64(n - 1) - r)) | (masks["d2"] >> r)
    return (~taken & _U64(_full(n))).astype(np.uint32)


def available(n: int, masks: dict[str, np.ndarray]) -> np.ndarray:
    """(rows,) uint32: the free squares of each state's next open row (0 when complete); shared with poolgen.cost."""
    rows = masks["rows"]
    return np.where(rows != 0, free_squares(n, masks, lowest_bit_index(rows)), np.uint32(0)).astype(np.uint32)


def occupy(n: int, masks: dict[str, np.ndarray], row: np.ndarray, col: np.ndarray) -> dict[str, np.ndarray]:
    """The masks after a queen on (row[i], col[i]) of state i (the square must be free)."""
    r, c = row.astype(_U64), col.astype(_U64)
    return {
        "cols": (masks["cols"] | (np.uint32(1) << col.astype(np.uint32))).astype(np.uint32),
        "d1": masks["d1"] | (_U64(1) << (c + _U64(n - 1) - r)),
        "d2": masks["d2"] | (_U64(1) << (c + r)),
        "rows": (masks["rows"] & ~(np.uint32(1) << row.astype(np.uint32))).astype(np.uint32),
    }


def place(n: int, masks: dict[str, np.ndarray], col: np.ndarray) -> dict[str, np.ndarray]:
    """The masks after a queen in column ``col[i]`` of state i's next open row."""
    return occupy(n, masks, lowest_bit_index(masks["rows"]), col)


def _reverse(words: np.ndarray, bits: int) -> np.ndarray:
    """Each word's lowest ``bits`` bits in reverse order (as uint64)."""
    w, out = words.astype(_U64), np.zeros(len(words), _U64)
    for b in range(bits):
        out |= ((w >> _U64(b)) & _U64(1)) << _U64(bits - 1 - b)
    return out


def _empty(n: int, count: int) -> dict[str, np.ndarray]:
    return {"cols": np.zeros(count, np.uint32), "d1": np.zeros(count, _U64), "d2": np.zeros(count, _U64),
            "rows": np.full(count, _full(n), np.uint32)}


# The 8 symmetries of the n x n board as maps (row, col) -> (row, col).
_SYMMETRIES = (
    lambda n, r, c: (r, c), lambda n, r, c: (c, n - 1 - r), lambda n, r, c: (n - 1 - r, n - 1 - c),
    lambda n, r, c: (n - 1 - c, r), lambda n, r, c: (r, n - 1 - c), lambda n, r, c: (n - 1 - r, c),
    lambda n, r, c: (c, r), lambda n, r, c: (n - 1 - c, n - 1 - r),
)


def _border_key(n: int, qr: list[np.ndarray], qc: list[np.ndarray]) -> np.ndarray:
    """Encode the border tuple (top column, bottom column, left row, right row) of queens (qr, qc)."""

    def on(line: list[np.ndarray], at: int, value: list[np.ndarray]) -> np.ndarray:
        return np.max([np.where(a == at, v, -1) for a, v in zip(line, value)], axis=0)

    return ((on(qr, 0, qc) * n + on(qr, n - 1, qc)) * n + on(qc, 0, qr)) * n + on(qc, n - 1, qr)


def border_configurations(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Canonical border tuples (k, 4) and their orbit sizes (k,): every way to place the queens of
    rows 0, n-1 and columns 0, n-1 without attacks, one per orbit of the board's symmetries."""
    t, b, lft, rgt = (a.ravel() for a in np.meshgrid(*[np.arange(n, dtype=np.int64)] * 4, indexing="ij"))
    last = n - 1
    qr = [np.zeros_like(t), np.full_like(t, last), lft, rgt]
    qc = [t, b, np.zeros_like(t), np.full_like(t, last)]
    # a corner queen serves both of its lines: the two tuple entries must agree
    ok = ((t == 0) == (lft == 0)) & ((t == last) == (rgt == 0)) & ((b == 0) == (lft == last)) & ((b == last) == (rgt == last))
    for i in range(4):
        for j in range(i + 1, 4):
            same = (qr[i] == qr[j]) & (qc[i] == qc[j])
            attack = (qr[i] == qr[j]) | (qc[i] == qc[j]) | (qr[i] - qc[i] == qr[j] - qc[j]) | (qr[i] + qc[i] == qr[j] + qc[j])
            ok &= same | ~attack
    qr, qc = [a[ok] for a in qr], [a[ok] for a in qc]
    keys = np.stack([_border_key(n, *map(list, zip(*[g(n, r, c) for r, c in zip(qr, qc)]))) for g in _SYMMETRIES])
    canonical = keys[0] == keys.min(axis=0)
    images = np.sort(keys[:, canonical], axis=0)
    orbit = (1 + np.count_nonzero(np.diff(images, axis=0), axis=0)).astype(np.uint8)  # distinct images
    tuples = np.stack([qc[0], qc[1], qr[2], qr[3]], axis=1)[canonical]
    return tuples, orbit


def border_weight(n: int, t: np.ndarray, b: np.ndarray, l: np.ndarray, r: np.ndarray) -> np.ndarray:
    """(rows,) uint8: the orbit size of border tuple (top column, bottom column, left row, right row)
    when it is the smallest of its 8 images, else 0 -- for borders of four distinct queens (no
    corner). The kernel reads it through :func:`edge_weight_masks`."""
    m = n - 1
    t, b, l, r = (np.asarray(x, np.int64) for x in (t, b, l, r))

    def key(a: np.ndarray, c: np.ndarray, e: np.ndarray, f: np.ndarray) -> np.ndarray:
        return ((a * n + c) * n + e) * n + f

    own = key(t, b, l, r)
    images = [key(m - l, m - r, b, t), key(m - b, m - t, m - r, m - l), key(r, l, m - t, m - b),
              key(m - t, m - b, r, l), key(b, t, m - l, m - r), key(l, r, t, b), key(m - r, m - l, m - b, m - t)]
    smaller = np.any([k < own for k in images], axis=0)
    fixed = 1 + np.sum([k == own for k in images], axis=0)  # the stabiliser's size
    return np.where(smaller, 0, 8 // fixed).astype(np.uint8)


def edge_weight_masks(n: int) -> np.ndarray:
    """(t, l, r, 4) uint32 for every t < n-1-t and rows l, r: bit b of word k is set when border
    (t, b, l, r) has weight 8 >> k -- the kernel's leaf weights where a border queen ties with t."""
    t, l, r, b = np.meshgrid(np.arange(max(n // 2, 1)), np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    weight = border_weight(n, t, b, l, r)  # rows the kernel never reads (t = 0, a corner, l = r) too
    bits = np.uint32(1) << b.astype(np.uint32)
    return np.stack([np.bitwise_or.reduce(np.where(weight == w, bits, np.uint32(0)), axis=3)
                     for w in (8, 4, 2, 1)], axis=-1).astype(np.uint32)


def edge_weight(n: int, prefix: np.ndarray) -> np.ndarray:
    """(rows,) uint8: :func:`border_weight` of complete edges-mode states (prefix: every row's column)."""
    p = prefix[:, :n].astype(np.int64)
    return border_weight(n, p[:, 0], p[:, n - 1], np.argmax(p == 0, axis=1), np.argmax(p == n - 1, axis=1))


def edge_available(n: int, prefix: np.ndarray, masks: dict[str, np.ndarray], free: np.ndarray) -> np.ndarray:
    """``free`` (the next open row's free squares) less the edges mode's static rules (the bounds that
    nqueens.cl computes per level, EDGE_BOUND and the forced row): see the module's docstring."""
    m, full = n - 1, _full(n)
    rows = masks["rows"]
    row = lowest_bit_index(rows)
    t = prefix[:, 0].astype(np.int64)
    corner = t == 0
    c1 = prefix[:, 1].astype(np.int64) if prefix.shape[1] > 1 else np.zeros_like(t)
    ends = np.uint32(1) | (np.uint32(1) << np.uint32(m))
    band = ((np.uint32(1) << (m - t + 1).astype(np.uint32)) - np.uint32(1)) & ~((np.uint32(1) << t.astype(np.uint32)) - np.uint32(1))
    out = np.where(~corner & ((row < t) | (row > m - t)), free & ~ends, free)
    out = np.where(~corner & (row == m), out & band, out)
    out = np.where(corner & (row >= 2) & (row <= c1), out & ~np.uint32(2), out)
    # the forced row keeps only the empty ones of columns 0 and n-1 (both: both, as the kernel does)
    empty = ~masks["cols"] & ends
    out = np.where(~corner & (row == m - t) & (rows != 0) & (empty != 0), out & empty, out)
    return np.where(rows != 0, out & full, np.uint32(0)).astype(np.uint32)


def levels_left(n: int, depth: int, symmetry: str) -> int:
    """At most how many rows a state with ``depth`` prefix entries has left (the kernels' stack depth):
    the dihedral prefix holds 4 border entries for at least 2 rows (top, bottom); the other modes are top-down."""
    return max(n - depth + (BORDER - 2 if symmetry == "dihedral" else 0), 0)


@dataclass(frozen=True)
class QueenWalk:
    """Random walks down from states (poolgen.cost): the masks, and in the edges mode the first two
    prefix entries (t, c1) that its rules read."""

    n: int
    masks: dict[str, np.ndarray]
    head: np.ndarray
    symmetry: str

    @classmethod
    def of(cls, n: int, batch: StateBatch, symmetry: str) -> "QueenWalk":
        return cls(n, batch.masks, batch.prefix[:, :2], symmetry)

    def allowed(self) -> np.ndarray:
        free = available(self.n, self.masks)
        return edge_available(self.n, self.head, self.masks, free) if self.symmetry == "edges" else free

    def place(self, rows: np.ndarray, cols: np.ndarray) -> "QueenWalk":
        masks = place(self.n, {k: v[rows] for k, v in self.masks.items()}, cols)
        return QueenWalk(self.n, masks, self.head[rows], self.symmetry)


class NQueens(Problem):
    name = "nqueens"
    min_n = 1
    max_n = MAX_N
    total_series = "nqueens_total"
    classes_series = "nqueens_unique"
    mask_names = ("cols", "d1", "d2", "rows")
    symmetry_modes = ("dihedral", "edges", "mirror", "none")
    # a border orbit weighs 8/|stabiliser|; an edges-mode solution whose border has a smaller image weighs 0
    solution_weights = {"dihedral": (1, 8), "edges": (0, 8), "mirror": (1, 2), "none": (1, 1)}
    states_per_lane = 32  # smaller states, shorter launch tails (H200, N=20: 11.7 M states 1.6x faster than 1.3 M)
    default_symmetry = "edges"
    reflected_modes = ("mirror", "none")  # top-down: edges and dihedral bound by the border queens' columns
    search_max_n = (1 << 31) - 1  # search_nqueens.cl indexes boards x queens in 32 bits
    no_solution = (2, 3)

    def is_solution(self, solution: list[int]) -> bool:
        return is_queens_solution(solution)

    def walk(self, n: int, batch: StateBatch, symmetry: str) -> QueenWalk:
        return QueenWalk.of(n, batch, symmetry)

    def levels_left(self, n: int, depth: int, symmetry: str) -> int:
        return levels_left(n, depth, symmetry)

    def complete(self, n: int, batch: StateBatch) -> bool:
        return not np.any(batch.masks["rows"])

    def reflected(self, n: int, batch: StateBatch, symmetry: str) -> StateBatch | None:
        """Every queen at column n-1-c (top-down modes; edges and dihedral derive their bounds from the
        border queens' columns, so their images are not states of the mode): column bits reversed, and
        the two diagonal families trade places, each reversed (d1 holds c + n-1 - r, d2 c + r)."""
        if symmetry not in self.reflected_modes:
            return None
        m = batch.masks
        masks = {"cols": _reverse(m["cols"], n).astype(np.uint32), "d1": _reverse(m["d2"], 2 * n - 1),
                 "d2": _reverse(m["d1"], 2 * n - 1), "rows": m["rows"].copy()}
        p = batch.prefix.astype(np.int64)
        prefix = np.where(p == PAD, PAD, n - 1 - p).astype(batch.prefix.dtype)
        return StateBatch(prefix, batch.weight.copy(), masks)

    def choices(self, n: int, batch: StateBatch, symmetry: str) -> np.ndarray | None:
        """The squares of each state's next row in the mode (nqueens_prepare_children places them), where
        every state has two rows or more open: no child is complete, so none needs the edges mode's
        completion weight and each stands for its parent's copies."""
        rows = batch.masks["rows"]
        if len(batch) == 0 or np.any((rows & (rows - np.uint32(1))) == 0):  # fewer than two open rows somewhere
            return None
        return self.available(n, batch, symmetry)

    def _alive(self, n: int, batch: StateBatch, symmetry: str) -> StateBatch:
        """Keep states that are complete or whose next open row still has a free square."""
        keep = (batch.masks["rows"] == 0) | (self.available(n, batch, symmetry) != 0)
        return batch if keep.all() else batch.take(np.nonzero(keep)[0])

    def available(self, n: int, batch: StateBatch, symmetry: str) -> np.ndarray:
        """(rows,) uint32: the squares each state's next open row may take in this mode."""
        return QueenWalk.of(n, batch, symmetry).allowed()

    def root(self, n: int, symmetry: str) -> StateBatch:
        self.check_n(n)
        self.check_symmetry(symmetry)
        if symmetry == "dihedral":
            tuples, orbit = border_configurations(n)
            k = len(tuples)
            masks = _empty(n, k)
            last = np.full(k, n - 1)
            for row, col in ((np.zeros(k, np.int64), tuples[:, 0]), (last, tuples[:, 1]),
                             (tuples[:, 2], np.zeros(k, np.int64)), (tuples[:, 3], last)):
                masks = occupy(n, masks, row, col)  # a shared corner is simply occupied twice
            return self._alive(n, StateBatch(tuples.astype(np.uint8), orbit, masks), symmetry)
        if symmetry == "edges":
            return self._edges_root(n)
        cols = np.arange(n) if symmetry == "none" else np.arange((n + 1) // 2)
        weight = np.where((symmetry == "none") | (cols * 2 + 1 == n), 1, 2).astype(np.uint8)
        masks = place(n, _empty(n, len(cols)), cols)
        return self._alive(n, StateBatch(cols.astype(np.uint8)[:, None], weight, masks), symmetry)

    def _edges_root(self, n: int) -> StateBatch:
        """Depth-2 states: the corner queen with row 1's queen at c1 >= 2 (weight 8), and row 0 at each
        t with t < n-1-t, expanded once by the mode's rules (weight 1; the kernel weights solutions)."""
        if n >= 32:
            raise UserError("nqueens: symmetry 'edges' serves n <= 31 (n = 32 is untested): use dihedral")
        if n == 1:
            return StateBatch(np.zeros((1, 1), np.uint8), np.ones(1, np.uint8), place(n, _empty(n, 1), np.zeros(1, np.int64)))
        c1 = np.arange(2, n - 1)
        corner = np.stack([np.zeros_like(c1), c1], axis=1)
        masks = place(n, place(n, _empty(n, len(c1)), corner[:, 0]), c1)
        corners = StateBatch(corner.astype(np.uint8), np.full(len(c1), 8, np.uint8), masks)
        t = np.arange(1, n)
        t = t[t < n - 1 - t]
        tops = StateBatch(t.astype(np.uint8)[:, None], np.ones(len(t), np.uint8), place(n, _empty(n, len(t)), t))
        return self._alive(n, StateBatch.concat([corners, self.expand(n, tops, "edges")]), "edges")

    def expand(self, n: int, batch: StateBatch, symmetry: str) -> StateBatch:
        # complete states are carried with PAD, even in a slice of only complete ones (poolgen.generate)
        avail = self.available(n, batch, symmetry)
        has = (avail[:, None] >> np.arange(n, dtype=np.uint32)[None, :]) & np.uint32(1)
        done = batch.masks["rows"] == 0
        has = np.concatenate([has, done[:, None].astype(np.uint32)], axis=1)  # the last column: carried over
        parent, col = np.nonzero(has)  # row-major: (parent, column) order
        grow = col < n
        masks = {k: v[parent] for k, v in batch.masks.items()}
        placed = place(n, {k: v[grow] for k, v in masks.items()}, col[grow])
        for k in masks:
            masks[k][grow] = placed[k]
        value = np.where(grow, col, PAD).astype(np.uint8)
        prefix = np.concatenate([batch.prefix[parent], value[:, None]], axis=1)
        children = StateBatch(prefix, batch.weight[parent], masks)
        if symmetry == "edges":  # a state completed here counts its border's orbit (corners: 8), or nothing
            done_now = np.nonzero(grow & (masks["rows"] == 0) & (prefix[:, 0] != 0))[0]
            if len(done_now):
                children.weight[done_now] = edge_weight(n, prefix[done_now])
            children = children.take(np.nonzero(children.weight)[0])
        return self._alive(n, children, symmetry)


def is_queens_solution(rows: "list[int] | np.ndarray") -> bool:
    """rows[c] = the row of column c's queen: a permutation with no two queens on a diagonal. O(N) counts
    (np.unique's hashing took 7 s at N = 10^7), so a found board of any size is checked in well under a second."""
    q = np.asarray(rows, dtype=np.int64)
    n = len(q)
    if n == 0 or q.min() < 0 or q.max() >= n:
        return False
    c = np.arange(n)
    return all(np.bincount(x, minlength=1).max() == 1 for x in (q, q + c, q - c + n - 1))
