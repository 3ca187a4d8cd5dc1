"""Cost estimates (Knuth probes) stored in the pool and used to balance partitions; the ledger's estimated vs
measured cost; `permenum report` and its plot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from permenum.cli.app import cli
from permenum.errors import UserError
from permenum.jobs.ledger.collect import collect
from permenum.jobs.local import run_local
from permenum.jobs.ledger.report import build_report, plot_report
from permenum.jobs.counting.task import run_task
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.poolgen.cost import estimate_costs
from permenum.poolgen.generate import climb, descend
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.problems import get_problem
from permenum.problems.costas import valid_next
from permenum.solver.devices import select_devices
from permenum.solver.opencl import device_context
from permenum.solver.registry import make_solver
from tests.conftest import published


def _ranks(x: np.ndarray) -> np.ndarray:
    return np.argsort(np.argsort(x)).astype(float)


@pytest.mark.parametrize("problem,n", [("nqueens", 12), ("costas", 10)])
def test_estimates_are_stored_and_partitions_balanced_by_them(tmp_path: Path, problem: str, n: int) -> None:
    cost, rows = RunLayout(tmp_path / "cost"), RunLayout(tmp_path / "rows")
    write_pool(cost, PoolSettings(problem, n, 6, target_states=2000, seed=3))
    write_pool(rows, PoolSettings(problem, n, 6, target_states=2000, seed=3, balance="rows"))
    manifest = json.loads(cost.manifest.read_text())
    assert manifest["generator"]["balance"] == "cost" and manifest["generator"]["cost_estimate"]["probes"] > 0
    est = []
    for part in manifest["partitions"]:
        column = pq.read_table(cost.root / part["file"]).column("est_cost")
        assert str(column.type) == "float"  # float32
        values = column.to_numpy()
        assert (values >= 1).all()  # a state counts itself
        prefixes = pq.read_table(cost.root / part["file"]).column("prefix").to_pylist()
        assert prefixes == sorted(prefixes)  # tree order inside a partition
        assert part["estimated_cost"] == pytest.approx(float(values.astype(np.float64).sum()), rel=1e-9)
        est.append(part["estimated_cost"])
    assert max(est) / np.mean(est) < 1.01, est  # equal estimated cost (to within a state or so)
    assert est == sorted(est, reverse=True)  # the largest partition first: array index order = start order
    by_rows = json.loads(rows.manifest.read_text())["partitions"]
    assert max(p["rows"] for p in by_rows) - min(p["rows"] for p in by_rows) <= 1
    assert sum(p["estimated_cost"] for p in by_rows) == pytest.approx(sum(est), rel=1e-9)  # same states, same estimates


@pytest.mark.parametrize("problem,n,target", [("nqueens", 12, 300), ("costas", 11, 400)])
def test_a_climb_capped_short_of_the_partitions_is_written_a_level_deeper(
        tmp_path: Path, problem: str, n: int, target: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next rung would pass the hard limit (4 x target) while the pool holds fewer than 128 states a
    partition: each partition is written one level deeper (N-Queens 27 with 20,000 partitions), the
    children of the parents dealt to it, the same states as the full next rung, balanced, reproducible
    whatever the wave, and exact."""
    import permenum.poolgen.write as write

    p = get_problem(problem)
    ladder = climb(p, n, target, 4.0, p.default_symmetry)
    assert ladder.capped and len(ladder.states) < 128 * 4
    deep, again, shallow, few = (RunLayout(tmp_path / x) for x in ("deep", "again", "shallow", "few"))
    write_pool(deep, PoolSettings(problem, n, 4, target_states=target, seed=5))
    with monkeypatch.context() as m:
        m.setattr(write, "WAVE_STATES", 37)  # many waves, cut inside a partition's children's neighbours
        write_pool(again, PoolSettings(problem, n, 4, target_states=target, seed=5))
        m.setattr(write, "STATES_PER_PARTITION", 0)  # the same dealing, written at the climb's depth
        write_pool(shallow, PoolSettings(problem, n, 4, target_states=target, seed=5))
    assert all((deep.root / f.relative_to(again.root)).read_bytes() == f.read_bytes()
               for f in (again.root / "pool").iterdir())
    for k in range(4):
        parents = pq.read_table(shallow.partition_file(k)).column("prefix").to_pylist()
        assert sorted({tuple(c[:-1]) for c in pq.read_table(deep.partition_file(k)).column("prefix").to_pylist()}) \
            == sorted(map(tuple, parents))  # every child beside its parent (each of these parents has one)
    manifest = json.loads(deep.manifest.read_text())
    assert manifest["generator"]["locked_depth"] == ladder.depth + 1 and "one level deeper" in manifest["generator"]["stop_reason"]
    prefixes, est = [], []
    for part in manifest["partitions"]:
        table = pq.read_table(deep.root / part["file"])
        mine = table.column("prefix").to_pylist()
        assert mine == sorted(mine) and (table.column("est_cost").to_numpy() >= 1).all()
        assert part["estimated_cost"] == pytest.approx(float(table.column("est_cost").to_numpy().astype(np.float64).sum()))
        prefixes += mine
        est.append(part["estimated_cost"])
    assert sorted(prefixes) == sorted(map(list, descend(p, n, ladder.states, p.default_symmetry, ladder.depth + 1).prefix.tolist()))
    assert manifest["totals"]["states"] == len(prefixes) > 4 * target
    assert max(est) / np.mean(est) < 1.05, est  # dealt by the parents' estimates, each shared among its children
    assert not run_local(deep, workers=2, options=TaskOptions(device="cpu/2"), show_progress=False).failed
    assert collect(deep).total == published(f"{problem}_total", n)
    write_pool(few, PoolSettings(problem, n, 2, target_states=target, seed=5))  # 128 a partition already
    assert json.loads(few.manifest.read_text())["generator"]["locked_depth"] == ladder.depth


