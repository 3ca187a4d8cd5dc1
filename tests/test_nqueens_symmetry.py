"""The dihedral mode against brute force: border orbits, weights, totals, and fewer nodes than mirror."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from permenum.poolgen.generate import climb
from permenum.problems import get_problem
from permenum.problems.nqueens import border_configurations
from permenum.solver.devices import select_devices
from permenum.solver.opencl import device_context
from permenum.solver.registry import make_solver
from tests.conftest import published


def _solutions(n: int) -> list[tuple[int, ...]]:
    """Every solution as the column of each row, by brute force over permutations."""
    return [p for p in itertools.permutations(range(n))
            if len({r + c for r, c in enumerate(p)}) == n and len({r - c for r, c in enumerate(p)}) == n]


def _border(n: int, p: tuple[int, ...]) -> tuple[int, int, int, int]:
    return p[0], p[-1], p.index(0), p.index(n - 1)


def _images(n: int, p: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The solution under the 8 symmetries of the board, each again as the column of each row."""
    cells = [(r, c) for r, c in enumerate(p)]
    maps = [lambda r, c: (r, c), lambda r, c: (c, n - 1 - r), lambda r, c: (n - 1 - r, n - 1 - c),
            lambda r, c: (n - 1 - c, r), lambda r, c: (r, n - 1 - c), lambda r, c: (n - 1 - r, c),
            lambda r, c: (c, r), lambda r, c: (n - 1 - c, n - 1 - r)]
    return [tuple(c for _, c in sorted(g(r, c) for r, c in cells)) for g in maps]


@pytest.mark.parametrize("n", [1, 4, 5, 6, 7, 8])
def test_canonical_borders_weight_every_solution_once(n: int) -> None:
    tuples, orbit = border_configurations(n)
    weight = {tuple(int(x) for x in t): int(w) for t, w in zip(tuples, orbit)}
    assert all(w in (1, 2, 4, 8) for w in weight.values())
    by_border: dict[tuple[int, ...], int] = {}
    for p in _solutions(n):
        by_border[_border(n, p)] = by_border.get(_border(n, p), 0) + 1
        # the borders of the solution's 8 images meet exactly one canonical border, as many times
        # as 8 / its orbit size (the images that share a border)
        canonical = [_border(n, q) for q in _images(n, p) if _border(n, q) in weight]
        assert len(set(canonical)) == 1 and len(canonical) == 8 // weight[canonical[0]], (p, canonical)
    assert sum(weight[b] * by_border.get(b, 0) for b in weight) == published("nqueens_total", n)


def test_dihedral_counts_exactly_with_fewer_nodes_than_mirror() -> None:
    problem = get_problem("nqueens")
    dev = device_context(select_devices(None)[0])
    nodes = {}
    for symmetry in ("dihedral", "mirror"):
        ladder = climb(problem, 12, 512, 4.0, symmetry)
        out = make_solver("nqueens", dev, 12, ladder.depth, "lds64", symmetry, count_nodes=True)(ladder.states)
        assert problem.tally(ladder.states, out.counts, None, symmetry).weighted == published("nqueens_total", 12)
        nodes[symmetry] = int(np.sum(out.nodes, dtype=np.uint64))
    assert nodes["dihedral"] < 0.75 * nodes["mirror"], nodes


def test_top_down_kernels_refuse_the_dihedral_mode() -> None:
    from permenum.errors import UserError

    dev = device_context(select_devices(None)[0])
    for kernel in ("dfs", "dsl"):
        with pytest.raises(UserError, match="needs symmetry"):
            make_solver("nqueens", dev, 10, 5, kernel, "dihedral")
