"""Checkpoints without a scheduler: verified on load, bad ones rejected, resumes exact; Ctrl-C of `run`."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from permenum.checkpoints import CheckpointError, load_checkpoint
from rich.console import Console

from permenum.jobs.ledger.collect import collect
from permenum.jobs.local import run_local
from permenum.jobs.counting.claims import PartitionClaimed
from permenum.jobs.counting.task import TaskInterrupted, run_task
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.records import ResultConflict, load_manifest, read_result, write_result
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.ranges import compact_ranges
from permenum.words import plural
from tests.conftest import published


def _pool(root: Path, n: int = 13, seed: int = 0) -> RunLayout:
    layout = RunLayout(root)
    write_pool(layout, PoolSettings("nqueens", n, 1, target_states=1 << 15, seed=seed))
    return layout


def _interrupt_after_first_chunk(layout: RunLayout) -> int:
    with pytest.raises(TaskInterrupted) as info:
        run_task(layout, 0, TaskOptions(max_seconds=0))
    assert 0 < info.value.states_done < info.value.total
    return info.value.states_done


def test_resume_from_checkpoint_is_exact_and_skips_done_states(tmp_path: Path) -> None:
    layout = _pool(tmp_path / "a")
    offset = _interrupt_after_first_chunk(layout)
    m = load_manifest(layout)
    ckpt = load_checkpoint(layout.checkpoint_file(0), m.run_id, 0, m.partition(0).sha256)
    assert ckpt.states_done == offset and ckpt.sums["raw"] > 0
    record = run_task(layout, 0).record
    assert record.resumed_from == offset and record.states_this_attempt == record.states - offset
    assert record.attempt == 2
    # what counted the first attempt's states is carried by the checkpoint into the result
    (first,) = read_result(layout.result_file(0)).earlier
    assert first.attempt == 1 and first.host and first.version
    assert sum(d.states for d in first.devices) == offset and all(d.builds and d.model for d in first.devices)
    assert set(ckpt.counted_by[0]) == {"attempt", "host", "version", "devices"}
    assert collect(layout).total == published("nqueens_total", 13)
    assert not layout.checkpoint_file(0).exists()  # done: the result is the truth now
    assert f"resuming from checkpoint at state {offset}" in layout.task_log(0).read_text()


def test_corrupted_and_foreign_checkpoints_are_rejected(tmp_path: Path) -> None:
    a, b = _pool(tmp_path / "a"), _pool(tmp_path / "b", seed=1)
    _interrupt_after_first_chunk(a)
    path = a.checkpoint_file(0)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x40
    path.write_bytes(bytes(data))
    m = load_manifest(a)
    with pytest.raises(CheckpointError, match="checksum"):
        load_checkpoint(path, m.run_id, 0, m.partition(0).sha256)
    record = run_task(a, 0).record
    assert record.resumed_from == 0 and record.checkpoint_rejected and "checksum" in record.checkpoint_rejected
    assert list(path.parent.glob("part-00000.ckpt.bad-*"))  # moved aside, not deleted
    assert collect(a).total == published("nqueens_total", 13)

    _interrupt_after_first_chunk(b)
    a.checkpoint_file(0).write_bytes(b.checkpoint_file(0).read_bytes())  # a checkpoint from another run
    (a.results_dir / "part-00000.json").unlink()
    record = run_task(a, 0).record
    assert record.resumed_from == 0 and record.checkpoint_rejected and "belongs to run" in record.checkpoint_rejected
    assert collect(a).total == published("nqueens_total", 13)


def test_second_result_is_a_duplicate_or_a_conflict(tmp_path: Path) -> None:
    layout = _pool(tmp_path / "a", n=10)
    first = run_task(layout, 0)
    result = layout.result_file(0)
    accepted = result.read_bytes()
    result.rename(result.with_suffix(".keep"))
    again = run_task(layout, 0)
    assert again.status == "accepted"
    result.unlink()
    result.with_suffix(".keep").rename(result)
    with pytest.raises(PartitionClaimed, match="counted meanwhile"):  # done: not counted twice unless forced
        run_task(layout, 0)
    assert run_task(layout, 0, force=True).status == "duplicate"
    assert result.read_bytes() == accepted and first.record.attempt == 1
    # an attempt that really counted otherwise (a sound record with other numbers): a conflict, both kept
    other = read_result(result)
    result.unlink()
    write_result(layout, dataclasses.replace(other, weighted=other.weighted + 1))
    with pytest.raises(ResultConflict, match="found"):
        run_task(layout, 0, force=True)
    assert list((layout.results_dir / "duplicates").glob("*.json"))


def test_ctrl_c_of_local_run_resumes_without_recomputing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    layout = RunLayout(run)
    write_pool(layout, PoolSettings("nqueens", 16, 2, target_states=1 << 16))
    cmd = [sys.executable, "-m", "permenum", "run", str(run), "--chunk-seconds", "0.4"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(layout.checkpoints_dir.glob("*.ckpt")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 75, err
    assert "run it again" in err or "again to resume" in err
    stopped = {int(p.name[5:10]) for p in layout.checkpoints_dir.glob("*.ckpt")}
    assert stopped, "a partition should have been checkpointed mid-way"
    named = f"{plural(len(stopped), 'partition', False)} {compact_ranges(sorted(stopped))} checkpointed"
    assert named in err, err  # only those that were (0-1)
    done_before = {i for i in range(2) if layout.result_file(i).exists()}
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=os.environ)
    assert rerun.returncode == 0, rerun.stderr
    for i in range(2):
        record = json.loads(layout.result_file(i).read_text())
        if i in stopped:
            assert record["resumed_from"] > 0 and record["attempt"] == 2
            assert record["states_this_attempt"] == record["states"] - record["resumed_from"]
        elif i in done_before:
            assert record["attempt"] == 1
    assert collect(layout).total == published("nqueens_total", 16)


def _holds_usr1_unhandled(pid: int) -> bool:
    """Whether the process's main thread blocks SIGUSR1 while no handler of its own catches it (its SigBlk and
    SigCgt in /proc): permenum.launch's hold, before the command's handler is in place."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    masks = {line.split(":")[0]: int(line.split()[1], 16) for line in status.splitlines()
             if line.startswith(("SigBlk:", "SigCgt:"))}
    bit = 1 << (signal.SIGUSR1 - 1)
    return bool(masks.get("SigBlk", 0) & bit) and not masks.get("SigCgt", 0) & bit


