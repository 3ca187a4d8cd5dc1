"""Costas arrays through the whole flow on PoCL: totals, classes, the arrays themselves, symmetry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from permenum.errors import UserError
from permenum.jobs.ledger.collect import collect
from permenum.jobs.local import run_local
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.poolgen.generate import climb
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.problems import StateBatch, get_problem
from permenum.problems.costas_symmetry import (is_canonical, is_centre_canonical, is_costas, reading, representative,
                                               symmetries)
from permenum.solver.costas import VARIANTS, CostasKernel

LEFT_TO_RIGHT = ("dfs", "fc")  # the kernels of the left-to-right pools (cf: the centre mode's)
from permenum.solver.devices import select_devices
from permenum.solver.opencl import device_context
from tests.conftest import published


def _flow(root: Path, n: int, partitions: int, symmetry: str | None = None, workers: int = 1) -> int | None:
    """Pool, the local executor, collect: one worker on the whole CPU runs its tasks in this process; two
    workers on two sub-devices run a process each (about 0.5 s a run here, tests/test_nqueens_flow.py)."""
    layout = RunLayout(root)
    try:
        write_pool(layout, PoolSettings("costas", n, partitions, target_states=200, seed=n, symmetry=symmetry))
    except UserError as exc:
        assert "partitions but the pool has only" in str(exc) and not layout.manifest.exists()
        return None
    device = "cpu" if workers == 1 else f"cpu/{workers}"
    summary = run_local(layout, workers=workers, options=TaskOptions(device=device), show_progress=False)
    assert not summary.failed and sorted(summary.ran) == list(range(partitions))
    c = collect(layout)
    assert c.complete and c.total == published("costas_total", n), (n, c.total)
    assert c.classes == published("costas_classes", n), (n, c.classes)
    return c.total


@pytest.mark.parametrize("partitions, workers", [(1, 1), (3, 2), (7, 1)])
def test_exact_totals_and_classes_1_to_13(tmp_path: Path, partitions: int, workers: int) -> None:
    done = [n for n in range(1, 14) if _flow(tmp_path / str(n), n, partitions, workers=workers) is not None]
    assert done == list(range(1, 14)) if partitions == 1 else len(done) >= 9


def test_symmetry_reduction_equals_the_full_search(tmp_path: Path) -> None:
    """The unreduced search through the flow gives the published totals and classes for every n up to 12, as
    the weighted canonical one does in test_exact_totals_and_classes_1_to_13[1-1] (the same flows, not run twice)."""
    for n in range(1, 13):
        assert _flow(tmp_path / f"full{n}", n, 1, symmetry="none") == published("costas_total", n)


def test_canonical_search_finds_exactly_the_canonical_arrays() -> None:
    """Both kernels' canonical search finds exactly the arrays costas_symmetry.is_canonical names (edge
    offsets, a corner array against its transpose) from states that hold column 1 (from one that does not,
    the transpose rule waits: a superset); and every class's representative is among them, so nothing is
    lost."""
    dev = device_context(select_devices(None)[0])
    problem = get_problem("costas")
    for n in range(1, 12):
        every = CostasKernel(dev, n, "none")(climb(problem, n, 64, 4.0, "none").states).solutions
        arrays = [tuple(int(x) for x in a) for a in every.tolist()]
        assert len(arrays) == published("costas_total", n)
        canonical = {a for a in arrays if is_canonical(a)}
        assert {representative(a) for a in arrays} <= canonical, n
        for target in (1, 64):
            states = climb(problem, n, target, 4.0, "canonical").states
            for variant in LEFT_TO_RIGHT:
                found = CostasKernel(dev, n, "canonical", variant=variant)(states).solutions
                got = [tuple(int(x) for x in a) for a in found.tolist()]
                if states.depth >= 2 or n <= 2:
                    assert sorted(got) == sorted(canonical), (n, target, variant)
                else:
                    assert set(got) >= canonical, (n, target, variant)


def test_arrays_all_for_order_10(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "c10"
    cli("pool", "costas", 10, run, "--num-partitions", 3, check=True)
    cli("run", run, check=True)
    out = tmp_path / "all.txt"
    cli("arrays", run, "--all", "--out", out, check=True)
    arrays = [tuple(map(int, line.split())) for line in out.read_text().splitlines()]
    assert len(arrays) == len(set(arrays)) == published("costas_total", 10)
    assert all(is_costas(a) and sorted(a) == list(range(10)) for a in arrays)
    classes = [tuple(map(int, line.split())) for line in cli("arrays", run, check=True).stdout.splitlines()]
    assert len(classes) == len(set(classes)) == published("costas_classes", 10)  # one line per class
    assert all(a == min(symmetries(a)) for a in classes)  # at its representative
    assert {b for a in classes for b in symmetries(a)} == set(arrays)


def test_every_partition_counts_whole_classes(tmp_path: Path) -> None:
    """Each class counted once at its representative: per-partition counts are ints, whatever the split."""
    layout = RunLayout(tmp_path / "c11")
    write_pool(layout, PoolSettings("costas", 11, 7, target_states=200, seed=3))
    assert not run_local(layout, workers=2, options=TaskOptions(device="cpu/2"), show_progress=False).failed
    c = collect(layout)
    assert all(type(r.weighted) is int and type(r.classes) is int for r in c.records)
    assert sum(r.classes or 0 for r in c.records) == published("costas_classes", 11)
    assert len({r.weighted for r in c.records}) > 1  # the classes really are spread over partitions
    import duckdb

    row = duckdb.sql(f"SELECT sum(solutions), sum(classes) FROM '{layout.ledger}'").fetchall()[0]
    assert row == (published("costas_total", 11), published("costas_classes", 11))


def _welch(p: int) -> list[tuple[int, ...]]:
    roots = [g for g in range(2, p) if len({pow(g, k, p) for k in range(1, p)}) == p - 1]
    return [tuple(pow(g, i + c, p) - 1 for i in range(p - 1)) for g in roots for c in range(p - 1)]


@pytest.mark.parametrize("p", [5, 7, 11, 13])
def test_every_welch_array_is_found(tmp_path: Path, cli, p: int) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / f"w{p}"
    cli("pool", "costas", p - 1, run, "--num-partitions", 2, check=True)
    cli("run", run, check=True)
    found = {tuple(map(int, line.split())) for line in cli("arrays", run, "--all", check=True).stdout.splitlines()}
    welch = _welch(p)
    assert welch and all(is_costas(w) for w in welch)
    assert set(welch) <= found


@pytest.mark.parametrize("symmetry", ["canonical", "none"])
def test_both_kernels_agree_state_by_state(symmetry: str) -> None:
    """dfs (the plain search) and fc (forward checking, the default; the flow tests
    run the default only): per state the same counts and arrays, and the published totals; fc's nodes
    are a part of dfs's tree (it only prunes), fewer in all from order 8 on. n = 1: the prefix is
    complete; prefixes of several depths, down to one column, go through fc's start from a prefix and
    its per-depth builds."""
    dev = device_context(select_devices(None)[0])
    problem = get_problem("costas")
    assert set(VARIANTS) == {*LEFT_TO_RIGHT, "cf", "mid"}
    for n, target in ((1, 64), (6, 64), (9, 1), (11, 64), (12, 4000)):
        ladder = climb(problem, n, target, 4.0, symmetry)
        out = {kernel: CostasKernel(dev, n, symmetry, count_nodes=True, variant=kernel)(ladder.states)
               for kernel in LEFT_TO_RIGHT}
        assert np.array_equal(out["dfs"].counts, out["fc"].counts), n
        assert np.all(out["fc"].nodes <= out["dfs"].nodes), n
        if n >= 8:
            assert out["fc"].nodes.sum() < out["dfs"].nodes.sum(), n
        assert sorted(map(tuple, out["dfs"].solutions.tolist())) == sorted(map(tuple, out["fc"].solutions.tolist())), n
        for kernel, o in out.items():
            tally = problem.tally(ladder.states, o.counts, o.solutions, symmetry)
            assert tally.weighted == published("costas_total", n), (kernel, n)
            assert tally.classes == published("costas_classes", n), (kernel, n)


@pytest.mark.parametrize("symmetry", ["canonical", "none"])
@pytest.mark.parametrize("n, split", [(8, 0), (8, 1), (9, 2)])
def test_fc_counts_nothing_below_a_prefix_the_search_could_not_place(symmetry: str, n: int, split: int) -> None:
    """fc builds a state's domains from its prefix without replaying it: every 4-tuple of rows at order 8
    (repeated rows, repeated displacements, edge rows out of place, prefixes forward checking kills) counts
    0 and yields no array, except the host's own states, which count what dfs counts for them. Likewise
    where each lane places the state's next columns itself (split), children of a bad prefix included."""
    dev = device_context(select_devices(None)[0])
    problem = get_problem("costas")
    tuples = np.stack(np.meshgrid(*[np.arange(n, dtype=np.uint8)] * 4, indexing="ij"), axis=-1).reshape(-1, 4)
    states = StateBatch(tuples, np.ones(len(tuples), np.uint8))
    kernel = CostasKernel(dev, n, symmetry, variant="fc", split=split)
    assert kernel.split_for(4) == split
    fc = kernel(states)
    host = problem.expand(n, problem.expand(n, problem.expand(n, problem.root(n, symmetry), symmetry), symmetry),
                          symmetry)
    dfs = CostasKernel(dev, n, symmetry, variant="dfs")(host)
    index = {tuple(row): i for i, row in enumerate(host.prefix.tolist())}
    expected = np.array([dfs.counts[index[t]] if t in index else 0 for t in map(tuple, tuples.tolist())])
    assert np.array_equal(fc.counts, expected)
    assert expected.sum() > 0 and np.count_nonzero(expected) < len(tuples) // 10
    assert sorted(map(tuple, fc.solutions.tolist())) == sorted(map(tuple, dfs.solutions.tolist()))


