"""Checkpoint + requeue on the real single-node cluster: time limits, kill -9, repeated USR1.

One N-Queens partition on PoCL limited to one thread (POCL_MAX_PTHREAD_COUNT=1, passed to the
job through sbatch's exported environment): N=17 takes about 10 s of kernel here, long enough for one
signal; the tests that interrupt a task many times, or wait for a time limit's signal, count N=18
(about 6 times the work), so the work does not run out before the last signal.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from permenum.jobs.ledger.collect import collect
from permenum.layout import RunLayout
from permenum.slurm import cluster
from tests.conftest import published
from tests.slurm_helpers import partition_states, slurm, submissions, wait_idle

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

N = 17
LONG_N = 18
LONG_DEADLINE = 600.0


def _job_env(info: cluster.ClusterInfo) -> dict[str, str]:
    return {**info.env, "POCL_MAX_PTHREAD_COUNT": "1"}


def _pool(cli, run: Path, *extra: str, n: int = N) -> RunLayout:  # type: ignore[no-untyped-def]
    cli("pool", "nqueens", n, run, "--num-partitions", 1, *extra, check=True)
    return RunLayout(run)


def _log(layout: RunLayout) -> str:
    path = layout.task_log(0)
    return path.read_text() if path.exists() else ""


def _wait_for(predicate, what: str, deadline_s: float = 120.0,  # type: ignore[no-untyped-def]
              said: Callable[[], str] | None = None) -> Any:
    """Poll ``predicate`` until it holds; on timeout fail with the tail of what ``said`` returns (the job's
    output), so a failure on a machine we cannot log into still says what the task did."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}" + (f"; it said:\n{said()[-3000:]}" if said else ""))


def _finish_exact(cli, info: cluster.ClusterInfo, layout: RunLayout,  # type: ignore[no-untyped-def]
                  n: int = N) -> dict[str, Any]:
    report = wait_idle(cli, info, layout.root, deadline_s=LONG_DEADLINE)
    assert partition_states(report)["done"] == [0], report
    c = collect(layout)
    assert c.total == published("nqueens_total", n) and len(c.counted) == 1
    return json.loads(layout.result_file(0).read_text())


def _submitted_and_checkpointed(cli, info: cluster.ClusterInfo, run: Path) -> tuple[RunLayout, int]:  # type: ignore[no-untyped-def]
    """One partition submitted in 1-second chunks, running, with a first checkpoint behind it."""
    layout = _pool(cli, run)
    cli("submit", layout.root, "--chunk-seconds", "1", env=_job_env(info), check=True)
    _wait_for(lambda: layout.checkpoint_file(0).exists() and "attempt 1" in _log(layout), "a first checkpoint",
              said=lambda: _log(layout))
    time.sleep(1.5)
    return layout, int(submissions(layout.root)[0]["job_id"])


def test_time_limit_signal_checkpoints_requeues_and_resumes(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                            cli) -> None:  # type: ignore[no-untyped-def]
    # N=18: about a minute of kernel, longer than the signal's due time (30 s into the 2-minute
    # limit; SLURM may send it up to a minute early, so every attempt may be signalled at once: each
    # still does one chunk, sized from the rate measured before).
    layout = _pool(cli, tmp_path / "time limit", n=LONG_N)
    cli("submit", layout.root, "--time", "2", "--signal-seconds", "90", "--chunk-seconds", "20",
        env=_job_env(slurm_cluster), check=True)
    record = _finish_exact(cli, slurm_cluster, layout, n=LONG_N)
    log = _log(layout)
    offsets = [int(x) for x in re.findall(r"resuming from checkpoint at state (\d+)", log)]
    assert offsets and record["resumed_from"] == offsets[-1] > 0, log
    assert "stopping at state" in log and record["attempt"] >= 2


