"""Preemption on the real single-node cluster: a job in a higher-tier partition requeues the task, which
checkpoints on SIGTERM and resumes, exact. A file of its own so that it runs on the other real-cluster
worker from the requeue tests (tests/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from permenum.jobs.ledger.collect import collect
from permenum.layout import RunLayout
from permenum.slurm import cluster
from tests.conftest import published
from tests.slurm_helpers import partition_states, slurm, submissions, wait_idle
from tests.test_requeue_slurm import LONG_DEADLINE, _job_env, _log, _wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_preemption_checkpoints_and_the_requeued_task_resumes(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                              cli) -> None:  # type: ignore[no-untyped-def]
    """A job in the higher-tier partition "urgent" preempts the task (PreemptMode=REQUEUE, GraceTime=30):
    SIGTERM, a checkpoint, SLURM requeues the element, and it resumes from the checkpoint, exact. N=18
    (about 2 minutes on one thread): SLURM took up to 40 s here to preempt."""
    run = tmp_path / "preempted"
    cli("pool", "nqueens", 18, run, "--num-partitions", 1, check=True)
    layout = RunLayout(run)
    cli("submit", run, "--chunk-seconds", "2", env=_job_env(slurm_cluster), check=True)
    _wait_for(lambda: layout.checkpoint_file(0).exists() and "attempt 1" in _log(layout), "a first checkpoint",
              said=lambda: _log(layout))
    job = int(submissions(run)[0]["job_id"])
    slurm(slurm_cluster, "sbatch", "--parsable", "-p", "urgent", "--exclusive", "-o", str(tmp_path / "urgent.out"),
          "--wrap", "sleep 2")
    report = wait_idle(cli, slurm_cluster, run, deadline_s=LONG_DEADLINE)
    assert partition_states(report)["done"] == [0], report
    assert collect(layout).total == published("nqueens_total", 18)
    record = json.loads(layout.result_file(0).read_text())
    slurm_log = (layout.logs_dir / f"{job}_0.out").read_text()
    assert "DUE TO PREEMPTION" in slurm_log and "got SIGTERM" in slurm_log and "Traceback" not in slurm_log, slurm_log
    assert "requeued by SLURM already" in slurm_log or "preempted: " in slurm_log, slurm_log
    assert record["resumed_from"] > 0 and record["attempt"] == 2