@pytest.mark.parametrize("split", [1, 2])
def test_fc_split_counts_each_state_as_the_unsplit_search(split: int) -> None:
    """A lane that places its state's next columns itself (SPLIT) counts every state and finds every array as
    the plain search does; with one column split, node counts are the plain search's too."""
    dev = device_context(select_devices(None)[0])
    n = 12
    states = climb(get_problem("costas"), n, 20_000, 4.0, "canonical").states
    plain = CostasKernel(dev, n, "canonical", variant="fc", split=0, count_nodes=True)(states)
    kernel = CostasKernel(dev, n, "canonical", variant="fc", split=split)
    assert kernel.split_for(states.depth) == split
    out = kernel(states)
    assert np.array_equal(out.counts, plain.counts) and int(out.counts.sum()) > 0
    assert sorted(map(tuple, out.solutions.tolist())) == sorted(map(tuple, plain.solutions.tolist()))
    if split == 1:
        nodes = CostasKernel(dev, n, "canonical", variant="fc", split=1, count_nodes=True)(states).nodes
        assert np.array_equal(nodes, plain.nodes)


def test_kernel_loses_no_array_when_the_output_overflows() -> None:
    dev = device_context(select_devices(None)[0])
    problem = get_problem("costas")
    ladder = climb(problem, 9, 64, 4.0, "none")
    small = CostasKernel(dev, 9, "none", capacity=3)
    out = small(ladder.states)
    assert small.reruns == 1
    assert len({tuple(a) for a in out.solutions.tolist()}) == int(out.counts.sum()) == published("costas_total", 9)