# dihedral: the walks take the open rows only, skip enters the side queens' rows too (forced, one node
# each): 266 k estimated vs 334 k nodes at N=12 (the retired lds64, which skipped those rows: 270 k)
@pytest.mark.parametrize("kernel, symmetry, ratio",
                         [("dfs", "mirror", 1.0), ("skip", "dihedral", 0.8), ("skip", "edges", 1.0)])
def test_estimate_tracks_the_node_counting_build(kernel: str, symmetry: str, ratio: float) -> None:
    """Knuth's estimate is unbiased for the plain DFS's node count and ranks states like it."""
    problem = get_problem("nqueens")
    states = climb(problem, 12, 256, 4.0, symmetry).states
    est = estimate_costs(problem, 12, states, symmetry, probes=32, seed=1)
    dev = device_context(select_devices(None)[0])
    nodes = make_solver("nqueens", dev, 12, states.depth, kernel, symmetry, count_nodes=True)(states).nodes.astype(float)
    assert np.corrcoef(est, nodes)[0, 1] > 0.5
    assert np.corrcoef(_ranks(est), _ranks(nodes))[0, 1] > 0.5
    assert est.sum() / nodes.sum() == pytest.approx(ratio, abs=0.05)
    again = estimate_costs(problem, 12, states, symmetry, probes=32, seed=1)
    assert again.tobytes() == est.tobytes()  # seeded: same pool, same estimates


