"""N-Queens through the whole flow (pool -> task -> result -> ledger) on the OpenCL device here (PoCL)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from permenum.errors import UserError
from permenum.jobs.ledger.collect import collect
from permenum.jobs.local import run_local
from permenum.task_options import TaskOptions
from permenum.layout import RunLayout
from permenum.poolgen.write import PoolSettings, write_pool
from permenum.solver.nqueens import TOP_DOWN, VARIANTS
from tests.conftest import published


# every kernel in every symmetry mode it serves, from the variant table (a new variant is covered too):
# skip, skip-soa, skip-all in all four modes; dfs and dsl in the top-down ones
KERNEL_MODES = [(kernel, symmetry) for kernel, spec in VARIANTS.items()
                for symmetry in (TOP_DOWN if spec.private else ("edges", "dihedral", "mirror", "none"))]


# Every kernel in every mode through the whole flow (pool, the local executor, collect) at 3 partitions, and
# the CPU's default kernel at 1 and 7 partitions (what a pool cuts differently: a kernel sees states, never
# partitions, so the other kernels there would repeat the same launches), each by one worker on the whole
# CPU, which runs its tasks in the executor's process. Two workers on two sub-devices, each a process of its
# own that takes partitions from one queue, in every mode at 3 partitions: a worker process's start, about
# 0.5 s a run here, was two thirds of this file's time when every case paid it 13 times.
DEFAULT = "skip-soa"  # solver.nqueens.default_variant on a CPU
FLOW_CASES = [(kernel, symmetry, 3, 1) for kernel, symmetry in KERNEL_MODES] + [
    (DEFAULT, symmetry, partitions, workers) for symmetry in ("edges", "dihedral", "mirror", "none")
    for partitions, workers in ((1, 1), (7, 1), (3, 2))]


@pytest.mark.parametrize("kernel, symmetry, partitions, workers", FLOW_CASES)
def test_exact_totals_1_to_13(tmp_path: Path, kernel: str, symmetry: str, partitions: int, workers: int) -> None:
    device = "cpu" if workers == 1 else f"cpu/{workers}"
    checked = 0
    for n in range(1, 14):
        layout = RunLayout(tmp_path / f"n{n}")
        settings = PoolSettings("nqueens", n, partitions, target_states=256, seed=n, symmetry=symmetry)
        try:
            write_pool(layout, settings)
        except UserError as exc:
            # Tiny boards have fewer states than partitions: refused, and nothing written.
            assert "partitions but the pool has only" in str(exc)
            assert not layout.manifest.exists()
            continue
        summary = run_local(layout, workers=workers, options=TaskOptions(device=device, kernel=kernel),
                            show_progress=False)
        assert not summary.failed and sorted(summary.ran) == list(range(partitions))
        c = collect(layout)
        assert c.complete and c.total == published("nqueens_total", n), (n, c.total)
        assert pq.read_table(layout.ledger).num_rows == partitions
        checked += 1
    assert checked >= 13 - {1: 0, 3: 5, 7: 6}[partitions] - (symmetry == "dihedral")


@pytest.mark.parametrize("n", [14, 15])
def test_enumerate_command(cli, n: int) -> None:  # type: ignore[no-untyped-def]
    proc = cli("enumerate", "nqueens", n, check=True)
    assert f"total {published('nqueens_total', n)}" in proc.stdout
    assert "matches the published count" in proc.stdout


def test_ledger_sums_in_pandas_duckdb_and_polars(tmp_path: Path) -> None:
    """The README's one-liners: the count columns sum to the totals with no cast in pandas, DuckDB and polars;
    SLURM ids arrive as nullable integers, times as timestamps; the file's metadata says what run it is of."""
    import duckdb
    import pandas as pd
    import polars as pl

    layout = RunLayout(tmp_path / "q12")
    write_pool(layout, PoolSettings("nqueens", 12, 5, target_states=256, seed=1))
    assert not run_local(layout, workers=1, options=TaskOptions(device="cpu/2", count_nodes=True), show_progress=False).failed
    c = collect(layout)
    raw = sum(r.raw for r in c.records)
    df = pd.read_parquet(layout.ledger)
    assert df.solutions.sum() == c.total == published("nqueens_total", 12)
    assert df.solutions_raw.sum() == raw and df.nodes.sum() > 0
    assert str(df.slurm_job_id.dtype) == "Int64" and df.slurm_job_id.isna().all()  # a local run: no SLURM ids
    assert str(df.finished.dtype).startswith("datetime64") and "classes" not in df.columns  # N-Queens has no classes
    row = duckdb.sql(f"SELECT sum(solutions), sum(solutions_raw) FROM '{layout.ledger}'").fetchall()[0]
    assert row == (c.total, raw)
    assert pl.read_parquet(layout.ledger)["solutions"].sum() == c.total
    meta = {k.decode(): v.decode() for k, v in pq.read_schema(layout.ledger).metadata.items()}
    assert meta["permenum.complete"] == "true" and meta["permenum.total"] == str(c.total)
    assert (meta["permenum.problem"], meta["permenum.n"], meta["permenum.partitions_done"]) == ("nqueens", "12", "5")
    assert meta["permenum.matches_published"] == "true" and meta["permenum.run_id"] == c.manifest.run_id
    assert pq.read_schema(layout.ledger).field("seconds_kernel").metadata[b"unit"] == b"s"


