"""Helpers shared by the tests that drive the real single-node cluster (bounded waits, status as JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from permenum.slurm import cluster

JOB_DEADLINE = 90.0


def slurm(info: cluster.ClusterInfo, *args: str) -> str:
    proc = subprocess.run(list(args), env={**os.environ, **info.env}, capture_output=True, text=True, timeout=30,
                          check=False)
    assert proc.returncode == 0, f"{args} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def status(cli, info: cluster.ClusterInfo, run: Path) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    proc = cli("status", run, "--json", env=info.env)
    assert proc.returncode in (0, 1), proc.stderr  # 1: some partition failed
    report = json.loads(proc.stdout)
    assert (proc.returncode == 1) == bool(report["states"]["failed"]["partitions"])
    return report


def partition_states(report: dict[str, Any]) -> dict[str, list[int]]:
    return {s: v["partitions"] for s, v in report["states"].items()}


def wait_idle(cli, info: cluster.ClusterInfo, run: Path, deadline_s: float = JOB_DEADLINE) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Poll `permenum status` until none of the run's partitions is pending or running under SLURM (bounded): a
    partition a local process holds (`running_local`) is no SLURM task's."""
    deadline = time.monotonic() + deadline_s
    while True:
        report = status(cli, info, run)
        states = partition_states(report)
        if not states["pending"] and not set(states["running"]) - set(report.get("running_local", [])):
            return report
        if time.monotonic() > deadline:
            pytest.fail(f"still queued after {deadline_s}s: {states}\n{slurm(info, 'squeue', '-a')}")
        time.sleep(0.5)


def submissions(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "submissions.jsonl").read_text().splitlines()]