def test_estimates_do_not_depend_on_the_walking_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many chunks (one seeded stream each), walked by 1 or by several threads: the same estimates."""
    from permenum.poolgen import cost

    problem = get_problem("nqueens")
    states = climb(problem, 11, 2000, 4.0, "edges").states
    monkeypatch.setattr(cost, "_CHUNK_WALKS", 256)
    monkeypatch.setattr(cost, "WALK_THREADS", 1)
    one = estimate_costs(problem, 11, states, "edges", probes=4, seed=3)
    monkeypatch.setattr(cost, "WALK_THREADS", 8)
    many = estimate_costs(problem, 11, states, "edges", probes=4, seed=3)
    assert len(states) > 10 * 64 and one.tobytes() == many.tobytes()
    assert one.min() >= 1.0


def test_costas_next_rows_match_the_definition() -> None:
    """The bitmask form of valid_next against the definition: no repeated row, no repeated displacement."""
    rng = np.random.default_rng(5)
    for n in (5, 9, 13):
        for k in range(n + 1):
            prefix = np.stack([rng.permutation(n)[:k] for _ in range(40)]).reshape(40, k).astype(np.uint8)
            got = valid_next(n, prefix, "none")
            for row, ok in zip(prefix.tolist(), got):
                want = [v not in row and all(v - row[k - d] != row[j + d] - row[j] for d in range(1, k + 1)
                                             for j in range(k - d)) for v in range(n)]
                assert ok.tolist() == want, (n, row)


def test_cost_balanced_run_is_exact_and_reported(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 12, 5, target_states=1000, seed=2))
    run_task(layout, 0, TaskOptions(kernel="skip", count_nodes=True))  # one partition with the node-counting build
    assert not run_local(layout, workers=2, options=TaskOptions(device="cpu/2"), show_progress=False).failed
    c = collect(layout)
    assert c.complete and c.total == published("nqueens_total", 12)
    ledger = pq.read_table(layout.ledger).to_pylist()
    for row in ledger:
        assert row["estimated_nodes"] > 0 and row["counted"]
    assert [r["nodes"] is not None for r in ledger] == [True, False, False, False, False]  # only partition 0 counted them
    assert next(r for r in ledger if r["partition"] == 0)["nodes"] > 0

    png = tmp_path / "out" / "report.png"
    png.parent.mkdir()  # report --plot makes no folders (a mistyped path is refused)
    proc = cli("report", layout.root, "--plot", png, check=True, env={"COLUMNS": "240"})
    assert "kernel seconds over the mean" in proc.stdout and "besides its kernel" in proc.stdout
    assert "matches the published count" in proc.stdout and "no verifications" in proc.stdout
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000

    report = build_report(layout)
    assert report.imbalance >= 1.0 and len(report.parts) == 5
    # how good the estimates were, per partition, in one measure (kernel seconds: not all counted nodes)
    assert report.cost_unit == "kernel seconds" and all(p.measured_cost == p.seconds_kernel for p in report.parts)
    ratios = report.estimate_ratios()
    assert sorted(ratios) == list(range(5)) and all(v > 0 for v in ratios.values())
    est = {p.partition: p.estimated_cost or 0.0 for p in report.parts}
    assert abs(sum(ratios[i] * est[i] for i in ratios) / sum(est.values()) - 1) < 1e-9  # shares: weighted mean 1
    worst = report.worst_estimate()
    assert f"worst partition {worst} ({ratios[worst]:.2f})" in proc.stdout
    # the estimates' bars follow the band: green inside 0.8-1.2, red outside
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from permenum.jobs.ledger.report import BAND, INSIDE, OUTSIDE, _plot_estimates

    fig, ax = plt.subplots()
    _plot_estimates(ax, report, ratios)
    colours = [to_hex(bar.get_facecolor()) for bar in ax.containers[0]]
    assert colours == [INSIDE if BAND[0] <= ratios[i] <= BAND[1] else OUTSIDE for i in sorted(ratios)]
    plt.close(fig)
    assert report.kernel_imbalance >= 1.0 and len(report.overheads) == 5
    assert sum(d.states for d in report.devices()) == c.manifest.total_states


def test_report_without_matplotlib_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 8, 2, target_states=64))
    assert not run_local(layout, show_progress=False).failed
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(UserError, match=r"--plot needs matplotlib"):
        plot_report(build_report(layout), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
    result = CliRunner().invoke(cli, ["report", str(layout.root), "--plot", str(tmp_path / "x.png")])
    assert isinstance(result.exception, UserError) and result.output == ""  # the one line comes before any output
