"""The collector: rebuild the ledger from the result files (single writer) and check the totals.

A complete run's ledger is ``ledger.parquet``; an unfinished run's is ``ledger.partial.parquet``, with a
row for every partition (``counted`` false, counts null, where no result is) and ``permenum.complete``
false in its metadata: a partial sum is never taken for the total.
"""

from __future__ import annotations

import io
import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from permenum import __version__
from permenum.atomic import write_bytes_atomic
from permenum.layout import RunLayout
from permenum.problems import get_problem
from permenum.errors import UserError
from permenum.jobs.ledger.verify import RunResults, Verified, verified
from permenum.ranges import compact_ranges
from permenum.ledger_rows import LEDGER_COLUMNS, PANDAS_NULLABLE
from permenum.records import Manifest, ResultRecord, load_manifest, now_utc, partition_scope
from permenum.result_index import scan_results


@dataclass
class Collected:
    manifest: Manifest
    counted: list[int]  # the partitions with an accepted result
    missing: list[int]
    total: int
    known_total: int | None
    ledger: pa.Table  # the ledger's rows, as written (or as they would have been: see ledger_error)
    classes: int | None = None
    known_classes: int | None = None
    seconds: list[float] = field(default_factory=list)  # each counted partition's, over its attempts
    kernel_seconds: float = 0.0  # summed over the counted partitions
    ledger_error: str | None = None  # why the ledger could not be written (a read-only run, a full disk)
    ledger_path: Path | None = None  # ledger.parquet, or ledger.partial.parquet for an unfinished run
    verified: Verified | None = None  # the run's verifications, compared with these results
    done: Mapping[int, ResultRecord] = field(default_factory=dict)  # each counted partition's record, read on demand

    @property
    def records(self) -> list[ResultRecord]:
        """The accepted results, each read from its file (the totals and the ledger need none of them)."""
        return [self.done[p] for p in self.counted]

    def sites(self) -> dict[str, tuple[int, int]]:
        """Per site: the partitions it counted, and how many of them another site's re-count agreed with."""
        by = self.verified.agreeing_sites() if self.verified else {}
        out: dict[str, tuple[int, int]] = {}
        rows = self.ledger.select(["partition", "site", "counted"]).to_pydict()
        for partition, site, counted_here in zip(rows["partition"], rows["site"], rows["counted"]):
            if counted_here:
                counted, checked = out.get(site, (0, 0))
                out[site] = (counted + 1, checked + any(s != site for s in by.get(partition, [])))
        return out

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def matches(self) -> bool | None:
        if not self.complete or self.known_total is None:
            return None
        return self.total == self.known_total and (self.known_classes is None or self.classes is None
                                                   or self.classes == self.known_classes)


def _ledger_schema(problem_counts_classes: bool, with_nodes: bool) -> pa.Schema:
    """The columns that apply: classes for a problem that counts them, nodes where some task counted them."""
    left_out = ({"classes"} if not problem_counts_classes else set()) | ({"nodes"} if not with_nodes else set())
    return pa.schema([pa.field(c.name, c.type, metadata={"unit": c.unit, "description": c.doc})
                      for c in LEDGER_COLUMNS if c.name not in left_out])


#: pandas reads an integer column with nulls as float with NaN unless the file's pandas metadata names its
#: nullable dtype (Int32, Int64); pyarrow's to_pandas honours it (no pandas is needed to write it).
_PANDAS_METADATA = json.dumps({
    "index_columns": [], "column_indexes": [], "creator": {"library": "permenum"},
    "columns": [{"name": c.name, "field_name": c.name, "pandas_type": str(c.type),
                 "numpy_type": PANDAS_NULLABLE[c.type], "metadata": None}
                for c in LEDGER_COLUMNS if c.nullable_int],
})


def _missing_row(partition: int, manifest: Manifest) -> dict[str, Any]:
    """A partition without a result (only in a partial ledger): what the pool says of it, counts null."""
    entry = manifest.partition(partition)
    return {"partition": partition, "counted": False, "states": entry.rows, "estimated_nodes": entry.estimated_cost}


