"""Shared fixtures: published counts from ../shared/reference (the oracle), the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from permenum.known import known
from tests.command_fork import run_command
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
    """Run the real ``permenum`` command (same interpreter), capturing output, in a process of its own forked
    from this test process's command server (tests/command_fork.py)."""
    proc = run_command([*map(str, args)], {**os.environ, **(env or {})}, timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{proc.args} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


#: The real-cluster tests that wait on requeues and time limits (about two thirds of the real-cluster tests'
#: time): a group of their own, on a worker and a cluster of their own.
REQUEUE_FILES = ("test_requeue_slurm.py", "test_claims_slurm.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (scripts/test.sh) the real-cluster tests form two groups, those of REQUEUE_FILES and
    the rest, each kept whole on one worker, in file order, with that worker's session cluster; xdist deals
    the groups like any other work, so they run side by side (as in every run here; not guaranteed). They
    mostly wait on SLURM: one after another they were 15 of the whole suite's 20 minutes on two cores."""
    for item in items:
        if item.get_closest_marker("slurm"):
            group = "slurm-requeue" if item.path.name in REQUEUE_FILES else "slurm"
            item.add_marker(pytest.mark.xdist_group(group))


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
