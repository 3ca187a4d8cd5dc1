"""`permenum verify --submit`: a verification is an array like any other, on the real single-node cluster."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from permenum.slurm import cluster
from tests.slurm_helpers import JOB_DEADLINE, partition_states, slurm, status, submissions

pytestmark = pytest.mark.slurm


def test_a_verification_runs_as_an_array_of_its_own(slurm_cluster: cluster.ClusterInfo, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 9, run, "--num-partitions", 4, check=True)
    cli("run", run, "--device", "cpu", check=True)
    proc = cli("verify", run, "--only", "1,3", "--submit", "--device", "cpu", env=slurm_cluster.env, check=True)
    (shadow,) = (run / "verify").iterdir()
    (sub,) = submissions(shadow)
    assert sub["array"] == "1,3" and f"submitted job {sub['job_id']}" in proc.stdout
    assert not (run / "submissions.jsonl").exists()  # the run's own record of jobs is untouched
    deadline = time.monotonic() + JOB_DEADLINE
    while slurm(slurm_cluster, "squeue", "-h", "-r", "-j", str(sub["job_id"])).strip():
        if time.monotonic() > deadline:
            pytest.fail(f"verification array still queued: {slurm(slurm_cluster, 'squeue', '-a')}")
        time.sleep(0.5)
    check = cli("verify", run, "--check", "--id", shadow.name, env=slurm_cluster.env, check=True)
    assert "2/2 partitions agree" in check.stdout
    comparisons = json.loads((shadow / "check.json").read_text())["comparisons"]
    assert all(c["recount"]["kernels"] == ["skip-all"] and c["independent"] for c in comparisons)
    states = partition_states(status(cli, slurm_cluster, run))  # the run: done, nothing of its own queued
    assert states["done"] == [0, 1, 2, 3] and not states["pending"] and not states["running"]
