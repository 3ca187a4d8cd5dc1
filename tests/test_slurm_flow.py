"""submit / status / resubmit against the real single-node cluster (munged + slurmctld + slurmd), no mocks.

Run directories have spaces and quotes in their names on purpose. Every wait is bounded.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from permenum.layout import RunLayout
from permenum.ranges import compact_ranges
from permenum.records import read_result
from permenum.slurm import cluster
from tests.conftest import published
from tests.slurm_fixture import MAX_ARRAY_SIZE
from tests.slurm_helpers import partition_states, slurm, status, submissions, wait_idle

pytestmark = pytest.mark.slurm

PARTITIONS = 8


def _pool(cli, run: Path) -> None:  # type: ignore[no-untyped-def]
    cli("pool", "nqueens", 12, run, "--num-partitions", PARTITIONS, check=True)


@pytest.mark.smoke
def test_full_flow_through_slurm(slurm_cluster: cluster.ClusterInfo, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "n12 'full' run"
    _pool(cli, run)
    # The task's options, as `permenum run` takes them (skip-all: not the CPU's default kernel).
    dry = cli("submit", run, "--dry-run", "--throttle", 2, "--kernel", "skip-all", "--count-nodes",
              env=slurm_cluster.env, check=True)
    shown = [line.split("  # ")[0].strip() for line in dry.stderr.splitlines() if line.startswith("  sbatch ")]
    assert len(shown) == 2 and not (run / "submissions.jsonl").exists(), dry.stderr
    proc = cli("submit", run, "--throttle", 2, "--kernel", "skip-all", "--count-nodes", env=slurm_cluster.env,
               check=True)
    # 8 partitions beyond the test cluster's MaxArraySize=5: two arrays, the second handed offset 5 and
    # waiting for the first, so the throttle holds for the run
    assert f"submitted 2 array jobs, MaxArraySize={MAX_ARRAY_SIZE}" in proc.stdout, proc.stdout
    first, second = submissions(run)
    assert first["kind"] == second["kind"] == "submit" and first["job_id"] > 0
    assert (first["array"], first["offset"], first["partitions"]) == ("0-4%2", 0, "0-4")
    assert (second["array"], second["offset"], second["partitions"]) == ("0-2%2", 5, "5-7")
    assert f"--dependency=afterany:{first['job_id']}" in second["command"] and second["command"][-1] == "5"
    # the dry run showed these two commands (the first on the script's own name: sbatch got it as a candidate)
    assert shown == [shlex.join(first["command"]).replace("array.sbatch.new", "array.sbatch"),
                     shlex.join(second["command"]).replace(f"afterany:{first['job_id']}", "afterany:JOB1")]
    # sbatch got the new script under its candidate name; once accepted it became the run's script
    assert first["command"][:2] == ["sbatch", "--parsable"] and first["command"][-1] == str(run / "slurm" / "array.sbatch.new")
    assert second["command"][-2] == first["script"] == str(run / "slurm" / "array.sbatch")
    assert not (run / "slurm" / "array.sbatch.new").exists()
    assert first["options"]["kernel"] == "skip-all" and first["options"]["count_nodes"] is True
    script = (run / "slurm" / "array.sbatch").read_text()
    exec_line = script.rstrip().splitlines()[-1]
    assert "#SBATCH --requeue" in script and exec_line.startswith("exec permenum task ")
    assert exec_line.endswith(" --kernel skip-all --count-nodes"), exec_line

    report = wait_idle(cli, slurm_cluster, run)
    assert partition_states(report)["done"] == list(range(PARTITIONS)), report
    assert report["sources"]["sacct"].startswith("not configured")
    assert {"squeue", "scontrol", "jobcomp", "results", "task logs"} <= report["sources"].keys()
    assert sorted(p.name for p in (run / "logs").glob("*.out")) == sorted(
        [f"{first['job_id']}_{i}.out" for i in range(5)] + [f"{second['job_id']}_{i}.out" for i in range(3)])
    logged = {int(m) for p in (run / "logs").glob("*.out") for m in re.findall(r"permenum: partition (\d+),", p.read_text())}
    assert logged == set(range(PARTITIONS))
    results = [read_result(RunLayout(run).result_file(i)) for i in range(PARTITIONS)]
    assert all(r.nodes is not None and r.nodes > 0 for r in results)  # --count-nodes reached every task
    assert {r.kernel for r in results} == {"skip-all"}  # and --kernel: the variant that ran

    proc = cli("collect", run, env=slurm_cluster.env, check=True)
    assert f"total {published('nqueens_total', 12)} " in proc.stdout and "matches the published count" in proc.stdout

    # Over a complete run: nothing is submitted, and it says so.
    for command in ("submit", "resubmit"):
        proc = cli(command, run, env=slurm_cluster.env, check=True)
        assert proc.stdout.startswith(f"nothing to {command}: all 8 partitions"), proc.stdout
    assert len(submissions(run)) == 2


def test_failure_and_recovery(slurm_cluster: cluster.ClusterInfo, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "n12 \"failing\" run"
    _pool(cli, run)
    broken = {2: run / "pool" / "part-00002.parquet", 5: run / "pool" / "part-00005.parquet"}
    good = {i: p.read_bytes() for i, p in broken.items()}
    for p in broken.values():  # the task's checksum check fails for real
        p.write_bytes(p.read_bytes()[:-64] + b"\0" * 64)

    cli("submit", run, env=slurm_cluster.env, check=True)
    jobs = [record["job_id"] for record in submissions(run)]
    report = wait_idle(cli, slurm_cluster, run)
    states = partition_states(report)
    assert states["failed"] == [2, 5] and states["done"] == [0, 1, 3, 4, 6, 7] and not states["missing"], report
    for i, element in (("2", f"{jobs[0]}_2"), ("5", f"{jobs[1]}_0")):  # 5: index 0 of the array from offset 5
        evidence = " ".join(report["failed"][i]["evidence"])
        assert f"job {element} FAILED" in evidence and "corrupted" in evidence
        assert report["failed"][i]["log"].endswith(f"{element}.out")
    assert report["states"]["failed"]["compact"] == "2,5"
    proc = cli("status", run, env=slurm_cluster.env)
    assert proc.returncode == 1  # failed partitions: status says so in its exit code too
    assert any(line.split()[:3] == ["failed", "2", "2,5"] for line in proc.stdout.splitlines()), proc.stdout

    for i, p in broken.items():  # the cause is removed
        p.write_bytes(good[i])

    # A hand-submitted, held element of the run's own script counts as pending, and resubmit waits for it.
    held = slurm(slurm_cluster, "sbatch", "--parsable", "--hold", "--array=2", str(run / "slurm" / "array.sbatch")).strip()
    states = partition_states(status(cli, slurm_cluster, run))
    assert states["pending"] == [2] and states["failed"] == [5], states
    refused = cli("resubmit", run, env=slurm_cluster.env)
    assert refused.returncode == 2 and "refusing to resubmit" in refused.stderr and "pending or running" in refused.stderr
    assert len(submissions(run)) == 2
    slurm(slurm_cluster, "scancel", held)
    report = wait_idle(cli, slurm_cluster, run)
    assert partition_states(report)["failed"] == [2, 5]
    assert report["failed"]["2"]["evidence"][0].startswith(f"job {held}_2 CANCELLED before it started")

    proc = cli("resubmit", run, env=slurm_cluster.env, check=True)
    assert "--array=0,3 with offset 2 (partitions 2,5)" in proc.stdout, proc.stdout  # one array, 5 beyond MaxArraySize
    last = submissions(run)[-1]
    assert last["kind"] == "resubmit" and (last["array"], last["offset"]) == ("0,3", 2) and "--array=0,3" in last["command"]
    report = wait_idle(cli, slurm_cluster, run)
    assert partition_states(report)["done"] == list(range(PARTITIONS)), report

    proc = cli("collect", run, env=slurm_cluster.env, check=True)
    assert f"total {published('nqueens_total', 12)} " in proc.stdout and "matches the published count" in proc.stdout
    ledger = pq.read_table(run / "ledger.parquet")
    assert sorted(ledger.column("partition").to_pylist()) == list(range(PARTITIONS))  # none counted twice
    assert not (run / "results" / "duplicates").exists()
    assert len(submissions(run)) == 3


def test_cancelled_while_pending_is_failed_however_cancelled(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                             cli) -> None:  # type: ignore[no-untyped-def]
    """One rule: an element cancelled alone (SLURM keeps no record) and the pending elements of a cancelled
    array (one CANCELLED record, no run time) both ended without a result: failed, and resubmit runs them."""
    run = tmp_path / "cancelled pending"
    cli("pool", "nqueens", 12, run, "--num-partitions", 6, check=True)
    cli("submit", run, "--throttle", 1, env=slurm_cluster.env, check=True)
    job = submissions(run)[0]["job_id"]
    slurm(slurm_cluster, "scancel", f"{job}_4")
    slurm(slurm_cluster, "scancel", str(job))
    report = wait_idle(cli, slurm_cluster, run)
    states = partition_states(report)
    assert 4 in states["failed"] and len(states["failed"]) >= 3 and not states["missing"], report
    assert "never started" in report["failed"]["4"]["evidence"][0] and "submissions.jsonl" in report["failed"]["4"]["evidence"][0]
    assert any("CANCELLED before it started" in report["failed"][str(i)]["evidence"][0] for i in states["failed"] if i != 4)
    cli("resubmit", run, env=slurm_cluster.env, check=True)
    report = wait_idle(cli, slurm_cluster, run)
    assert partition_states(report)["done"] == list(range(6)), report
    proc = cli("collect", run, env=slurm_cluster.env, check=True)
    assert f"total {published('nqueens_total', 12)} " in proc.stdout


def test_no_task_of_a_held_stepped_array_is_failed(wide_slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                    cli) -> None:  # type: ignore[no-untyped-def]
    """Every third partition, held and throttled: SLURM holds them as one pending record ``0-39:3%1`` and
    Slurm 22.05's ``squeue -r`` leaves out 39. status calls every one pending, none failed, and resubmit
    submits nothing."""
    run = tmp_path / "stepped 'held' run"
    cli("pool", "nqueens", 12, run, "--num-partitions", 40, check=True)
    shards = list(range(0, 40, 3))
    cli("submit", run, "--only", compact_ranges(shards), "--throttle", 1, "--sbatch-arg=--hold",
        env=wide_slurm_cluster.env, check=True)
    (record,) = submissions(run)
    job = record["job_id"]
    try:
        assert record["array"] == f"{compact_ranges(shards)}%1"
        held = slurm(wide_slurm_cluster, "scontrol", "show", "job", "-o", str(job))
        assert "ArrayTaskId=0-39:3%1 " in held  # SLURM's own stepped form of the pending tasks
        listed = [int(i) for i in slurm(wide_slurm_cluster, "squeue", "-h", "-r", "-j", str(job), "-o", "%K").split()]
        report = status(cli, wide_slurm_cluster, run)
        states = partition_states(report)
        assert states["pending"] == shards and not states["failed"] and not states["running"], report
        assert states["missing"] == [p for p in range(40) if p not in shards]
        left_out = [p for p in shards if p not in listed]  # [39] on Slurm 22.05
        assert any(f"job {job} tasks {compact_ranges(left_out)}" in n for n in report["notes"]) == bool(left_out)
        proc = cli("resubmit", run, env=wide_slurm_cluster.env, check=True)
        assert proc.stdout.startswith("nothing to resubmit: no failed partitions"), proc.stdout
        assert len(submissions(run)) == 1
    finally:
        slurm(wide_slurm_cluster, "scancel", str(job))
