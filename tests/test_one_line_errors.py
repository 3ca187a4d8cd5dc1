"""One-line errors (issue 38): pyarrow's multi-line messages folded, `run` on a read-only run directory exits
74 naming the write that failed, `submit` checks --device and --signal-seconds before anything is queued."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from permenum.layout import RunLayout
from permenum.records import load_manifest, write_manifest
from tests.test_integrity import _mounted, _mounts_allowed


def _one_line(proc: subprocess.CompletedProcess[str], code: int) -> None:
    assert proc.returncode == code and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def _multiline_damage(data: bytes) -> bytes:
    """``data`` with one bit flipped where pyarrow opens the file but fails a row group in several lines."""
    for offset in range(4, len(data) - 8):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[offset] ^= 1 << bit
            try:
                f = pq.ParquetFile(pa.BufferReader(bytes(damaged)))
            except Exception:  # noqa: BLE001 - the footer: not what this test wants
                continue
            try:
                for g in range(f.num_row_groups):
                    f.read_row_group(g)
            except Exception as exc:  # noqa: BLE001
                if "\n" in str(exc).strip():
                    return bytes(damaged)
    raise AssertionError("no flip gives a multi-line pyarrow error")


def test_a_multi_line_pyarrow_error_is_one_line(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A partition that matches its manifest's sha256 but does not parse (written damaged): one line."""
    run = tmp_path / "run"
    cli("pool", "nqueens", 10, "--out", run, "-P", 1, check=True)
    layout = RunLayout(run)
    manifest = load_manifest(layout)
    path = layout.partition_file(0)
    damaged = _multiline_damage(path.read_bytes())
    path.write_bytes(damaged)
    entry = dataclasses.replace(manifest.partitions[0], sha256=hashlib.sha256(damaged).hexdigest())
    write_manifest(layout, dataclasses.replace(manifest, partitions=(entry,)))
    proc = cli("task", run, "--shard", 0, "--device", "cpu")
    _one_line(proc, 2)
    assert "does not parse" in proc.stderr
    run_proc = cli("run", run, "--device", "cpu")
    failed = [line for line in run_proc.stderr.splitlines() if "partition 0 failed" in line]
    assert len(failed) == 1 and "does not parse" in failed[0] and "Deserializing" in failed[0]
    assert f"next: `permenum status {run}` says why, then `permenum run {run}` again" in run_proc.stdout


def test_run_on_a_read_only_run_directory_exits_74_naming_the_write(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    if not _mounts_allowed(tmp_path):
        pytest.skip("needs mount (root): a read-only bind mount is the only read-only directory root cannot write")
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, "--out", run, "-P", 3, check=True)
    view = tmp_path / "shared"
    with _mounted("--bind", str(run), target=view):
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True, capture_output=True)
        proc = cli("run", view, "--device", "cpu")
        _one_line(proc, 74)
        assert "Read-only file system (claiming partition 0)" in proc.stderr and str(view / "claims") in proc.stderr
        assert ".tmp" not in proc.stderr
    assert not (run / "claims").exists() and not (run / "results").exists()


@pytest.mark.parametrize("args, said", [
    (("--device", "gpuu"), "unknown device 'gpuu'"),
    (("--device", "0:x/2"), "unknown device '0:x/2'"),
    (("--signal-seconds", "70000"), "--signal-seconds must be 1 to 65535"),
    (("--time", "2", "--signal-seconds", "120"), "--signal-seconds 120 is not less than --time 2"),
])
def test_submit_refuses_what_every_task_would_fail_on(tmp_path: Path, cli, args: tuple[str, ...], said: str) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, "--out", run, "-P", 2, check=True)
    proc = cli("submit", run, "--dry-run", *args)
    _one_line(proc, 2)
    assert said in proc.stderr
