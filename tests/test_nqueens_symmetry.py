"""The dihedral and edges modes against brute force: border orbits, weights, totals, and fewer nodes."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from permenum.poolgen.generate import climb
from permenum.problems import get_problem
from permenum.problems.nqueens import border_configurations
from permenum.solver.devices import select_devices
from permenum.solver.nqueens import NQueensKernel
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


@pytest.mark.parametrize("fewer, more, kernel, n, ratio", [("dihedral", "mirror", "skip", 12, 0.8),  # 334 k vs 428 k
                                                         ("edges", "dihedral", "skip", 13, 0.7)])  # 1.01 M vs 1.70 M
def test_fewer_nodes_with_more_symmetry(fewer: str, more: str, kernel: str, n: int, ratio: float) -> None:
    problem = get_problem("nqueens")
    dev = device_context(select_devices(None)[0])
    nodes = {}
    for symmetry in (fewer, more):
        ladder = climb(problem, n, 512, 4.0, symmetry)
        out = make_solver("nqueens", dev, n, ladder.depth, kernel, symmetry, count_nodes=True)(ladder.states)
        assert problem.tally(ladder.states, out.counts, None, symmetry).weighted == published("nqueens_total", n)
        nodes[symmetry] = int(np.sum(out.nodes, dtype=np.uint64))
    assert nodes[fewer] < ratio * nodes[more], nodes


@pytest.mark.parametrize("symmetry", ["edges", "dihedral", "mirror", "none"])
def test_dead_child_filter_keeps_every_count_and_node(symmetry: str) -> None:
    """skip drops a child's candidates whose own child has no square; skip-all enters them. Per state the
    counts must agree (a live candidate dropped would lose solutions) and so must the node counts (the
    filter counts the children it drops: a wrong window shows as a different tree); skip-soa, the same
    search with its slot words apart, too."""
    problem = get_problem("nqueens")
    dev = device_context(select_devices(None)[0])
    ladder = climb(problem, 12, 512, 4.0, symmetry)
    kernels = ("skip", "skip-soa", "skip-all")
    out = {kernel: make_solver("nqueens", dev, 12, ladder.depth, kernel, symmetry, count_nodes=True)(ladder.states)
           for kernel in kernels}
    for kernel in ("skip", "skip-soa"):
        assert np.array_equal(out[kernel].counts, out["skip-all"].counts), kernel
        assert np.array_equal(out[kernel].nodes, out["skip-all"].nodes), kernel
    assert problem.tally(ladder.states, out["skip"].counts, None, symmetry).weighted == published("nqueens_total", 12)
    # and it is on: the pass-counting build shows the passes it saves (about a third at N=12-16)
    passes = {kernel: NQueensKernel(dev, 12, ladder.depth, symmetry, kernel, count_nodes=True,
                                    build_options=("-DCOUNT_PASSES",))(ladder.states).nodes for kernel in kernels}
    assert np.array_equal(passes["skip"], passes["skip-soa"])  # the slot layout changes no pass
    total = {kernel: int(np.sum(p, dtype=np.uint64)) for kernel, p in passes.items()}
    assert total["skip"] < 0.85 * total["skip-all"], total


@pytest.mark.parametrize("kernel", ["dfs", "dsl"])
@pytest.mark.parametrize("symmetry", ["dihedral", "edges"])
def test_top_down_kernels_refuse_the_other_modes(kernel: str, symmetry: str) -> None:
    """dfs and dsl search the top-down modes only: any other is refused in one line that names skip."""
    from permenum.errors import UserError

    dev = device_context(select_devices(None)[0])
    with pytest.raises(UserError, match=f"has no symmetry '{symmetry}': it needs symmetry mirror or none") as exc:
        make_solver("nqueens", dev, 10, 2, kernel, symmetry)
    assert "\n" not in str(exc.value) and "use skip" in str(exc.value)


def test_unknown_kernel_lists_the_choices() -> None:
    """A retired variant's name is refused like any unknown one, with the kernels there are."""
    from permenum.errors import UserError

    dev = device_context(select_devices(None)[0])
    choices = re.escape("unknown nqueens kernel 'lds' (choose from skip, skip-soa, skip-all, dfs, dsl)")
    with pytest.raises(UserError, match=choices):
        make_solver("nqueens", dev, 10, 2, "lds", "edges")


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8, 9])
def test_edges_weights_count_every_solution_once(n: int) -> None:
    """The edges mode's rule, solution by solution: a corner solution counts 8 when column 1's queen
    is below row c1, any other 8 / |stabiliser| of its border when that border is the smallest of its
    images (border_weight, checked here against the 8 maps of the board), else 0."""
    from permenum.problems.nqueens import border_weight

    total = 0
    for p in _solutions(n):
        t, b, l, r = _border(n, p)
        images = {_border(n, q) for q in _images(n, p)}
        if t == 0:
            total += 8 if p.index(1) > p[1] else 0
            continue
        w = int(border_weight(n, np.array([t]), np.array([b]), np.array([l]), np.array([r]))[0])
        smallest = min(images) == (t, b, l, r)
        assert w == (8 // sum(_border(n, q) == (t, b, l, r) for q in _images(n, p)) if smallest else 0), (p, w)
        total += w
    assert total == published("nqueens_total", n)
