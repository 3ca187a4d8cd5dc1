"""One-line errors (issue 38): pyarrow's multi-line messages folded, `run` on a read-only run directory exits
74 naming the write that failed, `submit` checks --device and --signal-seconds before anything is queued."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from permenum.layout import RunLayout
from permenum.records import PartitionEntry, load_manifest, write_manifest
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


def _reseal_partition(layout: RunLayout, damage: Callable[[bytes], bytes]) -> PartitionEntry:
    """Partition 0's file damaged by ``damage`` and its sha256 re-sealed in the manifest (what a pool written
    wrongly looks like: it passes its checksum, then does not parse); its new entry."""
    manifest = load_manifest(layout)
    path = layout.partition_file(0)
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)
    entry = dataclasses.replace(manifest.partitions[0], sha256=hashlib.sha256(damaged).hexdigest())
    write_manifest(layout, dataclasses.replace(manifest, partitions=(entry, *manifest.partitions[1:])))
    return entry


def test_a_multi_line_pyarrow_error_is_one_line(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A partition that matches its manifest's sha256 but does not parse (written damaged): one line."""
    run = tmp_path / "run"
    cli("pool", "nqueens", 10, run, "--num-partitions", 1, check=True)
    _reseal_partition(RunLayout(run), _multiline_damage)
    proc = cli("task", run, "--index", 0, "--device", "cpu")
    _one_line(proc, 2)
    assert "does not parse" in proc.stderr
    run_proc = cli("run", run, "--device", "cpu")
    failed = [line for line in run_proc.stderr.splitlines() if "partition 0 failed" in line]
    assert len(failed) == 1 and "does not parse" in failed[0] and "Deserializing" in failed[0]
    assert f"next: `permenum status {run}` says why, then `permenum run {run}` again" in run_proc.stdout


