"""`submit --workers W` on the real single-node cluster: W array tasks count every partition once, each under
its claim; `status` and `resubmit` stay per partition (held, failed, cancelled mid-way), and the totals exact."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from permenum.layout import RunLayout
from permenum.records import read_result
from permenum.slurm import cluster
from tests.conftest import published
from tests.slurm_helpers import partition_states, slurm, status, submissions, wait_idle

pytestmark = pytest.mark.slurm

PARTITIONS = 8


def test_workers_count_every_partition_once_and_resubmit_the_failed(slurm_cluster: cluster.ClusterInfo,
                                                                    tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "n12 'workers'"
    cli("pool", "nqueens", 12, run, "--num-partitions", PARTITIONS, check=True)
    broken = run / "pool" / "part-00003.parquet"
    good = broken.read_bytes()
    broken.write_bytes(good[:-64] + b"\0" * 64)  # the task's checksum check fails for real

    proc = cli("submit", run, "--workers", 2, "--sbatch-arg=--hold", env=slurm_cluster.env, check=True)
    assert "2 workers over partitions 0-7" in proc.stdout, proc.stdout
    (record,) = submissions(run)
    assert (record["array"], record["workers"], record["partitions"]) == ("0-1", 2, "0-7") and record["command"][-1] == "0-7"
    script = (run / "slurm" / "array.sbatch").read_text()
    last = script.rstrip().splitlines()[-1]
    assert "#SBATCH --array=0-1" in script and last.startswith("exec permenum task ") and '--only "$partitions"' in last
    # held: every partition is pending under the worker array, and nothing is resubmitted over it
    states = partition_states(status(cli, slurm_cluster, run))
    assert states["pending"] == list(range(PARTITIONS)), states
    proc = cli("resubmit", run, "--include-missing", env=slurm_cluster.env, check=True)
    assert "nothing to resubmit" in proc.stdout and "0-7 still pending or running" in proc.stdout, proc.stdout
    assert len(submissions(run)) == 1
    slurm(slurm_cluster, "scontrol", "release", str(record["job_id"]))

    report = wait_idle(cli, slurm_cluster, run)
    states = partition_states(report)
    assert states["done"] == [0, 1, 2, 4, 5, 6, 7] and states["failed"] == [3], report
    evidence = " ".join(report["failed"]["3"]["evidence"])
    assert "corrupted" in evidence and f"job {record['job_id']}_" in evidence, evidence
    layout = RunLayout(run)
    for i in states["done"]:
        origin = read_result(layout.result_file(i)).origin
        assert origin.slurm_array_job_id == record["job_id"] and origin.slurm_array_task_id in (0, 1)
    logs = [p.read_text() for p in sorted(layout.logs_dir.glob(f"{record['job_id']}_*.out"))]
    assert len(logs) == 2 and 1 <= sum(log.count("partition 3 failed") for log in logs) <= 2, logs  # once a worker at most

    broken.write_bytes(good)
    proc = cli("resubmit", run, env=slurm_cluster.env, check=True)
    assert "1 workers over partitions 3" in proc.stdout, proc.stdout
    assert submissions(run)[-1]["workers"] == 1
    slurm(slurm_cluster, "scontrol", "release", str(submissions(run)[-1]["job_id"]))  # the script keeps --hold
    report = wait_idle(cli, slurm_cluster, run)
    assert partition_states(report)["done"] == list(range(PARTITIONS)), report
    proc = cli("collect", run, env=slurm_cluster.env, check=True)
    assert f"total {published('nqueens_total', 12)} " in proc.stdout and "matches the published count" in proc.stdout
    assert sorted(pq.read_table(run / "ledger.parquet").column("partition").to_pylist()) == list(range(PARTITIONS))
    assert not (run / "results" / "duplicates").exists()  # none counted twice


@pytest.mark.slow
def test_scancel_of_a_worker_then_resubmit_is_exact(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                    cli) -> None:  # type: ignore[no-untyped-def]
    """One worker on one PoCL thread over 4 partitions of N-Queens 17 (about 2.5 s each): cancelled after its
    first result, the others are failed (one stopped with a checkpoint), and resubmit finishes them exactly."""
    run = tmp_path / "n17 workers"
    cli("pool", "nqueens", 17, run, "--num-partitions", 4, check=True)
    env = {**slurm_cluster.env, "POCL_MAX_PTHREAD_COUNT": "1"}
    cli("submit", run, "--workers", 1, "--chunk-seconds", 0.5, env=env, check=True)
    job = submissions(run)[0]["job_id"]
    layout = RunLayout(run)
    deadline = time.monotonic() + 120
    while not layout.with_result_file() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert layout.with_result_file(), "no result within 120 s"
    slurm(slurm_cluster, "scancel", str(job))
    report = wait_idle(cli, slurm_cluster, run)
    states = partition_states(report)
    assert states["done"] and states["failed"] and not states["missing"], report
    assert sorted(states["done"] + states["failed"]) == [0, 1, 2, 3]
    assert any("CANCELLED" in " ".join(report["failed"][str(i)]["evidence"]) for i in states["failed"]), report

    cli("resubmit", run, env=env, check=True)
    report = wait_idle(cli, slurm_cluster, run, deadline_s=300)
    assert partition_states(report)["done"] == [0, 1, 2, 3], report
    proc = cli("collect", run, env=env, check=True)
    assert f"total {published('nqueens_total', 17)} " in proc.stdout
    assert not (run / "results" / "duplicates").exists()
    assert json.loads((run / "submissions.jsonl").read_text().splitlines()[-1])["kind"] == "resubmit"
