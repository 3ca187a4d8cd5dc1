"""The device-side preparation of N-Queens states (nqueens_prepare) against a per-state reference."""

from __future__ import annotations

import numpy as np
import pytest

from permenum.poolgen.generate import climb
from permenum.problems import get_problem
from permenum.solver.devices import select_devices
from permenum.solver.nqueens import NQueensKernel
from permenum.solver.opencl import device_context, download


def _reference(n: int, cols: int, d1: int, d2: int, rows: int, side_l: int, side_r: int, dihedral: bool) -> list[int]:
    """cols, ld, rd, span, fl, fr, e1, e2 of one state, square by square (nqueens.cl says what they mean)."""
    full = (1 << n) - 1
    row0 = (rows & -rows).bit_length() - 1 if rows else 0
    last = n - 2 if dihedral else n - 1
    ld = sum(1 << c for c in range(n) if d1 >> (c - row0 + n - 1) & 1) & full  # "\" through (row0, c)
    rd = sum(1 << c for c in range(n) if d2 >> (c + row0) & 1) & full  # "/" through (row0, c)
    fl = fr = e1 = e2 = 0
    if dihedral and rows:
        for r in range(row0 + 1, last + 1):
            e1 |= (d1 >> (0 - r + n - 1) & 1) << r  # the "\" line through (r, 0)
            e2 |= (d2 >> (n - 1 + r) & 1) << r  # the "/" line through (r, n-1)
        fl = 1 << side_l if row0 < side_l <= last else 0
        fr = 1 << side_r if row0 < side_r <= last else 0
    span = row0 | last << 8 if rows else 0xFFFF
    return [cols, ld, rd, span, fl, fr, e1, e2]


@pytest.mark.parametrize("n,symmetry", [(6, "dihedral"), (9, "dihedral"), (14, "dihedral"), (14, "mirror"), (9, "none")])
def test_prepared_inputs_match_the_reference(n: int, symmetry: str) -> None:
    problem = get_problem("nqueens")
    states = climb(problem, n, 1500, 4.0, symmetry).states
    dev = device_context(select_devices(None)[0])
    kernel = NQueensKernel(dev, n, states.depth, symmetry, "lds")
    buffers, _ = kernel._prepared(states)
    got = np.stack([download(dev, b, len(states), np.uint32) for b in buffers], axis=1)
    m, dihedral = states.masks, symmetry == "dihedral"
    sides = states.prefix[:, 2:4] if dihedral else np.zeros((len(states), 2), np.uint8)
    want = np.array([_reference(n, int(m["cols"][i]), int(m["d1"][i]), int(m["d2"][i]), int(m["rows"][i]),
                                int(sides[i, 0]), int(sides[i, 1]), dihedral) for i in range(len(states))], np.uint32)
    assert len(states) >= 9
    assert (want[:, 3] != 0xFFFF).any() and (not dihedral or want[:, 4:].any())  # the cases the test is about occur
    np.testing.assert_array_equal(got, want)