def test_kill_9_then_resubmit_resumes_from_last_checkpoint(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                           cli) -> None:  # type: ignore[no-untyped-def]
    layout, _ = _submitted_and_checkpointed(cli, slurm_cluster, tmp_path / "kill 9")
    pid = int(re.findall(r"pid (\d+): attempt", _log(layout))[-1])
    os.kill(pid, signal.SIGKILL)
    report = wait_idle(cli, slurm_cluster, layout.root)
    assert partition_states(report)["failed"] == [0], report
    progress = report["progress"]
    assert 0 < progress["partial"]["0"]["states_done"] < progress["states_total"] == progress["partial"]["0"]["states"]
    proc = cli("status", layout.root, env=slurm_cluster.env)
    assert proc.returncode == 1 and "states checkpointed" in proc.stdout and "ETA none: nothing is queued" in proc.stdout
    cli("resubmit", layout.root, env=_job_env(slurm_cluster), check=True)
    assert submissions(layout.root)[-1]["array"].startswith("0")
    record = _finish_exact(cli, slurm_cluster, layout)
    assert record["resumed_from"] > 0 and record["states_this_attempt"] < record["states"]


def test_repeated_usr1_interruptions_stay_exact(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                cli) -> None:  # type: ignore[no-untyped-def]
    layout = _pool(cli, tmp_path / "usr1 x5", n=LONG_N)
    cli("submit", layout.root, "--chunk-seconds", "1", env=_job_env(slurm_cluster), check=True)
    target = f"{submissions(layout.root)[0]['job_id']}_0"
    for k in range(1, 6):
        # the k-th attempt is running and has finished at least one chunk of its own
        _wait_for(lambda: len(re.findall(r"pid \d+: attempt \d+:", _log(layout))) >= k,
                  f"attempt {k} to start", 180, said=lambda: _log(layout))
        time.sleep(1.5)
        slurm(slurm_cluster, "scancel", "--batch", "--signal=USR1", target)
        _wait_for(lambda: _log(layout).count("stopping at state") >= k, f"interruption {k} to checkpoint", 60,
                  said=lambda: _log(layout))
    record = _finish_exact(cli, slurm_cluster, layout, n=LONG_N)
    log = _log(layout)
    assert log.count("stopping at state") >= 5 and log.count("resuming from checkpoint") >= 5, log
    assert record["attempt"] >= 6


def test_scancel_stops_the_task_for_good_and_resubmit_resumes(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                              cli) -> None:  # type: ignore[no-untyped-def]
    layout, job = _submitted_and_checkpointed(cli, slurm_cluster, tmp_path / "scancel")
    slurm(slurm_cluster, "scancel", f"{job}_0")  # SIGTERM, as on preemption: the element's state tells them apart
    report = wait_idle(cli, slurm_cluster, layout.root)
    assert partition_states(report)["failed"] == [0], report
    assert "CANCELLED" in " ".join(report["failed"]["0"]["evidence"]), report
    assert len(re.findall(r"pid \d+: attempt \d+:", _log(layout))) == 1  # not requeued
    assert "stopping at state" in _log(layout)  # it checkpointed on its way out
    assert "cancelled: stopped for good" in (layout.logs_dir / f"{job}_0.out").read_text()
    cli("resubmit", layout.root, env=_job_env(slurm_cluster), check=True)
    record = _finish_exact(cli, slurm_cluster, layout)
    assert record["resumed_from"] > 0 and record["attempt"] == 2


def test_an_administrators_requeue_is_a_clean_requeue(slurm_cluster: cluster.ClusterInfo, tmp_path: Path,
                                                      cli) -> None:  # type: ignore[no-untyped-def]
    layout, job = _submitted_and_checkpointed(cli, slurm_cluster, tmp_path / "admin requeue")
    slurm(slurm_cluster, "scontrol", "requeue", f"{job}_0")
    record = _finish_exact(cli, slurm_cluster, layout)
    assert record["resumed_from"] > 0 and record["attempt"] >= 2
    slurm_log = (layout.logs_dir / f"{job}_0.out").read_text()
    assert "Traceback" not in slurm_log and "stopping at state" in _log(layout), slurm_log
