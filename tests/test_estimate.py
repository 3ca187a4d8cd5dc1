"""`permenum estimate`: a timed sample of the coarse pool, counted on the device (PoCL here), scaled up."""

from __future__ import annotations

import json

import numpy as np
import pytest

from permenum.jobs.estimate import Estimate, estimate


def test_a_sample_of_the_whole_pool_predicts_exactly_what_it_measured() -> None:
    """With no cap, the sample is the pool: the prediction is the kernel time it measured, no error left."""
    whole = estimate("nqueens", 11, "cpu", sample_seconds=1e9, max_fraction=1.0)
    assert sum(b.states for b in whole.blocks) == whole.states and abs(whole.sampled_fraction - 1) < 1e-9
    assert abs(whole.device_seconds - whole.sample_seconds) < 1e-9 * max(whole.sample_seconds, 1)
    assert whole.relative_error == 0.0


def test_the_sample_keeps_to_its_fraction_and_scales_up() -> None:
    part = estimate("costas", 11, "cpu", sample_seconds=1e9, max_fraction=0.1, min_sample_seconds=0.0)
    sampled = sum(b.states for b in part.blocks)
    assert 0 < part.sampled_fraction <= 0.1 and len(part.blocks) >= 3 and sampled < part.states
    assert part.device_seconds > part.sample_seconds  # scaled to the whole pool's estimate
    assert part.relative_error is not None and part.relative_error >= 0


def test_a_sample_too_short_to_time_goes_past_its_fraction() -> None:
    """10% of Costas 11 is a millisecond of kernel, timing noise: the sample goes on until it holds
    MIN_SAMPLE_SECONDS, here to the whole pool (the run is shorter than that): its own time, no error."""
    from permenum.jobs.estimate import MIN_SAMPLE_SECONDS

    short = estimate("costas", 11, "cpu", sample_seconds=1e9, max_fraction=0.1)
    assert short.sample_seconds < MIN_SAMPLE_SECONDS and abs(short.sampled_fraction - 1) < 1e-9
    assert sum(b.states for b in short.blocks) == short.states and short.relative_error == 0.0


def test_a_growth_fitted_to_exponential_seconds_finds_its_factor() -> None:
    from permenum.errors import UserError
    from permenum.jobs.estimate import Growth

    fitted = Growth.fit([(n, 0.3 * 5.2 ** (n - 18)) for n in (21, 18, 19, 20)])
    assert fitted.sizes == (18, 19, 20, 21) and abs(fitted.ratio - 5.2) < 1e-9
    assert abs(fitted.seconds_at(30) / (0.3 * 5.2 ** 12) - 1) < 1e-9
    noisy = Growth.fit([(18, 1.0), (19, 6.0), (20, 24.0), (21, 100.0)])  # least squares through the logarithms
    assert abs(noisy.ratio - 4.57305) < 1e-4  # (the first and last points alone: 4.6416)
    for bad in ([], [(18, 1.0)], [(18, 1.0), (18, 2.0)], [(18, 0.0), (19, 1.0)]):
        with pytest.raises(UserError):
            Growth.fit(bad)


