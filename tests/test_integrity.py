"""Files the run trusts carry a checksum of their own content: every flipped byte of a manifest or a
result is refused in one line or changes nothing that is counted; a damaged result is moved aside
and counted again."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

import pytest

from permenum.errors import UserError
from permenum.jobs.ledger.collect import collect
from permenum.jobs.local import pending_partitions
from permenum.jobs.counting.task import run_task
from permenum.layout import RunLayout
from permenum.lock import run_lock
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.problems import StateBatch, get_problem
from permenum.problems.base import exact_sum
from permenum.records import load_manifest, read_result, write_manifest, write_result
from permenum.result_index import scan_results
from tests.conftest import published


def _flips(data: bytes) -> list[bytes]:
    """Every byte changed in turn (its lowest bit toggled; a digit's to another digit)."""
    return [data[:i] + bytes([data[i] ^ 1]) + data[i + 1:] for i in range(len(data))]


def _refused_in_one_line(exc: UserError) -> None:
    assert "\n" not in str(exc) and str(exc)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunLayout:
    layout = RunLayout(tmp_path_factory.mktemp("integrity") / "run")
    write_pool(layout, PoolSettings("nqueens", 9, 3, target_states=64))
    for i in range(3):
        run_task(layout, i)
    return layout


def test_a_manifest_is_parsed_once_a_process_but_never_served_stale(run: RunLayout, tmp_path: Path) -> None:
    """A process reads its manifest again and again (each task of `run`); it is served what the file holds
    now, also after an edit in place to the same size within the file system's clock tick."""
    copy = RunLayout(tmp_path / "copy")
    copy.root.mkdir()
    data = run.manifest.read_bytes()
    copy.manifest.write_bytes(data)
    first = load_manifest(copy)
    assert load_manifest(copy) is first  # the same bytes: parsed and verified once
    edited = data.replace(b'"n": 9', b'"n": 8', 1)
    assert len(edited) == len(data) and edited != data
    with copy.manifest.open("r+b") as fh:  # the same inode, size and (most likely) mtime
        fh.write(edited)
    with pytest.raises(UserError, match="damaged"):
        load_manifest(copy)
    write_manifest(copy, dataclasses.replace(first, run_id="f" * 32))
    assert load_manifest(copy).run_id == "f" * 32
    copy.manifest.write_bytes(data)
    assert load_manifest(copy) == first


def test_every_flipped_byte_of_the_manifest_is_refused_or_harmless(run: RunLayout, tmp_path: Path) -> None:
    original = load_manifest(run)
    data = run.manifest.read_bytes()
    copy = RunLayout(tmp_path / "copy")
    copy.root.mkdir()
    refused = 0
    for flipped in _flips(data):
        copy.manifest.write_bytes(flipped)
        try:
            manifest = load_manifest(copy)
        except UserError as exc:  # nothing else: no KeyError, no traceback
            _refused_in_one_line(exc)
            refused += 1
            continue
        assert manifest == original  # a flip the reader accepts changed nothing (JSON whitespace)
    assert refused > 0.9 * len(data)


def test_every_flipped_byte_of_a_result_is_refused_or_harmless(run: RunLayout, tmp_path: Path) -> None:
    path = run.result_file(1)
    original, data = read_result(path), path.read_bytes()
    target = tmp_path / "part-00001.json"
    refused = 0
    for flipped in _flips(data):
        target.write_bytes(flipped)
        try:
            record = read_result(target)
        except UserError as exc:
            _refused_in_one_line(exc)
            refused += 1
            continue
        assert record == original
    assert refused > 0.9 * len(data)


def test_a_damaged_result_is_reported_moved_aside_and_counted_again(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 10, 2, target_states=256))
    for i in range(2):
        run_task(layout, i)
    path = layout.result_file(1)
    text = path.read_text()
    path.write_text(text.replace('"states": ', '"states": 1', 1))  # a changed count, the seal left as it was
    manifest = load_manifest(layout)
    scan = scan_results(layout, manifest)
    assert set(scan.done) == {0} and "damaged" in scan.damaged[1]
    assert pending_partitions(layout) == [1]
    with pytest.raises(UserError, match="damaged results"):
        collect(layout)
    assert run_task(layout, 1).status == "accepted"
    assert [p.name.split(".bad-")[0] for p in layout.results_dir.glob("*.bad-*")] == ["part-00001.json"]
    assert collect(layout).total == published("nqueens_total", 10)


