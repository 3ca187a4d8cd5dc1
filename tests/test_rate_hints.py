"""Rate hints (jobs.counting.rate_hints): a task in a process of its own starts at the rate the run's earlier tasks
measured on its device model instead of probing with small first chunks; a damaged file costs nothing."""

from __future__ import annotations

import json
from pathlib import Path

from permenum.jobs.ledger.collect import collect
from permenum.jobs.counting.rate_hints import read_rate_hints
from permenum.jobs.counting.task import run_task
from permenum.layout import RunLayout
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.records import read_result
from tests.conftest import published


def _pool(root: Path) -> RunLayout:
    layout = RunLayout(root)
    write_pool(layout, PoolSettings("nqueens", 14, 4, target_states=1 << 15, seed=0))
    return layout


def test_a_task_starts_at_its_predecessors_rate(tmp_path: Path) -> None:
    layout = _pool(tmp_path / "run")
    first = run_task(layout, 0).record
    hints = read_rate_hints(layout)
    assert len(hints) == 1 and next(iter(hints.values())) > 0
    assert first.chunks > 1  # no rate known: the device was probed with small chunks first
    later = [run_task(layout, i).record for i in (1, 2, 3)]
    assert [r.chunks for r in later] == [1, 1, 1]  # the whole partition is far below half the chunk bound
    assert collect(layout).total == published("nqueens_total", 14)


def test_a_damaged_hint_file_is_ignored(tmp_path: Path) -> None:
    layout = _pool(tmp_path / "run")
    for junk in (b"\x00\xff not json", b"[1, 2]", json.dumps({"x|default|counts": "fast", "y": -3.0}).encode()):
        layout.rate_hints.write_bytes(junk)
        assert read_rate_hints(layout) == {}
    run_task(layout, 0)
    assert read_result(layout.result_file(0)).chunks > 1  # probed as if no file were there
    assert all(v > 0 for v in json.loads(layout.rate_hints.read_text()).values())  # and the file replaced


def test_hints_past_a_float_or_nested_deep_are_ignored(tmp_path: Path) -> None:
    layout = _pool(tmp_path / "run")
    for junk in ('{"k|default|counts": 1' + "0" * 400 + "}", "[" * 100_000 + "]" * 100_000):
        layout.rate_hints.write_text(junk)
        assert read_rate_hints(layout) == {}
    assert run_task(layout, 0).record.chunks > 1
