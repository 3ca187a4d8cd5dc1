"""The device-side preparation of N-Queens states (nqueens_prepare) against a per-state reference."""

from __future__ import annotations

import numpy as np
import pytest

from permenum.poolgen.generate import climb
from permenum.problems import StateBatch, get_problem
from permenum.problems.base import ChildBatch, exact_sum
from permenum.problems.nqueens import place
from permenum.solver.devices import select_devices
from permenum.solver.nqueens import NQueensKernel
from permenum.solver.opencl import device_context, download


def _reference(n: int, cols: int, d1: int, d2: int, rows: int, border: tuple[int, int, int], layout: str) -> list[int]:
    """cols, ld, rd, span and the border word fl of one state in the layout ("shifted": no border; "table":
    the dihedral border), square by square (nqueens.cl says what they mean). ``border``: left row, right row,
    bottom column."""
    full = (1 << n) - 1
    row0 = (rows & -rows).bit_length() - 1 if rows else 0
    last = n - 1 if layout == "shifted" else n - 2
    side_l, side_r, bottom = border
    left_below, right_below = layout != "shifted" and rows and row0 < side_l <= last, layout != "shifted" and rows and row0 < side_r <= last
    if layout == "table":  # a side queen below row0 is placed by the kernel: its column and its line towards its square go
        cols &= ~((1 if left_below else 0) | ((1 << (n - 1)) if right_below else 0))
        d2 &= ~(1 << side_l) if left_below else -1  # "/" through (side_l, 0)
        d1 &= ~(1 << (n - 1 - side_r + n - 1)) if right_below else -1  # "\" through (side_r, n-1)
    ld = sum(1 << c for c in range(n) if d1 >> (c - row0 + n - 1) & 1) & full  # "\" through (row0, c)
    rd = sum(1 << c for c in range(n) if d2 >> (c + row0) & 1) & full  # "/" through (row0, c)
    fl = 0
    if layout == "table":
        fl = bottom | (side_l if left_below else 0xFF) << 8 | (side_r if right_below else 0xFF) << 16
    span = row0 | last << 8 if rows else 0xFFFF
    return [cols, ld, rd, span, fl]


@pytest.mark.parametrize("n,symmetry,kernel", [(6, "dihedral", "skip"), (9, "dihedral", "skip"), (14, "dihedral", "skip"),
                                               (14, "mirror", "dfs"), (9, "none", "skip")])
def test_prepared_inputs_match_the_reference(n: int, symmetry: str, kernel: str) -> None:
    problem = get_problem("nqueens")
    states = climb(problem, n, 1500, 4.0, symmetry).states
    dev = device_context(select_devices(None)[0])
    solver = NQueensKernel(dev, n, states.depth, symmetry, kernel)
    buffers, _ = solver._prepared(solver.stage(states))
    got = np.stack([download(dev, b, len(states), np.uint32) for b in buffers], axis=1)
    m, dihedral = states.masks, symmetry == "dihedral"
    layout = "table" if dihedral else "shifted"
    border = states.prefix[:, [2, 3, 1]] if dihedral else np.zeros((len(states), 3), np.uint8)
    want = np.array([_reference(n, int(m["cols"][i]), int(m["d1"][i]), int(m["d2"][i]), int(m["rows"][i]),
                                tuple(int(x) for x in border[i]), layout) for i in range(len(states))], np.uint32)
    assert len(states) >= 9
    assert (want[:, 3] != 0xFFFF).any() and (not dihedral or want[:, 4].any())  # the cases the test is about occur
    if dihedral:  # states with a side queen below row0, and with none
        assert ((want[:, 4] >> 8 & 0xFF) != 0xFF).any() and ((want[:, 4] >> 8 & 0xFF) == 0xFF).any()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [9, 14])
