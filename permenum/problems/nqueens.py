"""N-Queens: rows filled top to bottom, one queen per row, bitmasks for columns and both diagonals.

Symmetry ("mirror"): only the left half of the first row is searched; a state in the left half
stands for itself and its mirror image (weight 2), the middle column of an odd board for itself
(weight 1). "none" searches every first-row column with weight 1.
"""

from __future__ import annotations

import numpy as np

from permenum.problems.base import Problem, StateBatch

MAX_N = 32  # the kernels keep every row in one 32-bit mask


def _full(n: int) -> np.uint32:
    return np.uint32((1 << n) - 1)


def available(n: int, masks: dict[str, np.ndarray]) -> np.ndarray:
    """(rows,) uint32: the free squares of the next row (bit c = column c); shared with poolgen.cost."""
    return ~(masks["cols"] | masks["ld"] | masks["rd"]) & _full(n)


def place(n: int, masks: dict[str, np.ndarray], col: np.ndarray) -> dict[str, np.ndarray]:
    """The masks of the next row after a queen in column ``col[i]`` on row i of ``masks``."""
    bit = (np.uint32(1) << col.astype(np.uint32)).astype(np.uint32)
    return {
        "cols": (masks["cols"] | bit).astype(np.uint32),
        "ld": (((masks["ld"] | bit) << np.uint32(1)) & _full(n)).astype(np.uint32),
        "rd": ((masks["rd"] | bit) >> np.uint32(1)).astype(np.uint32),
    }


class NQueens(Problem):
    name = "nqueens"
    min_n = 1
    max_n = MAX_N
    total_series = "nqueens_total"
    classes_series = "nqueens_unique"
    mask_names = ("cols", "ld", "rd")

    def _alive(self, n: int, batch: StateBatch) -> StateBatch:
        """Keep states that are complete or whose next row still has a free square."""
        if batch.depth >= n:
            return batch
        return batch.take(np.nonzero(available(n, batch.masks))[0])

    def _place(self, n: int, batch: StateBatch, parent: np.ndarray, col: np.ndarray) -> StateBatch:
        masks = place(n, {k: v[parent] for k, v in batch.masks.items()}, col)
        prefix = np.concatenate([batch.prefix[parent], col.astype(np.uint8)[:, None]], axis=1)
        return self._alive(n, StateBatch(prefix, batch.weight[parent], masks))

    def root(self, n: int, symmetry: str) -> StateBatch:
        self.check_n(n)
        self.check_symmetry(symmetry)
        empty = StateBatch(
            np.zeros((1, 0), np.uint8),
            np.ones(1, np.uint8),
            {k: np.zeros(1, np.uint32) for k in self.mask_names},
        )
        if symmetry == "none":
            cols = np.arange(n)
            weight = np.ones(n, np.uint8)
        else:
            cols = np.arange((n + 1) // 2)
            weight = np.where(cols * 2 + 1 == n, 1, 2).astype(np.uint8)
        batch = self._place(n, empty, np.zeros(len(cols), np.int64), cols)
        # _place keeps the parent's weight; set the mirror weights of the first row here.
        keep = np.isin(cols, batch.prefix[:, 0]) if len(batch) else np.zeros(0, bool)
        batch.weight = weight[keep]
        return batch

    def expand(self, n: int, batch: StateBatch, symmetry: str) -> StateBatch:
        if batch.depth >= n:
            return batch
        avail = available(n, batch.masks)
        has = (avail[:, None] >> np.arange(n, dtype=np.uint32)[None, :]) & np.uint32(1)
        parent, col = np.nonzero(has)  # row-major: (parent, column) order
        return self._place(n, batch, parent, col)
