"""The suite's commands forked from a server (tests/command_fork.py) behave as the command run afresh: the same
output and exit status, the caller's environment, working directory and umask, a timeout that kills."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.command_fork import run_command


def _fresh(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "permenum", *args], capture_output=True, text=True, timeout=300)


def test_a_forked_command_says_and_exits_as_one_run_afresh(tmp_path: Path) -> None:
    for args in (["--version"], ["status", str(tmp_path / "nothing")], ["enumerate", "nqueens", "-3"]):
        forked, fresh = run_command(args, os.environ, 300), _fresh(args)
        assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr), args
    assert run_command(["status", str(tmp_path / "nothing")], os.environ, 300).returncode == 2


def test_a_forked_command_counts_in_the_callers_directory_environment_and_umask(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    old = os.umask(0o077)
    try:
        done = run_command(["enumerate", "nqueens", "8", "here"], {**os.environ, "COLUMNS": "61"}, 300)
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    assert "published count 92" in done.stdout
    manifest = tmp_path / "here" / "manifest.json"
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o600  # the caller's umask, not the server's
    assert max(len(line) for line in done.stderr.splitlines()) <= 61  # the progress bar read COLUMNS


def test_a_forked_command_past_its_timeout_is_killed(tmp_path: Path) -> None:
    """Killed, its claims die with it: a second run counts every partition itself (were the first still
    counting, its partitions would be left to it and the second would exit incomplete)."""
    run = tmp_path / "run"
    run_command(["pool", "nqueens", "15", str(run)], os.environ, 300)
    with pytest.raises(subprocess.TimeoutExpired):
        run_command(["run", str(run)], os.environ, 0.5)
    again = run_command(["run", str(run)], os.environ, 300)
    assert again.returncode == 0 and "left to" not in again.stderr + again.stdout, again.stderr
    collected = run_command(["collect", str(run)], os.environ, 300)
    assert collected.returncode == 0 and "published count 2279184" in collected.stdout, collected.stdout
