"""Claims (jobs.counting.claims): a partition being counted by a live task is not started again by another executor,
a dead task's claim does not outlive it, and a partition finished meanwhile is not counted again."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from permenum.jobs.counting import claims
from permenum.jobs.counting.claims import Holder, PartitionClaimed, claim
from permenum.jobs.counting.task import run_task
from permenum.layout import RunLayout
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.task_options import TaskOptions
from tests.conftest import published

_HOLD = """
import sys, time
from permenum.jobs.counting.claims import claim
from permenum.layout import RunLayout
with claim(RunLayout(sys.argv[1]), int(sys.argv[2])):
    print("held", flush=True)
    time.sleep(600)
"""


def _holder(root: Path, partition: int) -> subprocess.Popen[str]:
    """Another process holding the partition's claim, as a live task does."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(root), str(partition)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_two_runs_of_one_directory_count_every_partition_once(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """The issue's reproduction: `run R &` then `run R`: nothing lands in results/duplicates."""
    run = tmp_path / "run"
    cli("pool", "nqueens", 16, "--symmetry", "none", run, "--num-partitions", 4, check=True)
    layout = RunLayout(run)
    first = subprocess.Popen([sys.executable, "-m", "permenum", "run", str(run), "--device", "cpu"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(p.stat().st_size for p in layout.claims_dir.glob("*.claim")):  # read, never locked: no race
        assert time.monotonic() < deadline and first.poll() is None, "the first run never claimed a partition"
        time.sleep(0.05)
    second = cli("run", run, "--device", "cpu")
    _, first_err = first.communicate(timeout=300)
    assert not (layout.results_dir / "duplicates").exists()
    assert "left to another executor" in second.stderr + first_err, (second.stderr, first_err)
    assert second.returncode in (0, 1) and "Traceback" not in second.stderr + first_err
    total = cli("collect", run, check=True)
    assert f"total {published('nqueens_total', 16)} " in total.stdout


def test_a_held_partition_is_left_to_its_holder_until_the_holder_dies(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 3, check=True)
    holder = _holder(run, 1)
    try:
        proc = cli("run", run, "--device", "cpu")
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert f"partition 1 left to another executor (pid {holder.pid} on " in proc.stderr
        assert proc.stdout.count("every partition is counted") == 0
        layout = RunLayout(run)
        assert [p.name for p in sorted(layout.results_dir.glob("part-*"))] == ["part-00000.json", "part-00002.json"]
        assert not layout.failure_file(1).exists()  # left, not failed
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    again = cli("run", run, "--device", "cpu", check=True)  # kill -9 ended the claim with its holder
    assert "left to another" not in again.stderr
    assert f"total {published('nqueens_total', 8)} " in cli("collect", run, check=True).stdout


_HOLD_THEN_FINISH = """
import shutil, sys
from permenum.jobs.counting.claims import claim
from permenum.layout import RunLayout
layout = RunLayout(sys.argv[1])
with claim(layout, int(sys.argv[2])):
    print("held", flush=True)
    sys.stdin.readline()
    layout.results_dir.mkdir(exist_ok=True)
    shutil.copy(sys.argv[3], layout.result_file(int(sys.argv[2])))  # its result, counted in a twin run
"""


def test_a_run_that_left_a_partition_to_another_exits_0_once_that_one_is_done(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """The other executor finished partition 1 while this run counted the rest: the run is complete."""
    run, twin = tmp_path / "run", tmp_path / "twin"
    cli("pool", "nqueens", 16, run, "--num-partitions", 3, check=True)
    shutil.copytree(run, twin)
    run_task(RunLayout(twin), 1, TaskOptions(device="cpu"))
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_THEN_FINISH, str(run), "1",
                               str(RunLayout(twin).result_file(1))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdin is not None and holder.stdout.readline() == "held\n"
    layout = RunLayout(run)
    proc = subprocess.Popen([sys.executable, "-m", "permenum", "run", str(run), "--device", "cpu"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(layout.claim_file(i).exists() and layout.claim_file(i).stat().st_size for i in (0, 2)):
        assert time.monotonic() < deadline and proc.poll() is None, "the run never claimed a partition"
        time.sleep(0.02)
    holder.stdin.write("go\n")
    holder.stdin.flush()
    assert holder.wait(timeout=60) == 0
    out, err = proc.communicate(timeout=300)
    assert "partition 1 left to another executor" in err
    assert proc.returncode == 0, err
    assert f"total {published('nqueens_total', 16)} " in cli("collect", run, check=True).stdout


@pytest.fixture
def done(tmp_path: Path) -> RunLayout:
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 8, 2))
    run_task(layout, 0, TaskOptions(device="cpu"))
    return layout


def test_a_partition_finished_meanwhile_is_not_counted_again_unless_forced(done: RunLayout) -> None:
    """A task whose partition was finished by another executor while it waited its turn stops at its claim."""
    with pytest.raises(PartitionClaimed, match="partition 0 was counted meanwhile by another executor"):
        run_task(done, 0, TaskOptions(device="cpu"))
    assert not (done.results_dir / "duplicates").exists()
    assert run_task(done, 0, TaskOptions(device="cpu"), force=True).status == "duplicate"


def test_a_claim_of_another_host_holds_while_its_heartbeat_goes_on(done: RunLayout, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where flock does not reach across hosts, the holder's heartbeat (the file's mtime) is the claim."""
    monkeypatch.setattr(claims, "STALE_SECONDS", 1.0)
    monkeypatch.setattr(claims, "_POLL_SECONDS", 0.05)
    path = done.claim_file(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(Holder("elsewhere", 4242, "77_1", "then").to_bytes())
    beating = threading.Event()

    def beat() -> None:
        while not beating.wait(0.1):
            os.utime(path)

    threading.Thread(target=beat, daemon=True).start()
    try:
        with pytest.raises(PartitionClaimed, match="partition 1 is being counted by pid 4242 on elsewhere, SLURM task 77_1"):
            with claim(done, 1):
                pass
        assert claims.claimed_elsewhere(done, [0, 1]) == {1: Holder("elsewhere", 4242, "77_1", "then").describe()}
    finally:
        beating.set()
    t0 = time.monotonic()
    with claim(done, 1):  # the heartbeat stood still: its holder is dead, the claim is taken
        now = Holder.parse(path.read_bytes())
        assert now is not None and (now.host, now.pid) == (socket.gethostname(), os.getpid())
    assert time.monotonic() - t0 >= 1.0
    assert path.read_bytes() == b""  # let go: names no holder