def test_a_signal_in_the_commands_first_instant_stops_the_task_cleanly(tmp_path: Path) -> None:
    """SLURM may signal a (re)started element before `permenum` has imported its libraries: the
    installed command holds the signal back until its handler is in place (permenum.launch). Before the
    interpreter runs that line, nothing in the process can: the array script ignores USR1 then (`trap ''
    USR1`, slurm/script.py); so the signal goes once the hold is seen, and then later, while the libraries
    import (0.4-0.7 s). A fixed 0.1 s after the start once came before the interpreter's first line under the
    whole suite's load (killed, -10)."""
    layout = _pool(tmp_path / "a", n=12)
    command = Path(sys.executable).with_name("permenum")  # the console script, as the batch script runs it
    for delay in (0.0, 0.2):
        proc = subprocess.Popen([str(command), "task", str(layout.root), "--index", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not (held := _holds_usr1_unhandled(proc.pid)) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert held, "the command never held USR1 back before its handler"  # it ended, or 30 s passed
        time.sleep(delay)
        proc.send_signal(signal.SIGUSR1)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 75), (delay, proc.returncode, err)  # never killed by the signal (-10)
    assert collect(layout).total == published("nqueens_total", 12) or not layout.result_file(0).exists()


def test_local_progress_counts_states_and_reaches_the_total(tmp_path: Path) -> None:
    """The local executor's bar advances by the states of every chunk (its ETA counts down inside long
    partitions), starts at the checkpointed states and ends at the pool's total."""
    layout = _pool(tmp_path / "a")
    offset = _interrupt_after_first_chunk(layout)
    chunks: list[int] = []
    run_task(layout, 0, TaskOptions(chunk_seconds=0.05), on_chunk=chunks.append)
    total = load_manifest(layout).total_states
    assert sum(chunks) == total - offset
    other = _pool(tmp_path / "b", n=12)
    screen = io.StringIO()
    run_local(other, 1, TaskOptions(chunk_seconds=0.05), console=Console(file=screen, width=200, force_terminal=False))
    states = load_manifest(other).total_states
    assert f"{states:,}/{states:,} states, 1/1 partitions" in screen.getvalue()


@pytest.mark.parametrize("problem, n, kernel", [("nqueens", 14, None), ("costas", 11, None), ("costas", 11, "dfs")])
def test_refined_tasks_interrupted_after_every_chunk_stay_exact(tmp_path: Path, problem: str, n: int,
                                                                kernel: str | None) -> None:
    """A coarse pool (fewer states than the device's launch wants) is refined chunk by chunk in the task
    (jobs.counting.refine); stopped after every launch -- inside a chunk counted in slices (it stays open in the
    checkpoint, refined again to its depth on resume), or after a chunk, when a chunk claimed and refined
    ahead is dropped -- and resumed each time, it still counts every fine state exactly once (Costas with
    the CPU's default and with fc, the GPU's, whose builds depend on the refined depth)."""
    layout = RunLayout(tmp_path / problem)
    write_pool(layout, PoolSettings(problem, n, 1, target_states=24, seed=1))
    attempts = 0
    while not layout.result_file(0).exists():
        attempts += 1
        try:  # tiny chunks and slices, each attempt stopped after one launch; then chunks of the usual size, still
            # stopped after each, so that the last ends the partition while a stop is asked (the rest in tiny
            # chunks was 85% of this test's time: N-Queens 14, 15 of 17.6 s)
            run_task(layout, 0, TaskOptions(kernel=kernel, max_seconds=0, chunk_seconds=1e-4 if attempts <= 80 else 60))
        except TaskInterrupted:
            pass
        assert attempts <= 90
    log = layout.task_log(0).read_text()
    assert "refined to" in log and attempts >= 3 and log.count("resuming from checkpoint") == attempts - 1
    assert "stopped after" in log and "refined states counted" in log  # stopped inside chunks, resumed there
    c = collect(layout)
    assert c.total == published(f"{problem}_total", n)
    assert problem == "nqueens" or c.classes == published("costas_classes", n)
