"""A finished Costas run's own evidence, printed by `collect`: every stored array checked, classes x orbit
sizes = the total, every Welch / Lempel-Golomb array of the order present; a missing class is caught."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from permenum.jobs.counting.solutions import read_solutions, write_arrays
from permenum.layout import RunLayout
from permenum.problems.costas_constructions import welch_arrays
from permenum.problems.costas_symmetry import class_share, is_costas, representative, symmetries
from permenum.records import read_result, write_result
from tests.conftest import published


def _store(layout: RunLayout, partition: int, arrays: list[tuple[int, ...]], recount: bool = False) -> None:
    """These arrays, sealed and counted raw by the partition's result: its weighted count and classes as they
    were (a resealed forgery), or, with ``recount``, what the arrays give (what a kernel that lost them left)."""
    record = read_result(layout.result_file(partition))
    seal = write_arrays(layout.solutions_file(partition), np.array(arrays, np.uint8).reshape(len(arrays), 10))
    layout.result_file(partition).unlink()
    shares = [class_share(a) for a in arrays if is_costas(a)] if recount else []
    counts = {"weighted": sum(w for w, _ in shares), "classes": sum(c for _, c in shares)} if recount else {}
    write_result(layout, dataclasses.replace(record, raw=len(arrays), solutions_file=seal, **counts))


def test_collect_prints_the_runs_own_evidence_and_catches_a_lost_class(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "costas", 10, run, "--num-partitions", 3, check=True)
    cli("run", run, "--device", "cpu", check=True)
    total = published("costas_total", 10)
    good = cli("collect", run, check=True)
    assert f"classes x orbit sizes = {total} (= the total {total})" in good.stdout
    assert f"all {len(welch_arrays(10))} Welch arrays of this order present" in good.stdout
    # a Welch class lost from the stored arrays (a solutions file cut short): the evidence no longer holds
    lost = representative(sorted(welch_arrays(10))[0])
    layout = RunLayout(run)
    stored = [read_solutions(layout.solutions_file(part), 10) for part in range(3)]
    for part in range(3):  # every member of the class, wherever it was stored, the counts left as they were
        _store(layout, part, [a for a in stored[part] if representative(a) != lost])
    forged = cli("collect", run)
    assert forged.returncode == 2 and "does not add up" in forged.stderr, forged.stdout + forged.stderr
    assert len(forged.stderr.strip().splitlines()) == 1
    for part in range(3):  # the same, counted as the arrays left say: the evidence no longer holds
        _store(layout, part, [a for a in stored[part] if representative(a) != lost], recount=True)
    bad = cli("collect", run)
    assert bad.returncode == 1
    assert f"classes x orbit sizes = {total - len(set(symmetries(lost)))}" in bad.stdout + bad.stderr
    assert "Welch arrays of this order MISSING" in bad.stderr and "MISMATCH" in bad.stderr
    # an array that is not a Costas array among the stored ones: named, no traceback
    arrays = read_solutions(layout.solutions_file(0), 10) + [tuple(range(10))]
    _store(layout, 0, arrays, recount=True)
    worse = cli("collect", run)
    assert worse.returncode == 1 and "1 stored arrays are NOT Costas arrays, e.g. [0, 1, 2" in worse.stderr
    assert "Traceback" not in worse.stderr