def test_estimate_command_fits_its_sizes_and_refuses_bad_input(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("estimate", "nqueens", 12, "--device", "cpu", "--sample-seconds", 0.5, "--gpus", 4, "--json", check=True)
    report = json.loads(proc.stdout)
    assert report["problem"] == "nqueens" and report["n"] == 12 and report["gpus"] == 4
    assert report["wall_seconds"] * 4 == report["device_seconds"] > 0
    growth = report["growth"]  # sizes 9-12, each from its own sample, fitted: the projection follows the fit
    assert growth["fitted_sizes"] == [9, 10, 11, 12] and list(growth["device_seconds"]) == ["9", "10", "11", "12"]
    assert growth["device_seconds"]["12"] == report["device_seconds"] and growth["ratio_per_size"] > 1
    sizes = [int(k) for k in growth["device_seconds"]]  # the fit, computed again: a line through the log seconds
    slope = np.polyfit(sizes, np.log([growth["device_seconds"][str(k)] for k in sizes]), 1)[0]
    assert abs(np.exp(slope) / growth["ratio_per_size"] - 1) < 1e-9
    assert growth["estimated_nodes"]["12"] == report["estimated_nodes"]  # what each fitted size's cost is per
    # N=12's sizes take milliseconds on this CPU: no size is projected, and the JSON says why
    assert report["projection_unreliable"] and report["projected_device_seconds"] == {} == report["projected_estimated_nodes"]
    assert growth["seconds_per_node_ratio_per_size"] is None
    tiny = cli("estimate", "nqueens", 2, "--device", "cpu", check=True)  # no size takes any time: nothing to fit
    assert "no projection: fewer than two of nqueens 1-2 took any kernel time" in tiny.stdout
    for bad in (["nqueens", 0], ["nqueens", 12, "--max-fraction", 2], ["sudoku", 9]):
        proc = cli("estimate", *bad, "--no-project")
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def _sized(n: int, seconds: float, nodes: float) -> Estimate:
    """An estimate of size n whose whole pool of ``nodes`` estimated nodes was counted in ``seconds``."""
    from permenum.jobs.estimate import Block

    return Estimate("nqueens", n, "edges", "cpu", 10, 3, nodes, [Block(10, nodes, seconds)])


def test_a_projection_is_each_sizes_tree_at_the_fitted_cost_of_a_node() -> None:
    """Projected seconds = the size's own estimated nodes x the seconds per estimated node that the fitted
    sizes' drift gives it: a tree whose growth grows is followed (a constant growth of the seconds would not),
    and a node that gets dearer a size (fc's ~1.05x) compounds."""
    from permenum.jobs.estimate import cost_growth, project

    nodes = {20 + k: 1e9 * 9.0 ** k for k in range(4)}  # the fitted sizes: 9x a size
    later = {24: nodes[23] * 9.5, 25: nodes[23] * 9.5 * 10.0, 28: 7.0e18}  # growth that grows
    for drift in (1.0, 1.08):
        fitted = [_sized(n, 2e-12 * drift ** (n - 20) * k, k) for n, k in nodes.items()]
        cost = cost_growth(fitted)
        assert abs(cost.ratio / drift - 1) < 1e-9
        asked: list[int] = []
        rows = project(cost, [24, 25, 28], lambda m: asked.append(m) or later[m])
        assert asked == [24, 25, 28] and [m for m, _, _ in rows] == asked
        for m, k, seconds in rows:
            assert k == later[m] and abs(seconds / (later[m] * 2e-12 * drift ** (m - 20)) - 1) < 1e-9
    # the sizes that took no time are left out of the cost's fit (as of the growth's)
    assert cost_growth([_sized(19, 0.0, 1e8), *fitted]).sizes == (20, 21, 22, 23)


def test_the_json_and_the_table_say_what_was_projected(capsys: pytest.CaptureFixture[str]) -> None:
    """The command's two printers given a trusted fit (on this CPU one takes minutes to sample): each projected
    size's estimated nodes and seconds, and the drift the projection carries."""
    from permenum.cli.estimate import _print_growth, _print_json
    from permenum.jobs.estimate import Growth, cost_growth, project

    fitted = [_sized(20 + k, 2.0 * 9.2 ** k, 1e12 * 9.0 ** k) for k in range(4)]
    growth = Growth.fit([(e.n, e.device_seconds) for e in fitted])
    cost = cost_growth(fitted)
    projected = project(cost, [25, 28], {25: 4e17, 28: 5e20}.__getitem__)
    _print_json(fitted[-1], 2, growth, fitted[:-1], cost, projected, None)
    report = json.loads(capsys.readouterr().out)
    assert abs(report["growth"]["seconds_per_node_ratio_per_size"] / (9.2 / 9.0) - 1) < 1e-9
    assert report["projected_estimated_nodes"] == {"25": 4e17, "28": 5e20}
    assert report["projected_device_seconds"] == {str(m): s for m, _, s in projected} and report["projection_unreliable"] is None
    _print_growth(fitted[-1], 2, growth, fitted[:-1], cost, projected, None)
    table = capsys.readouterr().out
    assert f"({cost.ratio:.3f}x a size)" in table and "5.000e+20" in table and "wall on 2" in table


def test_a_trees_estimated_nodes_are_its_coarse_pools_cost_estimates() -> None:
    from permenum.jobs.estimate import coarse_pool, tree_nodes
    from permenum.poolgen.write import PoolSettings
    from permenum.problems import get_problem

    for name, n in (("nqueens", 10), ("costas", 9)):
        settings = PoolSettings(name, n, 1, seed=3)
        _, costs = coarse_pool(get_problem(name), n, settings.resolved_symmetry, settings.target, 3)
        assert tree_nodes(name, n, None, 3) == float(np.sum(costs, dtype=np.float64)) > 0


def test_a_growth_fitted_to_milliseconds_or_off_the_trees_growth_is_doubted() -> None:
    """Sizes under MIN_FIT_SECONDS time launches (on this CPU `estimate nqueens 14` fitted 3.22x a size to
    milliseconds and projected N=28 at 123 device-hours); a growth far from the estimated nodes' is doubted too."""
    from permenum.jobs.estimate import MIN_FIT_SECONDS, Growth, cost_growth, doubts

    def fitted(seconds: list[float], nodes: list[float]) -> tuple[Growth, Growth, list[Estimate]]:
        sized = [_sized(n, s, k) for n, s, k in zip(range(20, 24), seconds, nodes)]
        return Growth.fit([(e.n, e.device_seconds) for e in sized]), cost_growth(sized), sized

    tree = [1e9 * 6.0 ** k for k in range(4)]
    assert doubts(*fitted([2.0 * 6.1 ** k for k in range(4)], tree)) is None  # seconds and nodes alike: trusted
    short = doubts(*fitted([0.004, 0.005, 0.016, 0.065], tree))
    assert short is not None and f"4 sizes of the fit took under {MIN_FIT_SECONDS:g} s of kernel" in short
    assert "the search tree's estimated nodes 6.00x" in short
    slow = doubts(*fitted([MIN_FIT_SECONDS * 2.5 ** k for k in range(4)], tree))
    assert slow is not None and "size of the fit" not in slow and "drift 0.417x a size" in slow
    dearer = doubts(*fitted([MIN_FIT_SECONDS * (6.0 * 1.13) ** k for k in range(4)], tree))  # past DRIFT_TOLERANCE
    assert dearer is not None and "drift 1.130x a size" in dearer
    assert doubts(*fitted([MIN_FIT_SECONDS * (6.0 * 1.11) ** k for k in range(4)], tree)) is None


def test_estimate_prints_no_projection_from_a_fit_to_milliseconds(cli) -> None:  # type: ignore[no-untyped-def]
    text = cli("estimate", "nqueens", 12, "--device", "cpu", "--sample-seconds", 0.5, check=True).stdout
    assert "fitted growth" in text and "no projection: unreliable, as 4 sizes of the fit took under" in text
    assert "projected on" not in text and "estimate a larger N" in text
    report = json.loads(cli("estimate", "nqueens", 12, "--device", "cpu", "--sample-seconds", 0.5, "--json",
                            check=True).stdout)
    assert "took under" in report["projection_unreliable"]
