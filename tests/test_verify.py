"""`permenum verify`: a sample of a run re-counted with another kernel (PoCL here), compared partition by
partition; an altered result (re-sealed, as a careless script or a faulty node would leave it) is caught
when sampled, and the chance of catching k altered partitions is the README's formula."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from permenum.jobs.ledger.verify import catch_probability, sample_partitions, sample_size
from permenum.layout import RunLayout
from permenum.records import read_result, write_result
from tests.conftest import published


@pytest.fixture(scope="module")
def queens_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """N-Queens 10 in 8 partitions, counted (skip-soa, the CPU's default) and checked against OEIS."""
    from tests.conftest import run_cli

    run = tmp_path_factory.mktemp("verify") / "run"
    run_cli("pool", "nqueens", 10, run, "--num-partitions", 8, check=True)
    run_cli("run", run, "--device", "cpu", check=True)
    assert f"matches the published count {published('nqueens_total', 10)}" in run_cli("collect", run, check=True).stdout
    return run


def alter(run: Path, partition: int, by: int) -> None:
    """Change a result's counts and write it again through the records' own writer (a valid seal)."""
    layout = RunLayout(run)
    record = read_result(layout.result_file(partition))
    layout.result_file(partition).unlink()
    write_result(layout, replace(record, weighted=record.weighted + by, raw=record.raw + by))


def test_a_sample_recounted_with_another_kernel_agrees_and_is_recorded(queens_run: Path, cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("verify", queens_run, "--sample", 0.5, "--seed", 11, check=True)
    expected = sample_partitions(list(range(8)), 0.5, 11)
    assert len(expected) == 4
    (shadow,) = [p for p in (queens_run / "verify").iterdir() if (p / "verification.json").exists()
                 and json.loads((p / "verification.json").read_text())["seed"] == 11]
    plan = json.loads((shadow / "verification.json").read_text())
    assert plan["partitions"] == expected and plan["kernel"] == "skip-all"  # the run counted with skip-soa
    assert plan["environment"]["host"] and plan["environment"]["version"]
    check = json.loads((shadow / "check.json").read_text())
    assert [c["partition"] for c in check["comparisons"]] == expected
    for c in check["comparisons"]:
        assert c["verdict"] == "agrees" and c["independent"]
        assert c["reference"]["kernels"] == ["skip-soa"] and c["recount"]["kernels"] == ["skip-all"]
        assert c["recount"]["solutions"] == c["reference"]["solutions"] and c["recount"]["builds"]
        assert c["reference"]["builds"] != c["recount"]["builds"]  # another build counted
    assert "4/4 partitions agree" in proc.stdout
    collect = cli("collect", queens_run, check=True)
    assert "re-counted independently in agreement" in collect.stdout


def test_an_altered_result_is_caught_when_sampled(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 9, run, "--num-partitions", 6, check=True)
    cli("run", run, "--device", "cpu", check=True)
    alter(run, 3, 2)
    assert cli("collect", run).returncode == 1  # n=9 has a published count: the total is off
    missed_seed = next(s for s in range(100) if 3 not in sample_partitions(list(range(6)), 1 / 3, s))
    caught_seed = next(s for s in range(100) if 3 in sample_partitions(list(range(6)), 1 / 3, s))
    missed = cli("verify", run, "--sample", 1 / 3, "--seed", missed_seed)
    assert missed.returncode == 0, missed.stderr
    caught = cli("verify", run, "--sample", 1 / 3, "--seed", caught_seed)
    assert caught.returncode == 3
    assert "partition 3 DISAGREES on solutions, raw" in caught.stderr and "DISAGREE: partitions 3" in caught.stderr
    listed = cli("verify", run, "--only", "2-4")
    assert listed.returncode == 3 and "DISAGREE: partitions 3:" in listed.stderr
    collect = cli("collect", run)
    assert collect.returncode == 1 and "DISAGREE: partitions 3" in collect.stderr
    again = cli("verify", run, "--check")
    assert again.returncode == 3 and "DISAGREE: partitions 3:" in again.stderr


def test_a_disagreement_on_raw_alone_prints_the_raw_counts(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A result whose raw count alone was altered: the DISAGREES line gives both raw counts, not the weighted
    ones (which agree, and read as if nothing differed)."""
    run = tmp_path / "run"
    cli("pool", "nqueens", 9, run, "--num-partitions", 3, check=True)
    cli("run", run, "--device", "cpu", check=True)
    layout = RunLayout(run)
    record = read_result(layout.result_file(1))
    layout.result_file(1).unlink()
    write_result(layout, replace(record, raw=record.raw + 1))
    proc = cli("verify", run, "--only", "1")
    assert proc.returncode == 3, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "DISAGREES" in line]
    assert line.startswith(f"partition 1 DISAGREES on raw: run {record.raw + 1} raw (")
    assert f"re-count {record.raw} raw (" in line and "solutions" not in line  # the weighted ones agree


@pytest.mark.parametrize("partitions,altered,fraction", [(20, 1, 0.1), (20, 3, 0.25), (50, 5, 0.1)])
def test_the_chance_of_catching_altered_partitions_is_the_readmes(partitions: int, altered: int, fraction: float) -> None:
    """The sampler's catch rate over 4000 seeds against 1 - C(P-k, m)/C(P, m), within 4 standard deviations."""
    bad = set(range(0, partitions, partitions // altered)[:altered])
    m = sample_size(partitions, fraction)
    assert m == math.ceil(fraction * partitions - 1e-9)
    runs = 4000
    caught = sum(bool(bad & set(sample_partitions(list(range(partitions)), fraction, seed))) for seed in range(runs))
    p = catch_probability(partitions, altered, m)
    assert abs(caught / runs - p) < 4 * math.sqrt(p * (1 - p) / runs), (caught / runs, p)
    assert p == pytest.approx(1 - math.prod((partitions - altered - i) / (partitions - i) for i in range(m)))


def test_costas_recount_on_the_other_kernel_compares_classes_and_nodes(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "costas", 9, run, "--num-partitions", 3, check=True)
    cli("run", run, "--device", "cpu", "--kernel", "fc", "--count-nodes", check=True)
    proc = cli("verify", run, "--only", "0-2", "--count-nodes", check=True)
    assert "with kernel dfs" in proc.stdout and "3/3 partitions agree" in proc.stdout
    (shadow,) = (run / "verify").iterdir()
    check = json.loads((shadow / "check.json").read_text())
    assert all(c["recount"]["classes"] == c["reference"]["classes"] for c in check["comparisons"])
    assert not any(c["nodes_compared"] for c in check["comparisons"])  # dfs and fc search different trees


def test_nodes_are_compared_where_both_builds_count_the_same_search(queens_run: Path, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 9, run, "--num-partitions", 3, check=True)
    cli("run", run, "--device", "cpu", "--count-nodes", check=True)
    proc = cli("verify", run, "--only", "0-2", "--count-nodes", check=True)
    assert "nodes compared on 3" in proc.stdout


@pytest.mark.parametrize("args,message", [
    (["--sample", 0], "--sample must be a fraction"),
    (["--sample", 0.5, "--only", "1"], "give --sample F or --only LIST"),
    ([], "give --sample F or --only LIST"),
    (["--only", "99"], "partitions 99 have no result"),
    (["--only", "x"], "--only: not an array index list"),
    (["--only", "1", "--kernel", "nope"], "'nope' is not one of"),
    (["--id", "v-nothere"], "has no verification 'v-nothere'"),
    (["--only", "1", "--reflect"], "--reflect: nqueens pools of symmetry edges have no mirror-image states"),
    (["--only", "1", "--kernel", "skip-soa"], "kernel skip-soa counted these partitions"),
    (["--only", "3-1"], "--only lists no partition"),
    (["--only", "1", "--seed", 4], "--seed draws a sample: not with --only"),
    (["--sample", 0.5, "--seed", -1], "Invalid value for '--seed'"),
    (["--check", "--kernel", "dfs"], "--kernel choose a new verification: not with --check"),
    (["--id", "v-x", "--sample", 0.5], "--sample choose a new verification: not with --id"),
    (["--only", "1", "--device", "nosuch"], "nosuch"),
])
def test_bad_input_is_one_line_and_exit_2(queens_run: Path, cli, args: list[object], message: str) -> None:  # type: ignore[no-untyped-def]
    proc = cli("verify", queens_run, *args)
    assert proc.returncode == 2 and message in proc.stderr.strip().splitlines()[-1], proc.stderr  # click adds usage
    assert not (queens_run / "verify").exists() or all((v / "verification.json").exists()
                                                       for v in (queens_run / "verify").iterdir())


def test_mirror_images_are_states_of_the_mode_built_from_scratch() -> None:
    """reflected(): each image's masks are those of its prefix's queens placed afresh at columns n-1-c."""
    import numpy as np

    from permenum.problems import get_problem
    from permenum.problems.nqueens import _empty, occupy

    q = get_problem("nqueens")
    for symmetry in ("mirror", "none"):
        batch = q.expand(11, q.expand(11, q.expand(11, q.root(11, symmetry), symmetry), symmetry), symmetry)
        image = q.reflected(11, batch, symmetry)
        assert image is not None and len(image) == len(batch) > 100
        fresh = _empty(11, len(batch))
        for row in range(batch.depth):
            fresh = occupy(11, fresh, np.full(len(batch), row), 10 - batch.prefix[:, row].astype(np.int64))
        for name in ("cols", "d1", "d2", "rows"):
            assert np.array_equal(image.masks[name].astype(np.uint64), fresh[name].astype(np.uint64)), name
        assert not np.array_equal(image.masks["d1"], batch.masks["d1"])
    assert q.reflected(11, batch, "edges") is None


def test_a_mirror_pool_recounted_as_its_mirror_image_agrees_nodes_too(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 11, run, "--num-partitions", 3, "--symmetry", "mirror", check=True)
    cli("run", run, "--device", "cpu", "--count-nodes", check=True)
    proc = cli("verify", run, "--only", "0-2", "--reflect", "-k", "skip-all", "--count-nodes", check=True)
    assert "each as its mirror image" in proc.stdout and "3/3 partitions agree (nodes compared on 3)" in proc.stdout
    (shadow,) = (run / "verify").iterdir()
    assert sorted(p.name for p in (shadow / "pool").iterdir()) == [f"part-0000{i}.parquet" for i in range(3)]


def test_the_same_kernel_on_another_device_is_a_verification_the_same_on_the_same_is_not(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """skip-soa again, named on the same PoCL device: allowed with --device, but its agreement is not
    independent (same kernel, same model) and does not count in the verified fraction."""
    run = tmp_path / "run"
    cli("pool", "nqueens", 9, run, "--num-partitions", 2, check=True)
    cli("run", run, "--device", "cpu", check=True)
    proc = cli("verify", run, "--only", "0-1", "--kernel", "skip-soa", "--device", "cpu", check=True)
    assert "2/2 partitions agree" in proc.stdout and "0-1 by the same kernel on the same model" in proc.stdout
    assert "verified: 0/2 partitions" in cli("collect", run, check=True).stdout
    assert not any(p.name.startswith("v-") and not (p / "verification.json").exists()
                   for p in (run / "verify").iterdir())


def test_a_verification_is_counted_only_with_its_own_kernel(queens_run: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`permenum run` on a verification's directory would count the run's search again: refused, with the way."""
    cli("verify", queens_run, "--only", "6", check=True)
    shadow = next(v for v in (queens_run / "verify").iterdir()
                  if json.loads((v / "verification.json").read_text())["partitions"] == [6])
    (shadow / "results" / "part-00006.json").unlink()
    proc = cli("run", shadow)
    assert proc.returncode == 2 and f"count it with `permenum verify {queens_run} --id {shadow.name}`" in proc.stderr
    assert cli("verify", queens_run, "--id", shadow.name, check=True).returncode == 0


def test_a_damaged_verification_is_named_and_the_others_still_count(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 2, check=True)
    cli("run", run, "--device", "cpu", check=True)
    cli("verify", run, "--only", "0", check=True)
    (shadow,) = (run / "verify").iterdir()
    plan = shadow / "verification.json"
    plan.write_text(plan.read_text().replace('"partitions": [', '"partitions": [1, '))  # its seal no longer holds
    collect = cli("collect", run, check=True)  # the count itself is still sound: exit 0
    assert f"verification {shadow.name} unreadable" in collect.stdout and "verified: 0/2 partitions" in collect.stdout
    check = cli("verify", run, "--check")
    assert check.returncode == 1 and f"verification {shadow.name} unreadable" in check.stderr