def test_the_results_index_vouches_only_for_the_files_it_verified(tmp_path: Path) -> None:
    """results/index.arrow keeps what a scan verified, by the sha256 of each result file's bytes: a flipped byte
    of it, another run's, or a result changed since are read as no index (every result verified again)."""
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 10, 3, target_states=256))
    for i in range(3):
        run_task(layout, i)
    manifest = load_manifest(layout)
    first = scan_results(layout, manifest)
    assert layout.results_index.exists() and list(first.done) == [0, 1, 2] and first.rows.num_rows == 3
    data = layout.results_index.read_bytes()
    for flipped in _flips(data)[::max(1, len(data) // 400)]:
        layout.results_index.write_bytes(flipped)
        scan = scan_results(layout, manifest)
        assert scan.rows.equals(first.rows) and not scan.damaged
        assert layout.results_index.read_bytes() == data  # healed: written again from the results
    other = RunLayout(tmp_path / "other")
    write_pool(other, PoolSettings("nqueens", 10, 3, target_states=256))
    run_task(other, 0)
    scan_results(other, load_manifest(other))
    layout.results_index.write_bytes(other.results_index.read_bytes())  # another run's index: not this one's
    assert scan_results(layout, manifest).rows.equals(first.rows)
    path = layout.result_file(1)  # a result changed after it was indexed is verified again, and refused
    path.write_text(path.read_text().replace('"states": ', '"states": 1', 1))
    scan = scan_results(layout, manifest)
    assert list(scan.done) == [0, 2] and "damaged" in scan.damaged[1] and scan.rows.column("partition").to_pylist() == [0, 2]
    assert collect(RunLayout(tmp_path / "other")).counted == [0]


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        layout = RunLayout(tmp_path / "run")
        write_pool(layout, PoolSettings("nqueens", 8, 2, target_states=64))
        run_task(layout, 0)
    finally:
        os.umask(old)
    for path in (layout.manifest, layout.partition_file(1), layout.result_file(0)):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path


def test_sums_of_counts_cannot_wrap() -> None:
    """Per-state counts near 2^63, weighted by 8, over more states than one block: numpy's uint64 sum
    wraps, the tally must not (and the result record and checkpoint keep Python ints)."""
    rng = np.random.default_rng(5)
    counts = rng.integers(1 << 62, (1 << 64) - 1, size=(1 << 23) + 1000, dtype=np.uint64)
    weights = rng.integers(1, 9, size=len(counts), dtype=np.uint8)
    expected_raw = sum(int(c) for c in counts[::1])
    assert exact_sum(counts) == expected_raw > 1 << 64
    sample = slice(0, 5000)
    assert exact_sum(counts[sample], weights[sample]) == sum(int(c) * int(w) for c, w in zip(counts[sample], weights[sample]))
    batch = StateBatch(np.zeros((len(counts), 0), np.uint8), weights)
    tally = get_problem("nqueens").tally(batch, counts, None, "edges")
    assert tally.raw == expected_raw and tally.weighted == exact_sum(counts, weights)
    assert int(np.sum(counts, dtype=np.uint64)) != expected_raw  # what the old tally gave


def test_sums_of_small_counts_take_one_pass_and_stay_exact() -> None:
    """The one-pass sum (no term or partial sum can wrap) against Python ints, at and past its bound."""
    rng = np.random.default_rng(6)
    for top in (1 << 20, (1 << 64) // (8 * 4096) - 1, (1 << 64) // (8 * 4096) + 1):  # past it: the halves
        counts = rng.integers(0, top, size=4096, dtype=np.uint64, endpoint=True)
        counts[0] = top  # the bound is reached: max x 8 x 4096 is just below / above 2^64
        weights = rng.integers(1, 9, size=len(counts), dtype=np.uint8)
        weights[0] = 8
        assert exact_sum(counts) == sum(int(c) for c in counts)
        assert exact_sum(counts, weights) == sum(int(c) * int(w) for c, w in zip(counts, weights))
    assert exact_sum(np.zeros(0, np.uint64), np.zeros(0, np.uint8)) == 0


def test_a_count_past_2_to_the_64_survives_the_records(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 8, 1, target_states=16))
    record = run_task(layout, 0).record
    huge = dataclasses.replace(record, weighted=3 << 70, raw=(3 << 67) + 1, nodes=1 << 80)
    layout.result_file(0).unlink()
    write_result(layout, huge)
    again = read_result(layout.result_file(0))
    assert (again.weighted, again.raw, again.nodes) == (3 << 70, (3 << 67) + 1, 1 << 80)
    ledger = collect(layout).ledger  # the ledger's decimal columns hold it too (uint64 crashed here)
    assert ledger.column("solutions").to_pylist() == [3 << 70] and ledger.column("nodes").to_pylist() == [1 << 80]


def test_a_count_past_2_to_the_64_goes_through_the_host_path_exact(tmp_path: Path) -> None:
    """Per-state uint64 counts near 2^64, as a kernel could leave them, through everything the host does
    with them: the weighted tally, the chunk sums, a checkpoint written and resumed, the result record and
    the ledger. The total must be Python's exact sum, far past 2^64."""
    from permenum.checkpoints import Checkpoint, load_checkpoint, save_checkpoint
    from permenum.jobs.counting.partial import ChunkLedger, Partial
    from permenum.jobs.counting.stream import StreamedPartition
    from permenum.poolgen.write import read_partition
    from permenum.solver.opencl import BatchCounts

    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 10, 1, symmetry="mirror", target_states=64))
    manifest, problem = load_manifest(layout), get_problem("nqueens")
    entry = manifest.partition(0)
    states = StreamedPartition(read_partition(layout, entry), problem.mask_names, "partition 0").take(0, entry.rows)
    assert len(states) > 8 and int(states.weight.max()) == 2  # mirror weights: the weighted sum doubles
    top = (1 << 64) - 1
    counts = np.array([top - 7 * i for i in range(len(states))], dtype=np.uint64)
    nodes = np.full(len(states), top, dtype=np.uint64)
    half = len(states) // 2

    def sums(lo: int, hi: int) -> Partial:
        out = BatchCounts(counts[lo:hi], nodes[lo:hi], kernel_seconds=1.0)
        tally = problem.tally(states.take(slice(lo, hi)), out.counts, None, manifest.symmetry)
        return Partial(tally.weighted, tally.raw, None, exact_sum(out.nodes), 1.0, None, 1)

    ledger = ChunkLedger(len(states), 0, Partial(classes=None, nodes=0), {})
    ledger.finish(half, len(states), sums(half, len(states)))  # the second chunk first: it waits beyond the prefix
    path = layout.checkpoint_file(0)
    save_checkpoint(path, Checkpoint(manifest.run_id, 0, entry.sha256, ledger.prefix_end, ledger.prefix.as_json(),
                                     1.0, 1, ledger.ahead_json(), ledger.open_json()))
    ckpt = load_checkpoint(path, manifest.run_id, 0, entry.sha256)
    resumed = ChunkLedger.resumed(len(states), ckpt.states_done, ckpt.sums, ckpt.ahead, ckpt.open)
    resumed.finish(0, half, sums(0, half))
    assert resumed.complete
    weights = [int(w) for w in states.weight]
    expected = sum(int(c) * w for c, w in zip(counts, weights))
    assert expected > 1 << 68 and resumed.prefix.weighted == expected
    assert resumed.prefix.raw == sum(int(c) for c in counts) and resumed.prefix.nodes == top * len(states)
    record = dataclasses.replace(run_task(layout, 0).record, weighted=resumed.prefix.weighted,
                                 raw=resumed.prefix.raw, nodes=resumed.prefix.nodes)
    layout.result_file(0).unlink()
    write_result(layout, record)
    assert read_result(layout.result_file(0)).weighted == expected
    collected = collect(layout)
    assert collected.total == expected and collected.ledger.column("solutions").to_pylist() == [expected]
    assert collected.ledger.column("nodes").to_pylist() == [top * len(states)]