def test_prepared_edges_word_matches_the_prefix(n: int) -> None:
    """The edges mode: top-down masks, and t with the rows of columns 0 and n-1 (c1 for a corner)
    found on the device in the prefix matrix, against a plain reading of the prefix."""
    problem = get_problem("nqueens")
    states = climb(problem, n, 1500, 4.0, "edges").states
    dev = device_context(select_devices(None)[0])
    solver = NQueensKernel(dev, n, states.depth, "edges", "skip")
    buffers, _ = solver._prepared(solver.stage(states))
    got = np.stack([download(dev, b, len(states), np.uint32) for b in buffers], axis=1)
    p = states.prefix.tolist()
    t = np.array([row[0] for row in p], np.uint32)
    left = np.array([row.index(0) if 0 in row else 255 for row in p], np.uint32)
    right = np.array([row[1] if row[0] == 0 else row.index(n - 1) if n - 1 in row else 255 for row in p], np.uint32)
    assert (t == 0).any() and (left != 255).any() and (right != 255).any() and (left == 255).any()
    np.testing.assert_array_equal(got[:, 4], t | left << 8 | right << 16)
    m = states.masks
    want = np.array([_reference(n, int(m["cols"][i]), int(m["d1"][i]), int(m["d2"][i]), int(m["rows"][i]), (0, 0, 0), "shifted")
                     for i in range(len(states))], np.uint32)
    np.testing.assert_array_equal(got[:, :4], want[:, :4])


@pytest.mark.parametrize("n,symmetry,kernel", [(9, "edges", "skip"), (12, "edges", "skip-soa"), (11, "dihedral", "skip"),
                                               (12, "mirror", "dfs"), (10, "none", "skip")])
def test_children_made_on_the_device_are_the_hosts(n: int, symmetry: str, kernel: str) -> None:
    """nqueens_prepare_children: the prepared words of every child (dead ones too), in (parent, column)
    order, equal nqueens_prepare's of the same children built on the host; and the children's weighted
    counts sum, parent by parent, to the parents' own counts."""
    problem = get_problem("nqueens")
    parents = climb(problem, n, 300, 4.0, symmetry).states
    choices = problem.choices(n, parents, symmetry)
    assert choices is not None
    children = ChildBatch(parents, choices)
    parent = np.repeat(np.arange(len(parents)), np.diff(children.first))
    col = np.concatenate([[c for c in range(n) if int(bits) >> c & 1] for bits in choices]).astype(np.int64)
    masks = place(n, {k: v[parent] for k, v in parents.masks.items()}, col)
    host = StateBatch(np.concatenate([parents.prefix[parent], col[:, None].astype(np.uint8)], axis=1),
                      parents.weight[parent], masks)
    dev = device_context(select_devices(None)[0])
    solver = NQueensKernel(dev, n, children.depth, symmetry, kernel)
    on_device, _ = solver._prepared(solver.stage(children))
    on_host, _ = solver._prepared(solver.stage(host))
    got = np.stack([download(dev, b, len(children), np.uint32) for b in on_device], axis=1)
    want = np.stack([download(dev, b, len(host), np.uint32) for b in on_host], axis=1)
    assert len(children) == len(host) >= len(problem.expand(n, parents, symmetry))  # dead children are kept
    np.testing.assert_array_equal(got, want)
    counts = solver(children).counts
    per_parent = np.add.reduceat(counts, children.first[:-1])
    np.testing.assert_array_equal(per_parent, NQueensKernel(dev, n, parents.depth, symmetry, kernel)(parents).counts)
    assert exact_sum(counts, children.weight) == exact_sum(per_parent, parents.weight) > 0


def test_a_child_batch_is_sliced_at_parent_boundaries() -> None:
    problem = get_problem("nqueens")
    parents = climb(problem, 10, 200, 4.0, "edges").states
    children = ChildBatch(parents, problem.choices(10, parents, "edges"))  # type: ignore[arg-type]
    cut = int(children.first[3])
    head, tail = children.take(slice(0, cut - 1)), children.take(slice(cut, None))
    assert len(head) == cut and len(head.parents) == 3  # moved on to the next parent's first child
    assert len(tail) == len(children) - cut and tail.depth == parents.depth + 1
    with pytest.raises(ValueError):
        children.take(slice(cut + 1, None))