def collect(layout: RunLayout) -> Collected:
    """Read every result, refuse foreign ones, write the ledger (ledger.partial.parquet while partitions are
    missing), and total the accepted counts."""
    manifest = load_manifest(layout)
    scan = scan_results(layout, manifest)
    if scan.damaged:
        first = min(scan.damaged)
        raise UserError(f"partitions {compact_ranges(list(scan.damaged))} have damaged results ({scan.damaged[first]}); "
                        "`permenum run` or `permenum resubmit` counts them again")
    scope = partition_scope(layout, manifest)
    rows = scan.rows  # one a counted partition, by partition (ledger_rows.RESULT_COLUMNS)
    counted = rows.column("partition").to_pylist()
    missing = [i for i in scope if i not in scan.done]
    problem = get_problem(manifest.problem)
    total = sum(int(c) for c in rows.column("solutions").to_pylist())
    classes = None
    if counted and rows.column("classes").null_count == 0:
        classes = sum(int(c) for c in rows.column("classes").to_pylist())
    collected = Collected(manifest, counted, missing, total, problem.known_total(manifest.n), pa.table({}), classes,
                          problem.known_classes(manifest.n), rows.column("seconds_total").to_pylist(),
                          sum(rows.column("seconds_kernel").to_pylist()), done=scan.done)
    collected.verified = verified(layout, RunResults(manifest, scan.done))
    agreeing = collected.verified.agreeing_sites()
    schema = _ledger_schema(problem.counts_classes, rows.column("nodes").null_count < rows.num_rows)
    whole = rows.append_column("counted", pa.array([True] * len(counted), pa.bool_())) \
        .append_column("estimated_nodes", pa.array([manifest.partition(p).estimated_cost for p in counted], pa.float64())) \
        .append_column("verified_by", pa.array([", ".join(agreeing.get(p, [])) or None for p in counted], pa.string()))
    gaps = pa.Table.from_pylist([_missing_row(i, manifest) for i in missing], schema=schema)
    table = pa.concat_tables([whole.select(schema.names).cast(schema), gaps]).sort_by("partition")
    collected.ledger = table.replace_schema_metadata(_file_metadata(collected, len(scope)))
    collected.ledger_path = layout.ledger if collected.complete else layout.partial_ledger
    collected.ledger_error = _write_ledger(collected.ledger, collected.ledger_path,
                                           layout.partial_ledger if collected.complete else layout.ledger)
    return collected


def _file_metadata(c: Collected, scope: int) -> dict[str, str]:
    """The ledger's key-value metadata: what run it is of and whether it is whole, so that a copy elsewhere
    still says so (`pyarrow.parquet.read_schema(path).metadata`, DuckDB's parquet_kv_metadata)."""
    m = c.manifest
    matches = "n/a (partial)" if not c.complete else "unknown" if c.matches is None else str(c.matches).lower()
    return {
        "pandas": _PANDAS_METADATA,
        "permenum.run_id": m.run_id, "permenum.problem": m.problem, "permenum.n": str(m.n),
        "permenum.symmetry": m.symmetry, "permenum.pool_sha256": m.pool_sha256,
        "permenum.partitions_done": str(len(c.counted)), "permenum.partitions_total": str(scope),
        "permenum.complete": str(c.complete).lower(),
        "permenum.total": str(c.total) if c.complete else "",
        "permenum.partial_total": "" if c.complete else str(c.total),
        "permenum.published_total": "" if c.known_total is None else str(c.known_total),
        "permenum.matches_published": matches,
        "permenum.version": __version__, "permenum.written": now_utc(),
    }


def _write_ledger(table: pa.Table, path: Path, stale: Path) -> str | None:
    """Write the ledger and drop the other name's stale copy; None, or why it could not be written. A
    finished run shared read-only, or a full disk, must still be reportable: the totals come from the
    verified results, not from the ledger."""
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    try:
        write_bytes_atomic(path, buf.getvalue())
        stale.unlink(missing_ok=True)
    except OSError as exc:
        return f"{exc.strerror or exc} ({path})"
    return None


def spread(seconds: list[float]) -> tuple[float, float, float]:
    return (min(seconds), statistics.median(seconds), max(seconds)) if seconds else (0.0, 0.0, 0.0)
