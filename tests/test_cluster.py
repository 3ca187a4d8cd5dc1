"""End-to-end checks of permenum.slurm.cluster against real slurmctld/slurmd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from permenum.slurm import cluster

pytestmark = pytest.mark.slurm

JOB_TIMEOUT = 60.0


def _client(info: cluster.ClusterInfo, *args: str) -> str:
    """Run a SLURM client command against `info`'s cluster; return stdout."""
    proc = subprocess.run(
        list(args),
        env={**os.environ, **info.env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, f"{args} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _wait_gone(info: cluster.ClusterInfo, job_id: str) -> None:
    """Poll squeue (which lists only unfinished jobs) until the job has left it."""
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        if not _client(info, "squeue", "-h", "-j", job_id, "-o", "%i %T").strip():
            return
        time.sleep(0.5)
    pytest.fail(f"job {job_id} not finished after {JOB_TIMEOUT}s:\n{_client(info, 'squeue', '-a')}")


def _pids(state_dir: Path) -> dict[str, int]:
    return json.loads((state_dir / "pids.json").read_text())


def test_array_job_runs(slurm_cluster: cluster.ClusterInfo, tmp_path: Path) -> None:
    out_dir = tmp_path / "job out"
    out_dir.mkdir()
    job_id = _client(
        slurm_cluster,
        "sbatch",
        "--parsable",
        "--array=0-3",
        f"--output={out_dir}/%A_%a.out",
        "--wrap",
        "echo task $SLURM_ARRAY_TASK_ID",
    ).strip().split(";")[0]
    assert job_id.isdigit(), job_id
    _wait_gone(slurm_cluster, job_id)

    outputs = {p.name: p.read_text() for p in out_dir.iterdir()}
    assert outputs == {f"{job_id}_{i}.out": f"task {i}\n" for i in range(4)}

    jobcomp = (slurm_cluster.state_dir / "log" / "jobcomp.log").read_text().splitlines()
    ours = [line for line in jobcomp if f"ArrayJobId={job_id} " in line]
    assert len(ours) == 4 and all("JobState=COMPLETED" in line for line in ours), ours


def test_up_is_idempotent(slurm_cluster: cluster.ClusterInfo) -> None:
    before = _pids(slurm_cluster.state_dir)
    assert cluster.up(slurm_cluster.state_dir) == slurm_cluster
    assert _pids(slurm_cluster.state_dir) == before
    st = cluster.status(slurm_cluster.state_dir)
    assert all(st["alive"].values()), st
    assert "idle" in st["sinfo"], st


def test_down_kills_only_its_own_pids(slurm_cluster: cluster.ClusterInfo, tmp_path: Path) -> None:
    main_pids = _pids(slurm_cluster.state_dir)

    # A second cluster on the same host: own ports, own munged.
    second = tmp_path / "second cluster"
    cluster.up(second)
    second_pids = _pids(second)
    assert set(second_pids.values()).isdisjoint(main_pids.values())
    cluster.down(second)
    cluster.down(second)  # idempotent
    assert not any(cluster.status(second)["alive"].values())
    for name, pid in second_pids.items():
        assert not cluster._alive(pid, name), (name, pid)

    # A stale/forged pids.json naming an unrelated process must not kill it.
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        forged = tmp_path / "forged"
        forged.mkdir()
        (forged / "pids.json").write_text(json.dumps({"slurmd": decoy.pid}))
        cluster.down(forged)
        assert decoy.poll() is None, "down() killed a process it did not start"
    finally:
        decoy.kill()
        decoy.wait()

    # The session cluster is untouched and still schedules.
    for name, pid in main_pids.items():
        assert cluster._alive(pid, name), (name, pid)
    st = cluster.status(slurm_cluster.state_dir)
    assert all(st["alive"].values()) and "idle" in st["sinfo"], st