def test_a_cut_partition_resealed_is_one_line(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """Cut short (no footer: pyarrow fails where the file is opened, not in a row group) and re-sealed."""
    run = tmp_path / "run"
    cli("pool", "nqueens", 10, run, "--num-partitions", 1, check=True)
    _reseal_partition(RunLayout(run), lambda data: data[: len(data) // 2])
    proc = cli("task", run, "--index", 0, "--device", "cpu")
    _one_line(proc, 2)
    assert "partition 0 does not parse (ArrowInvalid: " in proc.stderr


@pytest.mark.parametrize("command", [("run",), ("task", "-i", "0")])
def test_a_read_only_run_directory_exits_74_naming_the_write(tmp_path: Path, cli, command: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    """The claim is the write that failed: named, not a temporary file, nor the failure record the task then
    cannot write either."""
    if not _mounts_allowed(tmp_path):
        pytest.skip("needs mount (root): a read-only bind mount is the only read-only directory root cannot write")
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 3, check=True)
    view = tmp_path / "shared"
    with _mounted("--bind", str(run), target=view):
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True, capture_output=True)
        proc = cli(command[0], view, *command[1:], "--device", "cpu")
        _one_line(proc, 74)
        assert "Read-only file system (claiming partition 0)" in proc.stderr and str(view / "claims") in proc.stderr
        assert ".tmp" not in proc.stderr and "error.json" not in proc.stderr
    assert not (run / "claims").exists() and not (run / "results").exists()
    assert not (run / "logs").exists() or not list((run / "logs").iterdir())


def test_a_full_disk_fails_run_and_collect_with_74_in_one_line(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A run directory on a full disk (a small tmpfs, filled): `run` exits 74 as `task` does, one error line
    naming the file and the partitions not counted; `collect` over a ledger left from before prints its
    totals but exits 74: a script that trusts 0 would read that old ledger."""
    if not _mounts_allowed(tmp_path):
        pytest.skip("needs mount (root) for a small tmpfs")
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 3, check=True)
    counted = tmp_path / "counted"
    shutil.copytree(run, counted)
    cli("run", counted, "--device", "cpu", check=True)
    cli("collect", counted, check=True)
    disk = tmp_path / "disk"
    with _mounted("-t", "tmpfs", "-o", "size=256k", "tmpfs", target=disk):
        shutil.copytree(run, disk / "run")
        shutil.copytree(counted, disk / "counted")
        with contextlib.suppress(OSError), open(disk / "filler", "wb", buffering=0) as fill:
            while True:
                fill.write(bytes(4096))
        proc = cli("run", disk / "run", "--device", "cpu")
        last = proc.stderr.splitlines()[-1]
        assert proc.returncode == 74 and last.startswith("error: No space left on device"), proc.stderr
        assert "partitions 0-2 not counted" in last and str(disk / "run") in last
        assert "failed" not in proc.stderr and "Traceback" not in proc.stderr
        proc = cli("collect", disk / "counted")
        assert (disk / "counted" / "ledger.parquet").exists()  # the old one, which a 0 would vouch for
        assert proc.returncode == 74 and "total 92 " in proc.stdout, proc.stderr
        assert proc.stderr.startswith("error: ledger not written: No space left on device") and proc.stderr.count("\n") == 1


def test_an_output_file_in_a_missing_folder_is_refused_not_made(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`report --plot` and `arrays --out` name a file the user chose: a mistyped folder is one line, exit 2,
    and no folder is made for it."""
    run = tmp_path / "run"
    cli("pool", "costas", 7, run, "--num-partitions", 2, check=True)
    cli("run", run, "--device", "cpu", check=True)
    for command in (("report", run, "--plot"), ("arrays", run, "--out")):
        missing = tmp_path / f"no {command[0]}" / "deeper"
        proc = cli(*command, missing / "x.png")
        _one_line(proc, 2)
        assert f"the folder {missing} does not exist" in proc.stderr
        assert not missing.parent.exists()


@pytest.mark.parametrize("args, said", [
    (("--device", "gpuu"), "unknown device 'gpuu'"),
    (("--device", "0:x/2"), "unknown device '0:x/2'"),
    (("--signal-seconds", "70000"), "--signal-seconds must be 1 to 65535"),
    (("--time", "2", "--signal-seconds", "120"), "--signal-seconds 120 is not less than --time 2"),
])
def test_submit_refuses_what_every_task_would_fail_on(tmp_path: Path, cli, args: tuple[str, ...], said: str) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 2, check=True)
    proc = cli("submit", run, "--dry-run", *args)
    _one_line(proc, 2)
    assert said in proc.stderr


def test_verify_reflect_of_a_partition_that_does_not_parse_is_one_line_and_leaves_no_verification(
        tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A counted partition whose file was damaged and its sha256 re-sealed (manifest and result): --reflect
    reads it to write its mirror image; one line, exit 2, and no empty ``verify/v-*`` left behind."""
    from permenum.records import read_result, write_result

    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 2, "--symmetry", "mirror", check=True)
    cli("run", run, "--device", "cpu", check=True)
    layout = RunLayout(run)
    entry = _reseal_partition(layout, _multiline_damage)
    record = read_result(layout.result_file(0))
    layout.result_file(0).unlink()
    write_result(layout, dataclasses.replace(record, pool_sha256=entry.sha256))
    proc = cli("verify", run, "--only", "0-1", "--reflect", "-k", "skip-all")
    _one_line(proc, 2)
    assert "partition 0 does not parse" in proc.stderr and "Deserializing" in proc.stderr
    assert not (run / "verify").exists()


def _pyarrow_multi_line_error() -> OSError:
    """pyarrow's own two-line OSError ("Couldn't deserialize thrift: ...\nDeserializing page header failed."),
    raised by reading bytes damaged where only a page fails."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"x": list(range(1000))}), sink, compression="none")
    try:
        pq.read_table(pa.BufferReader(_multiline_damage(sink.getvalue().to_pybytes())))
    except OSError as exc:
        assert "\n" in str(exc).strip()
        return exc
    raise AssertionError("the damaged bytes parsed")


def test_main_prints_a_multi_line_os_error_on_one_line(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """The last resort for an OSError nothing else caught (exit 74): still one line."""
    from permenum.cli import app

    def fails(**_: object) -> None:
        raise _pyarrow_multi_line_error()

    monkeypatch.setattr(app.cli, "main", fails)
    monkeypatch.setattr("sys.argv", ["permenum", "status"])
    with pytest.raises(SystemExit) as exited:
        app.main()
    stderr = capsys.readouterr().err
    assert exited.value.code == 74 and stderr.startswith("error: ") and stderr.count("\n") == 1, stderr
    assert "Deserializing page header failed." in stderr


def test_a_worker_reports_a_multi_line_failure_on_one_line(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What a local worker reports of a failed partition is printed as `partition N failed: ...`: one line."""
    from permenum.jobs import local
    from permenum.task_options import TaskOptions

    def fails(*_: object, **__: object) -> None:
        raise _pyarrow_multi_line_error()

    monkeypatch.setattr(local, "run_task", fails)
    todo, reports = [0], []
    local._work(RunLayout(tmp_path), TaskOptions(), lambda: todo.pop() if todo else None, None,
                lambda kind, i, detail: reports.append((kind, i, detail)))
    ((kind, partition, why),) = reports
    assert (kind, partition) == ("failed", 0) and "\n" not in why
    assert why.startswith("OSError: Couldn't deserialize thrift") and "Deserializing page header failed." in why


@pytest.mark.parametrize("args, said", [
    (("--device", "bogus"), "unknown device 'bogus'"),
    (("--kernel", "dfs"), "kernel 'dfs' has no symmetry 'edges'"),
])
def test_submit_names_a_bad_task_option_before_asking_slurm(tmp_path: Path, cli, args: tuple[str, ...], said: str) -> None:  # type: ignore[no-untyped-def]
    """Where SLURM is unreachable (no scontrol on PATH), a bad --device or --kernel is still the error shown."""
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 2, check=True)
    nowhere = tmp_path / "no-slurm"
    nowhere.mkdir()
    proc = cli("submit", run, *args, env={"PATH": str(nowhere)})
    _one_line(proc, 2)
    assert said in proc.stderr and "scontrol" not in proc.stderr
