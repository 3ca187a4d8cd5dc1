"""Run directories written before the records became a package (2026-11-27, by the single-module
permenum/records.py of commit 37ba3f2) read as they did: the on-disk formats did not change with the split.

tests/data/records-2026-11-27 holds what that code wrote: `enumerate nqueens 6 RUN --num-partitions 2`
(manifest, pool, results), `verify RUN --only 0-1` (its plan, copy of the manifest, results and check) and
`search nqueens 8 RUN` (plan, the task's result, found.json); the derived files (ledger, index) are not kept.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from permenum.known import known
from permenum.layout import RunLayout
from permenum.problems import get_problem
from permenum.records import load_manifest, load_search_plan, read_search_result, verified_result

WRITTEN = Path(__file__).parent / "data" / "records-2026-11-27"


def test_a_run_written_before_the_split_reads_collects_and_verifies(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    shutil.copytree(WRITTEN / "run", run)
    layout = RunLayout(run)
    manifest = load_manifest(layout)
    assert (manifest.problem, manifest.n, manifest.symmetry, len(manifest.partitions)) == ("nqueens", 6, "edges", 2)
    records = [verified_result(layout, manifest, p) for p in range(2)]
    assert sum(r.weighted for r in records) == known("nqueens_total", 6) == 4
    collected = cli("collect", run, check=True).stdout
    assert "matches the published count 4" in collected
    checked = cli("verify", run, "--check")
    assert checked.returncode == 0 and "agree" in checked.stdout, checked.stdout + checked.stderr


def test_a_search_written_before_the_split_reads(tmp_path: Path) -> None:
    search = tmp_path / "search"
    shutil.copytree(WRITTEN / "search", search)
    plan = load_search_plan(RunLayout(search))
    assert (plan.problem, plan.n) == ("nqueens", 8)
    for path in (search / "results" / "task-00000.json", search / "found.json"):
        found = read_search_result(path)
        assert found.status == "found" and found.solution is not None
        assert len(found.solution) == 8 and get_problem("nqueens").is_solution(found.solution)