def test_enumerate_costas(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("enumerate", "costas", 12, check=True)
    assert f"total {published('costas_total', 12)}, {published('costas_classes', 12)} classes" in proc.stdout
    assert "matches the published count" in proc.stdout


def test_costas_bad_input(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for n in (0, 33):
        proc = cli("pool", "costas", n, tmp_path / "x")
        assert proc.returncode == 2 and "1..32" in proc.stderr
    proc = cli("pool", "costas", 8, tmp_path / "y", "--symmetry", "mirror")
    assert proc.returncode == 2 and "costas: unknown symmetry mode 'mirror'" in proc.stderr
    cli("pool", "nqueens", 6, tmp_path / "q", check=True)
    cli("run", tmp_path / "q", check=True)
    proc = cli("arrays", tmp_path / "q")
    assert proc.returncode == 2 and "lists Costas arrays" in proc.stderr


def test_fc_refuses_order_32_and_names_the_kernel_that_serves_it() -> None:
    """fc marks the columns past the last with bit 31, a row of order 32: refused before anything is built."""
    dev = device_context(select_devices(None)[0])
    with pytest.raises(UserError, match="costas kernel fc serves orders up to 31 .order 32: use --kernel dfs."):
        CostasKernel(dev, 32, "canonical")
    assert CostasKernel(dev, 32, "canonical", variant="dfs").variant == "dfs"


def test_the_centre_first_kernel_finds_exactly_the_centre_canonical_arrays() -> None:
    """cf (costas_cf.cl) from the centre mode's states of several depths (one column up to whole arrays), and
    mid (the same mode's plain search) state by state the same: exactly the arrays whose reading is the smallest of their 4 reflections (costas_symmetry, host code
    written apart from the kernel), each class counted once at its smallest reading, the published totals
    and classes for every order 1-12; the node-counting build counts the same and visits fewer nodes than
    fc's left to right from order 9 on (nodes as fc counts them, 1.73x fewer at 12)."""
    dev = device_context(select_devices(None)[0])
    problem = get_problem("costas")
    for n in range(1, 13):
        every = CostasKernel(dev, n, "none", variant="fc")(climb(problem, n, 64, 4.0, "none").states).solutions
        arrays = [tuple(int(x) for x in a) for a in every.tolist()]
        canonical = {a for a in arrays if is_centre_canonical(a)}
        readings = {reading(b) for b in canonical}  # each class's image of smallest reading is found
        assert all(reading(min(symmetries(a), key=reading)) in readings for a in arrays)
        for target in (1, 64, 5000):
            states = climb(problem, n, target, 4.0, "centre").states
            out = CostasKernel(dev, n, "centre")(states)
            got = [tuple(int(x) for x in a) for a in out.solutions.tolist()]
            assert sorted(got) == sorted(canonical), (n, target, states.depth)
            plain = CostasKernel(dev, n, "centre", variant="mid")(states)  # verify's second computation
            assert np.array_equal(plain.counts, out.counts) and sorted(map(tuple, plain.solutions.tolist())) == sorted(got)
            tally = problem.tally(states, out.counts, out.solutions, "centre")
            assert (tally.weighted, tally.classes) == (published("costas_total", n), published("costas_classes", n))
        if n >= 9:  # nodes of the whole search: from the first column
            first = climb(problem, n, 1, 4.0, "centre").states
            counted = CostasKernel(dev, n, "centre", count_nodes=True)(first)
            assert first.depth == 1 and counted.counts.sum() == len(canonical)
            left = climb(problem, n, 1, 4.0, "canonical").states
            fc = CostasKernel(dev, n, "canonical", count_nodes=True, variant="fc")(left)
            assert left.depth == 1 and 0 < counted.nodes.sum() < fc.nodes.sum(), n


def test_the_centre_mode_goes_with_its_kernel_only(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A centre pool runs cf by default and exactly (with every Welch array of order 12 present), and `verify`
    re-counts a sample with mid; the left-to-right kernels refuse it in one line, and cf refuses a
    left-to-right pool."""
    run = tmp_path / "c12"
    cli("pool", "costas", 12, run, "--symmetry", "centre", "--num-partitions", 3, check=True)
    refused = cli("run", run, "--kernel", "fc")
    assert refused.returncode != 0 and "kernels cf and mid go with symmetry centre" in refused.stderr
    assert "Traceback" not in refused.stderr
    cli("run", run, check=True)
    collected = cli("collect", run, check=True).stdout
    assert "matches the published count 7852 and 990 classes" in collected and "all 48 Welch arrays" in collected
    found = {tuple(map(int, line.split())) for line in cli("arrays", run, "--all", check=True).stdout.splitlines()}
    assert len(found) == published("costas_total", 12) and set(_welch(13)) <= found
    verified = cli("verify", run, "--sample", "0.5", check=True)  # re-counted by mid, the other kernel
    assert "agree" in verified.stdout and "mid" in verified.stdout, verified.stdout
    other = tmp_path / "c9"
    cli("pool", "costas", 9, other, "--num-partitions", 2, check=True)
    refused = cli("run", other, "--kernel", "cf")
    assert refused.returncode != 0 and "kernels cf and mid go with symmetry centre" in refused.stderr