def test_a_launch_too_long_for_exact_counters_is_refused() -> None:
    """Past WRAP_SECONDS of one launch a state's ulong could have wrapped: its counts are refused, not summed."""
    from permenum.solver.opencl import WRAP_SECONDS, BatchCounts, CounterBoundError

    assert 30 * 24 * 3600 < WRAP_SECONDS < 60 * 24 * 3600
    BatchCounts(np.zeros(1, np.uint64), None, WRAP_SECONDS * 0.999)
    with pytest.raises(CounterBoundError, match="could have passed 2\\^64"):
        BatchCounts(np.zeros(1, np.uint64), None, WRAP_SECONDS)


def test_a_run_id_that_could_break_a_script_is_refused(run: RunLayout, tmp_path: Path) -> None:
    copy = RunLayout(tmp_path / "copy")
    write_manifest(copy, dataclasses.replace(load_manifest(run), run_id="0" * 31 + "\ntouch /tmp/owned"))
    with pytest.raises(UserError, match="malformed manifest.*run_id"):
        load_manifest(copy)


def test_one_writer_at_a_time_per_run(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    layout = RunLayout(tmp_path / "run")
    layout.root.mkdir()
    with run_lock(layout, "pool"):  # another `pool`, `submit` or `resubmit` is at work on it
        busy = cli("pool", "nqueens", 8, layout.root)
        assert busy.returncode == 2 and busy.stderr.count("\n") == 1 and "is busy" in busy.stderr
        assert not layout.manifest.exists()
    cli("pool", "nqueens", 8, layout.root, check=True)  # the lock went with its holder
    with run_lock(layout, "submit"):
        for command in ("submit", "resubmit"):
            busy = cli(command, layout.root)
            assert busy.returncode == 2 and "is busy" in busy.stderr, busy.stderr


@contextmanager
def _mounted(*mount_args: str, target: Path) -> Iterator[None]:
    """A real mount (root only: the tests' SLURM cluster needs root too); unmounted afterwards."""
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", *mount_args, str(target)], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True, capture_output=True)


def _mounts_allowed(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.mkdir()
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", str(probe)], check=True)
    return ok


def test_a_finished_run_shared_read_only_is_still_reportable(run: RunLayout, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    if not _mounts_allowed(tmp_path):
        pytest.skip("needs mount (root): a read-only bind mount is the only read-only directory root cannot write")
    view = tmp_path / "shared"
    with _mounted("--bind", str(run.root), target=view):
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True, capture_output=True)
        proc = cli("collect", view)  # the totals print; the ledger it is for is not written: 74, not 0
        assert proc.returncode == 74 and f"total {published('nqueens_total', 9)} " in proc.stdout, proc.stderr
        assert proc.stderr.startswith("error: ledger not written: Read-only") and proc.stderr.count("\n") == 1
        for command in (("status", view), ("report", view)):
            proc = cli(*command)
            assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_a_full_disk_is_one_line_and_damages_nothing(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    if not _mounts_allowed(tmp_path):
        pytest.skip("needs mount (root) for a small tmpfs")
    disk = tmp_path / "disk"
    with _mounted("-t", "tmpfs", "-o", "size=256k", "tmpfs", target=disk):
        proc = cli("pool", "nqueens", 14, disk / "run", "-S", 200000)
        assert proc.returncode == 74 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("error: ") and "No space left on device" in proc.stderr
        assert not (disk / "run" / "manifest.json").exists()  # no pool: the manifest is written last
