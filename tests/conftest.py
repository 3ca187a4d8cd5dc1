"""Shared fixtures: published counts from ../shared/reference (the oracle), the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from permenum.known import known
from tests.slurm_fixture import slurm_cluster, wide_slurm_cluster  # noqa: F401  (re-exported fixtures)

SHARED_COUNTS = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "known_counts.json"


def published(series: str, n: int) -> int:
    """The published count, read from shared/reference when it is there, else the embedded copy."""
    if SHARED_COUNTS.exists():
        return int(json.loads(SHARED_COUNTS.read_text())[series][str(n)])
    value = known(series, n)
    assert value is not None
    return value


def run_cli(*args: str | os.PathLike[str], check: bool = False, timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``permenum`` command (same interpreter), capturing output."""
    cmd = [sys.executable, "-m", "permenum", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (scripts/test.sh runs a worker a core) every real-cluster test goes to one worker,
    in file order: they share the session's cluster and its CPUs, and some wait on its time limits."""
    for item in items:
        if item.get_closest_marker("slurm"):
            item.add_marker(pytest.mark.xdist_group("slurm"))


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli


@pytest.fixture(scope="session", autouse=True)
def fork_server() -> None:
    """The in-process flows' worker and device processes forked from a server that imported their modules once,
    as every counting command starts one (children.start_early): spawned afresh instead, each paid its
    interpreter and imports again (N-Queens 1-13 through run_local with two workers: 16.8 s, 8.2 s so)."""
    from permenum.cli.runner import WORKERS
    from permenum.jobs.counting.children import start_early

    start_early([WORKERS])
