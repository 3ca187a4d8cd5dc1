"""`permenum status` on a local run (never submitted): results, error records and checkpoints only, no
scheduler asked, so it works where SLURM is not configured. A submitted run still asks SLURM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from permenum.layout import RunLayout
from permenum.slurm.status import NOT_ASKED, gather, was_submitted


@pytest.fixture
def run(tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[no-untyped-def]
    """An N-Queens 8 pool of 3 partitions, partition 0 done; no SLURM_CONF, so any SLURM query would fail."""
    monkeypatch.delenv("SLURM_CONF", raising=False)
    root = tmp_path / "local 'run' \"q8\""
    cli("pool", "nqueens", 8, root, "--num-partitions", 3, check=True)
    cli("task", root, "--index", 0, check=True)
    return root


def _json(cli, root: Path) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    proc = cli("status", root, "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == (1 if report["states"]["failed"]["partitions"] else 0), proc.stderr
    return report


def test_local_run_asks_no_scheduler(run: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert not was_submitted(RunLayout(run))
    report = _json(cli, run)
    assert {s: v["partitions"] for s, v in report["states"].items()} == {
        "done": [0], "running": [], "pending": [], "failed": [], "missing": [1, 2]}
    assert report["backend"] == "none" and report["scheduler_asked"] is False
    assert report["sources"]["scheduler"] == NOT_ASKED and "squeue" not in report["sources"]
    assert 0 < report["progress"]["states_done"] < report["progress"]["states_total"]
    human = cli("status", run, check=True).stdout
    assert f"scheduler: {NOT_ASKED}" in human.splitlines()[0] and "backend: none" in human
    assert any(line.split()[:3] == ["missing", "2", "1-2"] for line in human.splitlines()), human


def test_failure_record_makes_a_local_partition_failed(run: Path, cli) -> None:  # type: ignore[no-untyped-def]
    part = run / "pool" / "part-00001.parquet"
    part.write_bytes(part.read_bytes()[:-64] + b"\0" * 64)  # the task's checksum check fails for real
    assert cli("task", run, "--index", 1).returncode != 0
    report = _json(cli, run)
    assert report["states"]["failed"]["partitions"] == [1] and report["states"]["missing"]["partitions"] == [2]
    [why] = report["failed"]["1"]["evidence"]
    assert why.startswith("task error: ") and "corrupted" in why
    human = cli("status", run).stdout
    assert "failed 1:" in human and "corrupted" in human


def test_gather_without_backend_is_the_local_view(run: Path) -> None:
    report = gather(RunLayout(run), None)
    assert not report.scheduler_asked and report.backend == "none" and report.states["done"] == [0]


def test_a_submitted_run_still_asks_slurm(run: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    RunLayout(run).submissions.touch()
    no_slurm = tmp_path / "empty bin"
    no_slurm.mkdir()
    proc = cli("status", run, env={"PATH": str(no_slurm)})  # no squeue to be found: proof that it was asked
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "squeue" in proc.stderr, proc.stderr


def test_a_damaged_result_is_reported_as_failed(run: Path, cli) -> None:  # type: ignore[no-untyped-def]
    result = RunLayout(run).result_file(0)
    result.write_bytes(result.read_bytes()[:-40])  # truncated
    report = _json(cli, run)
    assert report["states"]["done"]["partitions"] == [] and report["states"]["failed"]["partitions"] == [0]
    [why] = report["failed"]["0"]["evidence"]
    assert why.startswith("result damaged: ") and "unreadable result" in why
    assert cli("collect", run).returncode == 2  # one line, naming the damaged partition


def test_a_done_partition_is_not_counted_again_unless_forced(run: Path, cli) -> None:  # type: ignore[no-untyped-def]
    again = cli("task", run, "--index", 0, check=True)
    assert "is done already" in again.stdout and not (RunLayout(run).results_dir / "duplicates").exists()
    forced = cli("task", run, "--index", 0, "--force", check=True)
    assert "[duplicate, attempt 2, resumed from state 0]" in forced.stdout  # rich's markup does not eat it


def test_a_local_run_in_flight_shows_its_claimed_partitions_running(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`status` reads the claims that `run` takes (jobs.counting.claims): while it counts, the partitions its tasks
    hold are "running (local)", not missing. N-Queens 16 without symmetry in 2 partitions: about 3.5 s of
    kernel each on PoCL here (2 cores)."""
    import subprocess
    import sys
    import time

    root = tmp_path / "in flight"
    cli("pool", "nqueens", 16, root, "--symmetry", "none", "--num-partitions", 2, check=True)
    layout = RunLayout(root)
    proc = subprocess.Popen([sys.executable, "-m", "permenum", "run", str(root), "--chunk-seconds", "0.3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[tuple[list[int], str]] = []
    try:
        while proc.poll() is None and not seen:
            report = _json(cli, root)
            running = report["states"]["running"]["partitions"]
            if running:
                human = cli("status", root, check=True).stdout
                seen.append((running, human))
                assert set(running) <= {0, 1} and set(running).isdisjoint(report["states"]["missing"]["partitions"])
                assert report["running_local"] == running
                assert all(layout.claim_file(i).stat().st_size for i in running)  # a holder is named
            time.sleep(0.2)  # leave the run its cores
    finally:
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert seen, "status never showed a partition running while `run` counted"
    [(running, human)] = seen
    assert any(line.split()[:2] == ["running", str(len(running))] and line.rstrip().endswith("(local)")
               or "(local" in line and line.startswith("running") for line in human.splitlines()), human
    report = _json(cli, root)
    assert report["states"]["done"]["partitions"] == [0, 1] and report["running_local"] == []
