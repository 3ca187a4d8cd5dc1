"""A campaign across sites: one pool built at two sites and checked to be one, a share of it counted at
each (`--only`), the results brought home (`merge`) with their seals checked, and each site's work
re-counted by the other (`verify --counted-at`). The local executor stands for a site here; the SLURM
test puts one site on the real single-node cluster."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from permenum.jobs.ledger.collect import collect
from permenum.jobs.counting.solutions import read_solutions, write_arrays
from permenum.layout import RunLayout
from permenum.problems.costas_symmetry import class_share
from permenum.records import write_record, read_result
from tests.conftest import published, run_cli
from tests.slurm_helpers import partition_states, wait_idle

N = 11


def _files(root: Path) -> dict[str, bytes]:
    """Every file of a run directory and its bytes (the run lock aside: every command takes it)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".permenum.lock"}


def _build_two_sites(root: Path, problem: str, n: int, shards: int) -> tuple[Path, Path]:
    """Site A builds the pool; site B rebuilds it from A's manifest alone; each counts half."""
    a, b = root / "site a", root / "site b"
    run_cli("pool", problem, n, "--num-partitions", shards, a, check=True)
    manifest_copy = root / "a-manifest.json"
    shutil.copy(a / "manifest.json", manifest_copy)  # all that travels to B before it builds
    proc = run_cli("pool", problem, n, "--num-partitions", shards, b, "--same-as", manifest_copy, check=True)
    assert "same pool as" in proc.stdout
    half = shards // 2
    run_cli("run", a, "--only", f"0-{half - 1}", check=True)
    run_cli("run", b, "--only", f"{half}-{shards - 1}", check=True)
    return a, b


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., tuple[Path, Path]]:
    """Two sites' runs as _build_two_sites leaves them, built once a module for each (problem, n, shards)
    and copied into each test's own folder (links kept as links), which it may then damage at will."""
    built: dict[tuple[str, int, int], tuple[Path, Path]] = {}

    def copy(tmp_path: Path, problem: str = "nqueens", n: int = N, shards: int = 4) -> tuple[Path, Path]:
        key = (problem, n, shards)
        if key not in built:
            built[key] = _build_two_sites(tmp_path_factory.mktemp("sites"), problem, n, shards)
        copies = tmp_path / "site a", tmp_path / "site b"
        for source, target in zip(built[key], copies):
            shutil.copytree(source, target, symlinks=True)
        return copies

    return copy


