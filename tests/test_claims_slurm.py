"""Issue 38 on the real single-node cluster: a SLURM task leaves a partition a live local task counts, a
self-requeue lifts SLURM's requeue delay every time, and `scancel --signal=KILL` is a plain cancel."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from permenum.layout import RunLayout
from permenum.slurm import cluster
from tests.conftest import published
from tests.slurm_helpers import partition_states, slurm, submissions, wait_idle
from tests.test_claims import _holder
from tests.test_requeue_slurm import _log, _submitted_and_checkpointed, _wait_for

pytestmark = pytest.mark.slurm


def test_a_slurm_task_leaves_a_partition_a_local_task_counts(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                             cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "held 'run'"
    cli("pool", "nqueens", 8, run, "--num-partitions", 2, check=True)
    layout = RunLayout(run)
    cli("submit", run, "--sbatch-arg=--hold", env=slurm_cluster.env, check=True)  # both, before the claim
    job = submissions(run)[0]["job_id"]
    holder = _holder(run, 0)
    try:
        proc = cli("submit", run, env=slurm_cluster.env)  # partition 0 is counted here, 1 is queued: nothing to add
        assert proc.returncode == 0 and "nothing to submit" in proc.stdout, proc.stdout + proc.stderr
        slurm(slurm_cluster, "scontrol", "release", str(job))
        report = wait_idle(cli, slurm_cluster, run)
        assert partition_states(report)["done"] == [1], report
        assert partition_states(report)["running"] == [0] and report["running_local"] == [0], report  # its holder
        said = (layout.logs_dir / f"{job}_0.out").read_text()
        assert f"partition 0 is being counted by pid {holder.pid} on " in said and "left to it" in said, said
        assert not layout.failure_file(0).exists() and not layout.result_file(0).exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    cli("resubmit", run, env=slurm_cluster.env, check=True)  # its holder gone, the partition is counted
    slurm(slurm_cluster, "scontrol", "release", str(submissions(run)[-1]["job_id"]))  # it keeps the submit's --hold
    report = wait_idle(cli, slurm_cluster, run)
    assert partition_states(report)["done"] == [0, 1], report
    assert f"total {published('nqueens_total', 8)} " in cli("collect", run, check=True).stdout


@pytest.mark.slow
def test_every_self_requeue_lifts_slurms_delay(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                               cli) -> None:  # type: ignore[no-untyped-def]
    """The requeue TERMs every process of the element, the task's own `scontrol requeue` and `scontrol update
    StartTime=now` included (the update failed with exit -15 in 5 of 8): both ignore TERM now."""
    layout, job = _submitted_and_checkpointed(cli, slurm_cluster, tmp_path / "requeue")
    target = f"{job}_0"
    out = layout.logs_dir / f"{job}_0.out"
    for k in range(1, 4):
        _wait_for(lambda: len(re.findall(r"pid \d+: attempt \d+:", _log(layout))) >= k, f"attempt {k}", 180,
                  said=lambda: _log(layout))
        slurm(slurm_cluster, "scancel", "--batch", "--signal=USR1", target)
        _wait_for(lambda: out.exists() and out.read_text().count(f"requeued {target}") >= k, f"requeue {k}", 60,
                  said=lambda: _log(layout) + (out.read_text() if out.exists() else "(no output yet)"))
    slurm(slurm_cluster, "scancel", str(job))
    wait_idle(cli, slurm_cluster, layout.root)
    said = out.read_text()
    assert "requeue delay" not in said and said.count(f"USR1: requeued {target}") >= 3, said


@pytest.mark.slow
def test_scancel_signal_kill_is_a_plain_cancel(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                               cli) -> None:  # type: ignore[no-untyped-def]
    """What docs/DEVELOPMENT.md says of `scancel --signal=KILL`: TERM first, a checkpoint, stopped for good."""
    layout, job = _submitted_and_checkpointed(cli, slurm_cluster, tmp_path / "kill")
    slurm(slurm_cluster, "scancel", "--signal=KILL", f"{job}_0")
    report = wait_idle(cli, slurm_cluster, layout.root)
    assert partition_states(report)["failed"] == [0], report
    assert "stopping at state" in _log(layout)
    assert "cancelled: stopped for good" in (layout.logs_dir / f"{job}_0.out").read_text()