def test_collect_of_an_unfinished_run_is_partial(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """6 of 8 partitions counted: no total line, exit 1, and a ledger whose name, metadata and rows say partial."""
    layout = RunLayout(tmp_path / "run")
    cli("pool", "nqueens", 10, layout.root, "--num-partitions", 8, check=True)
    assert sorted(run_local(layout, workers=1, options=TaskOptions(device="cpu"), show_progress=False,
                            shards=list(range(6))).ran) == list(range(6))
    proc = cli("collect", layout.root)
    assert proc.returncode == 1 and not re.search(r"\btotal \d", proc.stdout)
    c = collect(layout)
    assert f"partial: {c.total} from 6/8 partitions" in proc.stdout and "6-7" in proc.stderr
    assert not layout.ledger.exists() and layout.partial_ledger.exists()
    table = pq.read_table(layout.partial_ledger)
    assert table.schema.metadata[b"permenum.complete"] == b"false"
    assert table.column("counted").to_pylist() == [True] * 6 + [False] * 2
    assert table.column("solutions").to_pylist()[6:] == [None, None]
    df = table.to_pandas()  # integers with nulls arrive as nullable integers, not float with NaN
    assert str(df.attempt.dtype) == "Int32" and df.attempt.isna().tolist() == [False] * 6 + [True] * 2
    assert str(df.slurm_job_id.dtype) == "Int64" and str(df.partition.dtype) == "int32"
    cli("task", layout.root, "--index", 6, check=True)
    cli("task", layout.root, "--index", 7, check=True)
    proc = cli("collect", layout.root, check=True)
    assert f"total {published('nqueens_total', 10)} from 8/8" in proc.stdout
    assert layout.ledger.exists() and not layout.partial_ledger.exists()


def test_next_partition_starts_while_the_last_chunks_of_one_count(tmp_path: Path) -> None:
    """One worker, several partitions: each task starts once its predecessor's device holds its last chunk
    (its log's first line comes before the predecessor's last: for at least two of the three, see below),
    so the device does not idle in between; the total stays exact."""
    layout = RunLayout(tmp_path / "run")
    write_pool(layout, PoolSettings("nqueens", 16, 4))
    summary = run_local(layout, workers=1, show_progress=False)
    assert sorted(summary.ran) == [0, 1, 2, 3] and not summary.failed
    assert collect(layout).total == published("nqueens_total", 16)

    def stamp(partition: int, line: int) -> dt.datetime:
        return dt.datetime.fromisoformat(layout.task_log(partition).read_text().splitlines()[line].split(" ")[0])

    # without the overlap none of the three would start early; with it, a short last chunk (0.3 s) can still
    # end before a successor slowed by a loaded machine writes its first line (seen once in 30 runs beside
    # other tests on two cores)
    early = [i for i in range(1, 4) if stamp(i, 0) < stamp(i - 1, -1)]
    assert len(early) >= 2, [layout.task_log(i).read_text() for i in range(4)]