def test_a_rebuilt_pool_is_the_same_pool_or_names_the_first_difference(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a", tmp_path / "b"
    cli("pool", "nqueens", N, "--num-partitions", 4, a, check=True)
    cli("pool", "nqueens", N, "--num-partitions", 4, b, "--same-as", a, check=True)
    assert json.loads((b / "manifest.json").read_text())["run_id"] == json.loads((a / "manifest.json").read_text())["run_id"]
    proc = cli("same-pool", b, a / "manifest.json")
    assert proc.returncode == 0 and proc.stdout.startswith("same pool: run "), proc.stdout + proc.stderr

    other_seed = tmp_path / "seed 1"
    cli("pool", "nqueens", N, "--num-partitions", 4, "--seed", 1, other_seed, check=True)
    proc = cli("same-pool", other_seed, a)
    assert proc.returncode == 1 and proc.stderr.strip() == "not the same pool: generator seed: 1 here, 0 there"
    proc = cli("pool", "nqueens", N, "--num-partitions", 4, "--seed", 1, tmp_path / "refused", "--same-as", a)
    assert proc.returncode == 2 and "not the same pool as run" in proc.stderr and "generator seed" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "refused").exists()

    rebuilt = tmp_path / "rebuilt without --same-as"
    cli("pool", "nqueens", N, "--num-partitions", 4, rebuilt, check=True)
    proc = cli("same-pool", rebuilt, a)
    assert proc.returncode == 1 and "the same pool, but two runs" in proc.stderr

    part = b / "pool" / "part-00002.parquet"
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    proc = cli("same-pool", b, a)
    assert proc.returncode == 2 and "part-00002" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_shards_limit_run_and_status_shows_them_against_the_pool(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", N, "--num-partitions", 4, run, check=True)
    proc = cli("run", run, "--only", "1,3")
    assert proc.returncode == 0 and "partitions 1,3 are counted" in proc.stdout, proc.stderr
    assert sorted(p.name for p in (run / "results").glob("*.json")) == ["part-00001.json", "part-00003.json"]
    proc = cli("status", run, "--only", "1-3")
    assert "partitions 1-3 (3 of the pool's 4): 2 done, 0 running, 0 pending, 0 failed, 1 missing" in proc.stdout
    report = json.loads(cli("status", run, "--json", "--only", "1-3").stdout)
    assert report["shard_states"]["done"]["partitions"] == [1, 3] and report["shard_states"]["missing"]["count"] == 1
    for bad, says in (("4", "partition 4 does not exist"), ("x", "not an array index list")):
        proc = cli("run", run, "--only", bad)
        assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_merge_imports_checked_results_once_and_collect_reads_the_union(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = sites(tmp_path)
    proc = cli("merge", a, b)
    assert proc.returncode == 0 and "imported 2 results (2-3); 0 here already" in proc.stdout, proc.stdout + proc.stderr
    c = collect(RunLayout(a))
    assert c.complete and c.total == published("nqueens_total", N)
    before = _files(a)
    proc = cli("merge", a, b)
    assert proc.returncode == 0 and "imported 0 results; 2 here already" in proc.stdout
    assert _files(a) == before  # importing twice changes nothing

    foreign = tmp_path / "foreign"
    cli("pool", "nqueens", N, "--num-partitions", 4, foreign, check=True)
    cli("run", foreign, check=True)
    proc = cli("merge", a, foreign)
    assert proc.returncode == 2 and "not this run" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert _files(a) == before


def test_merge_refuses_tampered_and_conflicting_results_in_one_line_each(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = sites(tmp_path)
    flipped = b / "results" / "part-00002.json"
    text = flipped.read_text()
    flipped.write_text(text.replace('"raw": ', '"raw": 1', 1))  # a count changed, the seal not
    conflicting = b / "results" / "part-00003.json"
    record = read_result(conflicting)
    changed = dataclasses.replace(record, weighted=record.weighted + 8, raw=record.raw + 1)
    (a / "results").mkdir(exist_ok=True)
    shutil.copy(conflicting, a / "results" / "part-00003.json")  # A has 3 already, with the true numbers
    write_record(conflicting, changed.to_json())  # a sealed result with other numbers, as a faulty site writes
    kept = (a / "results" / "part-00003.json").read_bytes()
    proc = cli("merge", a, b)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("refused 2: ") and "damaged" in lines[0]
    assert lines[1].startswith("refused 3: partition 3: the import found") and "kept this run's" in lines[1]
    assert not (a / "results" / "part-00002.json").exists()
    assert (a / "results" / "part-00003.json").read_bytes() == kept
    assert list((a / "results" / "duplicates").glob("part-00003.*"))  # the import kept as evidence


def test_two_refused_conflicts_keep_two_pieces_of_evidence(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = sites(tmp_path)
    cli("merge", a, b, check=True)
    for k, copy in enumerate((tmp_path / "c", tmp_path / "d"), 1):
        shutil.copytree(b, copy)
        result = copy / "results" / "part-00003.json"
        record = read_result(result)
        write_record(result, dataclasses.replace(record, weighted=record.weighted + 8 * k).to_json())
        assert cli("merge", a, copy).returncode == 1
    kept = sorted((a / "results" / "duplicates").glob("part-00003.imported-*.json"))
    assert len(kept) == 2 and {read_result(p).weighted for p in kept} == {record.weighted + 8, record.weighted + 16}
    assert collect(RunLayout(a)).total == published("nqueens_total", N)  # the first stays


def test_a_refused_conflict_is_named_by_collect_status_and_report_with_what_settles_it(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """merge keeps a conflicting count in results/duplicates/; the commands that say how a run stands name it
    and the re-count that settles it (they said nothing: the evidence lay there unseen)."""
    a, b = sites(tmp_path)
    cli("run", a, check=True)  # A counts B's share too: B's, sealed with other numbers, conflicts
    result = b / "results" / "part-00003.json"
    record = read_result(result)
    write_record(result, dataclasses.replace(record, weighted=record.weighted + 8, raw=record.raw + 1).to_json())
    assert cli("merge", a, b).returncode == 1
    said = [cli("collect", a), cli("status", a), cli("report", a, env={"COLUMNS": "400"})]
    assert said[0].returncode == 0  # the total stands: only a re-count tells which side is wrong
    for proc in said:
        text = " ".join((proc.stdout + proc.stderr).split())
        assert "partition 3 also has 1 count refused for other numbers than the result" in text, text
        assert f"`permenum verify {a} --only 3`" in text


def test_a_damaged_verification_is_refused_and_the_rest_imported(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = sites(tmp_path)
    cli("merge", b, a, check=True)
    cli("verify", b, "--only", "0", check=True)
    plan = next((b / "verify").iterdir()) / "verification.json"
    plan.write_text(plan.read_text()[:-20])
    proc = cli("merge", a, b)
    assert proc.returncode == 1 and "imported 2 results (2-3)" in proc.stdout, proc.stdout + proc.stderr
    assert proc.stderr.startswith("refused verification v-") and len(proc.stderr.strip().splitlines()) == 1
    assert not (a / "verify").exists() or not any((a / "verify").iterdir())


def _plant(verification: Path, file: str, payload: bytes) -> None:
    """Reseal ``verification``'s manifest with partition 0's file named ``file`` and sealed to ``payload``: what a
    hostile or broken site can hand over, as the old merge copied it to ``<staging>/<file>``."""
    path = verification / "manifest.json"
    content = json.loads(path.read_text())
    del content["sha256"]
    content["partitions"][0].update(file=file, sha256=hashlib.sha256(payload).hexdigest())
    write_record(path, content)


@pytest.mark.parametrize("how", ["plain", "through a pool symlink", "result symlinked out", "verification symlinked out"])
def test_merge_writes_and_reads_nothing_outside_either_run(cli, sites, tmp_path: Path, how: str) -> None:  # type: ignore[no-untyped-def]
    a, b = sites(tmp_path)
    cli("verify", b, "--only", "2", check=True)
    verification = next((b / "verify").iterdir())
    payload = b"#!/bin/sh\necho planted\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    if how == "plain":  # resolves, from the staging folder, to the home run's logs/
        (b / "logs").mkdir(exist_ok=True)
        (b / "logs" / "PLANTED.txt").write_bytes(payload)
        _plant(verification, "pool/../../../logs/PLANTED.txt", payload)
    elif how == "through a pool symlink":  # rsync -a keeps links: from the staging folder, outside the home run
        deep = verification / "d1" / "d2" / "d3"
        deep.mkdir(parents=True)
        (verification / "pool").symlink_to(deep)
        (b / "verify" / "ESCAPED.sh").write_bytes(payload)
        _plant(verification, "pool/../../../../ESCAPED.sh", payload)
    elif how == "result symlinked out":
        result = b / "results" / "part-00003.json"
        shutil.copy(result, outside / "part-00003.json")
        result.unlink()
        result.symlink_to(outside / "part-00003.json")
    else:
        shutil.move(verification, outside / verification.name)
        verification.symlink_to(outside / verification.name)
    untouched = _files(outside)
    proc = cli("merge", a, b)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and ("malformed manifest" in lines[0] or "leads outside" in lines[0]), proc.stderr
    assert not (a / "logs" / "PLANTED.txt").exists() and not (tmp_path / "ESCAPED.sh").exists()
    assert _files(outside) == untouched
    if how == "result symlinked out":
        assert lines[0].startswith("refused 3: ") and not (a / "results" / "part-00003.json").exists()
        assert "imported 1 result" in proc.stdout and "(2);" in proc.stdout, proc.stdout
    else:
        assert lines[0].startswith("refused verification v-")
        assert not (a / "verify").exists() or not any((a / "verify").iterdir())  # nothing of the refused import


def test_a_manifest_naming_a_file_outside_the_pool_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, "--num-partitions", 2, run, check=True)
    content = json.loads((run / "manifest.json").read_text())
    del content["sha256"]
    content["partitions"][1]["file"] = "pool/../../elsewhere.parquet"
    write_record(run / "manifest.json", content)
    proc = cli("run", run)
    assert proc.returncode == 2 and "is not pool/part-00001.parquet" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    content["partitions"][1]["file"] = "../../pool/part-00001.parquet"  # a verification's name for its run's file
    write_record(run / "manifest.json", content)
    proc = cli("run", run)
    assert proc.returncode == 2 and "is outside the run" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (run / "results" / "part-00001.json").exists()


def test_a_stray_name_among_the_kept_results_is_left_out(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / "run")
    kept = layout.results_dir / "duplicates"
    kept.mkdir(parents=True)
    for name in ("part-00003.attempt-2.json", "part-00004.imported-site.a-0123abcd.json", "part-1x.attempt-1.json",
                 "part-00005.attempt-2.solutions.parquet", "notes.txt"):
        (kept / name).write_text("{}")
    assert [(p, kind) for p, kind, _ in layout.kept_results()] == [(3, "attempt"), (4, "imported")]
    assert layout.duplicated_partitions() == {3}


def _reseal(result: Path, **changes: object) -> None:
    """The result rewritten with ``changes`` and sealed again: a forgery its seal cannot catch."""
    write_record(result, dataclasses.replace(read_result(result), **changes).to_json())


def test_a_resealed_result_whose_numbers_cannot_all_be_true_is_refused(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = sites(tmp_path)
    record = read_result(b / "results" / "part-00002.json")
    _reseal(b / "results" / "part-00002.json", states=record.states + 1000)
    _reseal(b / "results" / "part-00003.json", weighted=8 * read_result(b / "results" / "part-00003.json").raw + 8)
    proc = cli("merge", a, b)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("refused 2: ") and lines[1].startswith("refused 3: "), lines
    assert f"over {record.states + 1000} states" in lines[0] and f"with {record.states}: it does not add up" in lines[0]
    assert "counts do not add up" in lines[1] and "each standing for" in lines[1]
    assert not (a / "results" / "part-00002.json").exists() and not (a / "results" / "part-00003.json").exists()
    proc = cli("collect", b)
    assert proc.returncode == 2 and "damaged results" in proc.stderr and "does not add up" in proc.stderr


def test_a_costas_result_resealed_one_array_short_is_caught(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The arrays and the raw count both lowered, the weighted count kept (the array was not its class's
    representative): each file adds up alone; the class's orbit, across the run, has a gap."""
    a, b = sites(tmp_path, "costas", 10, 2)
    solutions, result = b / "solutions" / "part-00001.parquet", b / "results" / "part-00001.json"
    arrays = read_solutions(solutions, 10)
    dropped = next(x for x in arrays if class_share(x) == (0, 0))
    kept = [x for x in arrays if x != dropped]
    seal = write_arrays(solutions, np.array(kept, np.uint8))
    _reseal(result, raw=len(kept), solutions_file=seal)
    proc = cli("merge", a, b)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = cli("collect", a)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"stored NOWHERE, e.g. {list(dropped)}" in proc.stderr and "Traceback" not in proc.stderr
    _reseal(result, raw=len(kept), weighted=read_result(result).weighted - 1, solutions_file=seal)
    assert "imported 1 result" in cli("merge", b, a).stdout  # partition 0: b is whole (its 1 differs from a's)
    proc = cli("collect", b)  # the weighted count lowered too: that partition no longer adds up alone
    assert proc.returncode == 2 and "does not add up" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_recount_at_the_same_site_with_the_same_kernel_is_refused(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, _ = sites(tmp_path)
    here = read_result(a / "results" / "part-00000.json")
    proc = cli("verify", a, "--counted-at", here.origin.site, "--sample", 1, "--kernel", here.kernel)
    assert proc.returncode == 2 and "would repeat the same search" in proc.stderr


def test_costas_solutions_come_home_sealed(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = sites(tmp_path, "costas", 9, 2)
    solutions = b / "solutions" / "part-00001.parquet"
    good = solutions.read_bytes()
    solutions.write_bytes(good[:-3] + bytes(3))
    proc = cli("merge", a, b)
    assert proc.returncode == 1 and "refused 1: " in proc.stderr and "seal" in proc.stderr
    assert not (a / "results" / "part-00001.json").exists()
    result = b / "results" / "part-00001.json"
    sealed = result.read_bytes()
    write_record(result, dataclasses.replace(read_result(result), solutions_file=None).to_json())
    solutions.unlink()  # a result without a seal on its solutions, and no solutions: not imported
    proc = cli("merge", a, b)
    assert proc.returncode == 1 and "refused 1: " in proc.stderr and "is missing" in proc.stderr
    result.write_bytes(sealed)
    solutions.write_bytes(good)
    cli("merge", a, b, check=True)
    assert (a / "solutions" / "part-00001.parquet").read_bytes() == good
    proc = cli("collect", a)
    assert proc.returncode == 0 and "matches the published count" in proc.stdout, proc.stdout + proc.stderr
    arrays = cli("arrays", a, check=True).stdout.splitlines()
    assert len(arrays) == published("costas_classes", 9)


def test_a_foreign_site_and_device_name_print_escaped(cli, sites, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A copy whose results name their site and device with a newline and ESC[2J (sealed: the other site wrote
    them so): merged, collected and reported, the names print escaped: no fake line, no cleared screen."""
    a, b = sites(tmp_path)
    hostile = "evil\nFAKE: total 0\x1b[2J"
    for result in sorted((b / "results").glob("part-*.json")):
        record = read_result(result)
        devices = tuple(dataclasses.replace(d, label=hostile) for d in record.devices)
        write_record(result, dataclasses.replace(record, origin=dataclasses.replace(record.origin, cluster=hostile),
                                                  devices=devices).to_json())
    cli("merge", a, b, check=True)
    shown = "evil\\nFAKE: total 0\\x1b[2J"
    collected = cli("collect", a, check=True)
    (sites,) = [line for line in collected.stdout.splitlines() if line.startswith("sites: ")]
    assert f"{shown} counted 2" in sites
    report = cli("report", a, check=True)
    for proc in (collected, report):
        assert "\x1b" not in proc.stdout + proc.stderr
        assert not [line for line in proc.stdout.splitlines() if line.lstrip("│ ").startswith("FAKE")]
    assert "evil\\nFAKE" in report.stdout  # the device table's row (folded in its column)


@pytest.mark.slurm
@pytest.mark.slow
def test_two_sites_one_on_slurm_count_half_each_verify_each_other_exact(slurm_cluster, cli,  # type: ignore[no-untyped-def]
                                                                         tmp_path: Path) -> None:
    """N-Queens 18 split 50/50: site A submits its half to the cluster; site B (the local executor, its
    copy rebuilt from A's manifest) counts the other; results cross both ways, each site re-counts a
    sample of the other's, and A's ledger shows who counted and who verified what."""
    n, env = 18, slurm_cluster.env
    a, b = tmp_path / "site a", tmp_path / "site b"
    cli("pool", "nqueens", n, "--num-partitions", 4, a, check=True)
    cli("pool", "nqueens", n, "--num-partitions", 4, b, "--same-as", a / "manifest.json", check=True)
    cli("submit", a, "--only", "0-1", env=env, check=True)
    cli("run", b, "--only", "2-3", check=True)
    report = wait_idle(cli, slurm_cluster, a, deadline_s=600)
    assert partition_states(report)["done"] == [0, 1] and partition_states(report)["missing"] == [2, 3]
    proc = cli("status", a, env=env)
    assert "partitions 0-1 (2 of the pool's 4): 2 done" in proc.stdout  # the site's share, remembered by submit
    proc = cli("resubmit", a, "--include-missing", "--dry-run", env=env)
    assert "nothing to resubmit" in proc.stdout  # B's shards are not A's to count
    proc = cli("submit", a, env=env)  # again, without --only: still this site's share only
    assert proc.returncode == 0 and "nothing to submit" in proc.stdout, proc.stdout + proc.stderr

    cli("merge", a, b, check=True)  # B's results come home to A
    cli("merge", b, a, check=True)  # and A's go to B, which re-counts some of them
    sites = {int(p.stem[-5:]): read_result(p).origin.site for p in (a / "results").glob("part-*.json")}
    cluster_name, host = sites[0], sites[2]
    assert cluster_name == sites[1] != host == sites[3]
    proc = cli("verify", b, "--counted-at", cluster_name, "--sample", "0.5", "--seed", 0)
    assert proc.returncode == 0 and "1/1 partitions agree" in proc.stdout, proc.stdout + proc.stderr
    proc = cli("verify", a, "--counted-at", host, "--sample", "0.5", "--seed", 0, "--submit", env=env)
    assert proc.returncode == 0, proc.stderr
    shadow = next(p for p in (a / "verify").iterdir() if p.is_dir())
    wait_idle(cli, slurm_cluster, shadow, deadline_s=600)
    proc = cli("merge", a, b, check=True)
    assert "1 re-counts imported" in proc.stdout

    proc = cli("collect", a)
    assert proc.returncode == 0 and "matches the published count" in proc.stdout, proc.stdout + proc.stderr
    assert f"{cluster_name} counted 2, 1 of them verified by another site" in proc.stdout
    assert f"{host} counted 2, 1 of them verified by another site" in proc.stdout
    ledger = pq.read_table(a / "ledger.parquet").to_pylist()
    assert sum(int(r["solutions"]) for r in ledger) == published("nqueens_total", n)
    for row in ledger:
        assert row["site"] == sites[row["partition"]]
        assert row["verified_by"] in (None, host if row["site"] == cluster_name else cluster_name)
    assert sum(row["verified_by"] is not None for row in ledger) == 2
