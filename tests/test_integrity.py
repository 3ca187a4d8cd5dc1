"""Files the run trusts carry a checksum of their own content: every flipped byte of a manifest or a
result is refused in one line or changes nothing that is counted; a damaged result is moved aside
and counted again."""

from __future__ import annotations

from pathlib import Path

import pytest

from permenum.errors import UserError
from permenum.jobs.collect import collect
from permenum.jobs.local import pending_partitions
from permenum.jobs.task import run_task
from permenum.layout import RunLayout
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.records import load_manifest, read_result, scan_results
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
