"""Costas solution files are sealed by their results (sha256 and row count): a damaged, cut or padded file is
refused in one line by `collect` and `arrays`, never a traceback; results from before seals still read."""

from __future__ import annotations

import dataclasses
import random
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from permenum.errors import UserError
from permenum.jobs.counting.solutions import read_solutions, stored_arrays, write_arrays
from permenum.layout import RunLayout
from permenum.records import read_result, write_result
from tests.conftest import published


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import run_cli

    run = tmp_path_factory.mktemp("seal") / "run"
    run_cli("pool", "costas", 10, run, "--num-partitions", 3, check=True)
    run_cli("run", run, "--device", "cpu", check=True)
    return run


@pytest.fixture
def run(finished: Path, tmp_path: Path) -> RunLayout:
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return RunLayout(copy)


def _unseal(layout: RunLayout, partition: int) -> None:
    """Rewrite the partition's result as a result from before seals (no solutions_file)."""
    record = read_result(layout.result_file(partition))
    layout.result_file(partition).unlink()
    write_result(layout, dataclasses.replace(record, solutions_file=None))


def _one_line_refusal(proc) -> None:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_every_result_seals_its_solutions_file(run: RunLayout) -> None:
    for i in range(3):
        seal = read_result(run.result_file(i)).solutions_file
        assert seal is not None and len(read_solutions(run.solutions_file(i), 10, seal)) == seal.rows


def test_flipped_bytes_of_a_solutions_file_are_refused_in_one_line(run: RunLayout, cli) -> None:  # type: ignore[no-untyped-def]
    path = run.solutions_file(1)
    data = path.read_bytes()
    rng = random.Random(38)
    for offset in sorted(rng.sample(range(len(data)), 6)):
        damaged = bytearray(data)
        damaged[offset] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(damaged))
        for command in ("collect", "arrays"):
            proc = cli(command, run.root)
            _one_line_refusal(proc)
            assert "does not match the result's seal" in proc.stderr, proc.stderr


def test_an_array_dropped_or_duplicated_is_refused(run: RunLayout, cli) -> None:  # type: ignore[no-untyped-def]
    arrays = read_solutions(run.solutions_file(0), 10)
    for changed in (arrays[1:], arrays + arrays[:1]):
        write_arrays(run.solutions_file(0), np.array(changed, np.uint8).reshape(len(changed), 10))
        _one_line_refusal(cli("collect", run.root))
        _unseal(run, 0)  # a result from before seals: its raw count still catches it
        proc = cli("arrays", run.root)
        _one_line_refusal(proc)
        assert f"holds {len(changed)} arrays, the result of partition 0 counted {len(arrays)}" in proc.stderr


def test_damaged_files_of_results_from_before_seals_never_give_a_traceback(run: RunLayout) -> None:
    """Without a seal every byte is parsed: each failure is one line (the tracebacks of issue 38: IndexError
    in costas_symmetry.inverse, KeyError for a renamed column, AttributeError for a variable-size list)."""
    _unseal(run, 2)
    path = run.solutions_file(2)
    data = path.read_bytes()
    outcomes = set()
    for offset in range(0, len(data), 3):
        for bit in (0, 5):
            damaged = bytearray(data)
            damaged[offset] ^= 1 << bit
            path.write_bytes(bytes(damaged))
            try:
                stored = stored_arrays(run, expand=False)
                outcomes.add("read" if not stored.not_costas else "not costas")
            except UserError as exc:
                assert "\n" not in str(exc)
                outcomes.add("refused")
    assert "refused" in outcomes
    # a renamed column, a variable-size list: refused; a value past the order (no transpose): flagged
    count = read_result(run.result_file(2)).raw
    rows = [list(range(10))] * count
    for table in (pa.table({"arrays": pa.array(rows, pa.list_(pa.uint8(), 10))}),
                  pa.table({"rows": pa.array(rows, pa.list_(pa.uint8()))})):
        pq.write_table(table, path)
        with pytest.raises(UserError, match="does not parse|not arrays of order 10"):
            stored_arrays(run, expand=False)
    write_arrays(path, np.array([[12] + list(range(1, 10))] * count, np.uint8))
    assert stored_arrays(run, expand=False).not_costas  # flagged, not an IndexError


def test_arrays_refuses_a_stored_non_costas_array_in_one_line(run: RunLayout, cli) -> None:  # type: ignore[no-untyped-def]
    """A faulty kernel's array, sealed as found: `collect` flags it, `arrays` refuses it (no RuntimeError)."""
    arrays = read_solutions(run.solutions_file(0), 10)
    arrays[0] = tuple(range(10))
    record = read_result(run.result_file(0))
    seal = write_arrays(run.solutions_file(0), np.array(arrays, np.uint8).reshape(len(arrays), 10))
    run.result_file(0).unlink()
    write_result(run, dataclasses.replace(record, solutions_file=seal))
    proc = cli("arrays", run.root)
    _one_line_refusal(proc)
    assert "1 stored arrays are not Costas arrays, e.g. [0, 1, 2" in proc.stderr
    collect = cli("collect", run.root)
    assert collect.returncode == 1 and "NOT Costas arrays" in collect.stderr and "Traceback" not in collect.stderr


def test_a_forced_recount_never_replaces_the_sealed_file(run: RunLayout, cli) -> None:  # type: ignore[no-untyped-def]
    before = run.solutions_file(0).read_bytes()
    cli("task", run.root, "--index", 0, "--force", "--device", "cpu", check=True)
    assert run.solutions_file(0).read_bytes() == before
    assert (run.results_dir / "duplicates" / "part-00000.attempt-2.solutions.parquet").exists()
    assert f"total {published('costas_total', 10)}" in cli("collect", run.root, check=True).stdout


def test_a_damaged_solutions_file_makes_its_partition_counted_again(run: RunLayout, cli) -> None:  # type: ignore[no-untyped-def]
    """A result whose solutions file fails its seal is no evidence: `status` says so, `collect` gives no total
    and writes no ledger, `run` counts the partition again and keeps the damaged file aside."""
    run.ledger.unlink(missing_ok=True)
    arrays = read_solutions(run.solutions_file(1), 10)
    write_arrays(run.solutions_file(1), np.array(arrays[1:], np.uint8).reshape(len(arrays) - 1, 10))
    assert "does not match the result's seal" in cli("status", run.root).stdout
    collect = cli("collect", run.root)
    _one_line_refusal(collect)
    assert "total" not in collect.stdout and not run.ledger.exists() and "counts them again" in collect.stderr
    cli("run", run.root, "--device", "cpu", check=True)
    assert len(list(run.solutions_dir.glob("part-00001.parquet.bad-*"))) == 1  # evidence, never overwritten
    assert len(read_solutions(run.solutions_file(1), 10, read_result(run.result_file(1)).solutions_file)) == len(arrays)
    assert f"total {published('costas_total', 10)}" in cli("collect", run.root, check=True).stdout
