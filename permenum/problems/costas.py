"""Costas arrays: columns filled left to right; a state is a placed prefix with no repeated displacement.

Symmetry "canonical" (default): the 8 symmetries of the square act on Costas arrays; only arrays
whose p[0] equals the smallest of their 8 edge offsets are searched (about one eighth of the
tree), and each found array is weighted by 8/m on the host (see costas_symmetry.class_weights).
States therefore carry weight 1; the kernel reports every canonical array. "none" searches all.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from permenum.problems.base import Problem, StateBatch, Tally
from permenum.problems.costas_symmetry import class_weights, is_costas, symmetries

MAX_N = 32  # 2n-1 row differences per distance fit one 64-bit mask


def valid_next(n: int, prefix: np.ndarray, symmetry: str) -> np.ndarray:
    """(rows, n) bool: which rows the next column may take without repeating a displacement."""
    rows, k = prefix.shape
    v = np.arange(n, dtype=np.int16)[None, :]
    p = prefix.astype(np.int16)
    ok = np.ones((rows, n), bool)
    for j in range(k):
        ok &= p[:, j : j + 1] != v
    for d in range(1, k + 1):
        diff = v - p[:, k - d : k - d + 1]  # (rows, n): new displacement at distance d
        for j in range(k - d):
            ok &= diff != (p[:, j + d] - p[:, j])[:, None]
    if symmetry == "canonical" and k > 0:
        p0 = p[:, 0:1]
        edge_row = (v == 0) | (v == n - 1)
        col_ok = (k >= p0) & (n - 1 - k >= p0)  # rows 0 and n-1 only in columns p0..n-1-p0
        ok &= ~edge_row | col_ok
        if k == n - 1:  # the last column's row is an edge offset too
            ok &= (v >= p0) & (n - 1 - v >= p0)
    return ok


class Costas(Problem):
    name = "costas"
    min_n = 1
    max_n = MAX_N
    total_series = "costas_total"
    classes_series = "costas_classes"
    symmetry_modes = ("canonical", "none")
    default_symmetry = "canonical"

    def _alive(self, n: int, prefix: np.ndarray, symmetry: str) -> StateBatch:
        if prefix.shape[1] < n and len(prefix):
            prefix = prefix[valid_next(n, prefix, symmetry).any(axis=1)]
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
        """Check every array the kernel found (independently of it) and weight it on the host."""
        if solutions is None:
            raise RuntimeError("the Costas kernel returned no arrays")
        raw = int(np.sum(counts, dtype=np.uint64))
        arrays = [tuple(int(x) for x in row) for row in solutions]
        if len(arrays) != raw or len(set(arrays)) != raw:
            raise RuntimeError(f"kernel reported {raw} arrays but returned {len(set(arrays))} distinct ones")
        bad = [a for a in arrays if not is_costas(a)]
        if bad:
            raise RuntimeError(f"kernel returned {len(bad)} arrays that are not Costas arrays, e.g. {bad[0]}")
        if symmetry == "none":  # every array found once: a class of size s contributes s x 1/s
            return Tally(Fraction(raw), raw, sum((Fraction(1, len(set(symmetries(a)))) for a in arrays), Fraction(0)))
        total, classes = Fraction(0), Fraction(0)
        for a in arrays:
            w, c = class_weights(a)
            total += w
            classes += c
        return Tally(total, raw, classes)
