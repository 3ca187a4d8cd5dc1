"""`permenum search --submit`: a search as an array on the real single-node cluster; the first task to find
cancels the rest, and `status` / `collect` say who found, after how long, and what every task tried."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from permenum.slurm import cluster
from tests.slurm_helpers import JOB_DEADLINE, slurm, submissions
from tests.test_search import costas_ok

pytestmark = pytest.mark.slurm

#: Costas 19, one walk per task, seed 1: task 0's walk finds after 822,993 iterations (about 3 s on one
#: core here); task 1's walk (seed 1 + 2^32) had not found after 6.7 M iterations (25 s): it is running when
#: task 0 cancels it.
ORDER, SEED = 19, 1


def test_first_find_cancels_the_rest_of_the_array(slurm_cluster: cluster.ClusterInfo, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "search 'run'"
    proc = cli("search", "costas", ORDER, "--seed", SEED, "--walks", 1, "--tasks", 3, "--submit", run,
               "--device", "cpu", env=slurm_cluster.env, check=True)
    (sub,) = submissions(run)
    assert f"submitted job {sub['job_id']}: 3 search tasks" in proc.stdout
    assert sub["kind"] == "search" and sub["array"] == "0-2"
    deadline = time.monotonic() + 2 * JOB_DEADLINE
    while slurm(slurm_cluster, "squeue", "-h", "-r", "-j", str(sub["job_id"])).strip():
        if time.monotonic() > deadline:
            pytest.fail(f"search array still queued: {slurm(slurm_cluster, 'squeue', '-a')}")
        time.sleep(0.5)
    found = json.loads((run / "found.json").read_text())
    assert found["task"] == 0 and found["walk_seed"] == SEED and costas_ok(found["solution"])
    assert found["environment"]["slurm_array_job_id"] == sub["job_id"]
    cancelled = json.loads((run / "results" / "task-00001.json").read_text())
    assert cancelled["status"] == "cancelled" and cancelled["solution"] is None and cancelled["iterations"] > 0
    third = run / "results" / "task-00002.json"  # pending when cancelled (2 CPUs here): never ran
    assert not third.exists() or json.loads(third.read_text())["status"] == "cancelled"
    log = (run / "logs" / f"{sub['job_id']}_0.out").read_text()
    assert "cancelled the rest of the array" in log, log
    status = cli("status", run, env=slurm_cluster.env, check=True)
    assert "found by task 0, walk 0 (seed 1)" in status.stdout and "task 1: cancelled" in status.stdout
    collect = cli("collect", run, env=slurm_cluster.env, check=True)
    assert "found by task 0" in collect.stdout and "walk-iterations in all" in collect.stdout
