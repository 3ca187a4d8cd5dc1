"""The collector: rebuild the ledger from the result files (single writer) and check the totals.

A complete run's ledger is ``ledger.parquet``; an unfinished run's is ``ledger.partial.parquet``, with a
row for every partition (``counted`` false, counts null, where no result is) and ``permenum.complete``
false in its metadata: a partial sum is never taken for the total.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import statistics
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from permenum import __version__
from permenum.atomic import write_bytes_atomic
from permenum.layout import RunLayout
from permenum.problems import get_problem
from permenum.errors import UserError
from permenum.jobs.verify import RunResults, Verified, verified
from permenum.ranges import compact_ranges
from permenum.records import DeviceUse, Manifest, ResultRecord, load_manifest, now_utc, partition_scope, scan_results


@dataclass
class Collected:
    manifest: Manifest
    records: list[ResultRecord]
    missing: list[int]
    total: int
    known_total: int | None
    ledger: pa.Table  # the ledger's rows, as written (or as they would have been: see ledger_error)
    classes: int | None = None
    known_classes: int | None = None
    seconds: list[float] = field(default_factory=list)
    ledger_error: str | None = None  # why the ledger could not be written (a read-only run, a full disk)
    ledger_path: Path | None = None  # ledger.parquet, or ledger.partial.parquet for an unfinished run
    verified: Verified | None = None  # the run's verifications, compared with these results

    def sites(self) -> dict[str, tuple[int, int]]:
        """Per site: the partitions it counted, and how many of them another site's re-count agreed with."""
        by = self.verified.agreeing_sites() if self.verified else {}
        out: dict[str, tuple[int, int]] = {}
        for r in self.records:
            site = r.origin.site
            counted, checked = out.get(site, (0, 0))
            out[site] = (counted + 1, checked + any(s != site for s in by.get(r.partition, [])))
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


#: Count columns are decimal128(38, 0): whole numbers to 10^38 that pandas sums as exact Decimals, DuckDB
#: as DECIMAL(38,0) and polars as Decimal(38, 0), without casts. int64 would wrap silently in pandas past
#: 2^63 (Q(29) is about 3.9e19) and uint64 failed past 2^64; strings summed by concatenation.
COUNT = pa.decimal128(38, 0)
#: SLURM ids are nullable int64 (null for a local run); the pandas metadata below makes pandas read them as
#: Int64 rather than float with NaN.
SLURM_ID = pa.int64()
#: How pandas names the nullable dtype of each integer type a ledger column may hold nulls in.
_PANDAS_NULLABLE = {pa.int32(): "Int32", pa.int64(): "Int64"}


@dataclass(frozen=True)
class Column:
    """One ledger column: its type, unit and meaning, written into the file's schema (field metadata) and
    listed in the README's ledger table (tests/test_readme.py checks the two agree)."""

    name: str
    type: pa.DataType
    unit: str
    doc: str
    #: An integer column with nulls in some rows, which pandas would read as float with NaN: the file's pandas
    #: metadata names its nullable dtype (Int32, Int64) instead.
    nullable_int: bool = False


LEDGER_COLUMNS: tuple[Column, ...] = (
    Column("partition", pa.int32(), "", "the pool partition (pool/part-NNNNN.parquet)"),
    Column("counted", pa.bool_(), "", "whether it has an accepted result; false only in ledger.partial.parquet, "
           "where its counts are null"),
    Column("states", pa.int64(), "states", "pool states in the partition"),
    Column("solutions", COUNT, "solutions", "every solution the partition stands for, symmetric copies included: "
           "sums to the run's total"),
    Column("solutions_raw", COUNT, "solutions", "solutions the search found in the stored states, before each is "
           "multiplied by its state's weight: sums to the count under the pool's symmetry reduction"),
    Column("classes", COUNT, "classes", "Costas only: symmetry classes whose representative the partition holds; "
           "sums to the number of classes"),
    Column("nodes", COUNT, "nodes", "only when some task ran with --count-nodes: search nodes visited (null where "
           "not counted)"),
    Column("estimated_nodes", pa.float64(), "nodes", "the pool's estimate of the partition's search nodes (Knuth "
           "probes; what --balance cost equalizes)"),
    Column("attempt", pa.int32(), "", "the attempt whose result was accepted, 1 for the first; null where not "
           "counted", nullable_int=True),
    Column("seconds_load", pa.float64(), "s", "reading and checking the partition's pool file"),
    Column("seconds_kernel", pa.float64(), "s", "device time counting (the sum over the devices' launches)"),
    Column("seconds_total", pa.float64(), "s", "the task from start to result, this attempt and those it resumed"),
    Column("finished", pa.timestamp("s", tz="UTC"), "UTC", "when the result was written"),
    Column("devices", pa.string(), "", "the devices that ran it, `P:D platform / name` and, where the platform "
           "says it, `@ PCI bus id` (or `@ uuid:...`), comma-separated"),
    Column("host", pa.string(), "", "the host that wrote the result"),
    Column("site", pa.string(), "", "where it was counted: the SLURM cluster's name, else the host"),
    Column("verified_by", pa.string(), "", "the sites whose independent re-count (`verify`) agreed, "
           "comma-separated; null where none"),
    Column("slurm_job_id", SLURM_ID, "", "SLURM job id of the task that wrote the result; null for a local run",
           nullable_int=True),
    Column("slurm_array_job_id", SLURM_ID, "", "its array job id; null for a local run", nullable_int=True),
    Column("slurm_array_task_id", SLURM_ID, "", "its array task index; null for a local run", nullable_int=True),
    Column("kernel", pa.string(), "", "the kernel variant that counted"),
    Column("models", pa.string(), "", "device models that counted, comma-separated"),
    Column("platforms", pa.string(), "", "their OpenCL platforms"),
    Column("drivers", pa.string(), "", "their driver versions"),
    Column("builds", pa.string(), "", "ids of the kernel builds (source, options and device hashed)"),
    Column("permenum_version", pa.string(), "", "the permenum that wrote the result"),
)
COLUMNS = {c.name: c for c in LEDGER_COLUMNS}


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
                 "numpy_type": _PANDAS_NULLABLE[c.type], "metadata": None}
                for c in LEDGER_COLUMNS if c.nullable_int],
})


def _ledger_row(record: ResultRecord, manifest: Manifest, verified_by: list[str]) -> dict[str, Any]:
    """One ledger row of a partition with an accepted result."""
    origin = record.origin
    return {
        "partition": record.partition, "counted": True, "attempt": record.attempt, "states": record.states,
        "solutions": _decimal(record.weighted), "solutions_raw": _decimal(record.raw),
        "classes": _decimal(record.classes), "nodes": _decimal(record.nodes),
        "estimated_nodes": manifest.partition(record.partition).estimated_cost,
        "seconds_load": record.seconds.load, "seconds_kernel": record.seconds.kernel,
        "seconds_total": record.seconds.total, "finished": dt.datetime.fromisoformat(record.finished),
        "devices": ", ".join(device_name(d) for d in record.devices), "host": origin.host, "site": origin.site,
        "verified_by": ", ".join(verified_by) or None,
        "slurm_job_id": origin.slurm_job_id, "slurm_array_job_id": origin.slurm_array_job_id,
        "slurm_array_task_id": origin.slurm_array_task_id,
        "kernel": record.kernel, **{column: ", ".join(values) for column, values in _provenance(record).items()},
        "permenum_version": origin.version,
    }


def device_name(device: DeviceUse) -> str:
    """A device as the ledger and `report` name it: its label, and which physical device where that is known
    (one-GPU tasks all see their GPU as ``0:0``; the PCI bus id tells the node's GPUs apart)."""
    return f"{device.label} @ {device.identity}" if device.identity else device.label


def _missing_row(partition: int, manifest: Manifest) -> dict[str, Any]:
    """A partition without a result (only in a partial ledger): what the pool says of it, counts null."""
    entry = manifest.partition(partition)
    return {"partition": partition, "counted": False, "states": entry.rows, "estimated_nodes": entry.estimated_cost}
def _provenance(record: ResultRecord) -> dict[str, list[str]]:
    """The distinct models, platforms, drivers and builds of the devices that counted (all, if none did)."""
    ran = record.counted_by()

    def distinct(values: list[str]) -> list[str]:
        return sorted({v for v in values if v})

    return {"models": distinct([d.model for d in ran]), "platforms": distinct([d.platform for d in ran]),
            "drivers": distinct([d.driver for d in ran]), "builds": distinct([b for d in ran for b in d.builds])}


def _decimal(count: int | None) -> Decimal | None:
    if count is not None and count >= 10 ** 38:
        raise ResultError(f"a count of {count} does not fit the ledger's 38 digits")
    return None if count is None else Decimal(count)


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
    records = [scan.done[i] for i in sorted(scan.done)]
    missing = [i for i in scope if i not in scan.done]
    problem = get_problem(manifest.problem)
    total = sum(r.weighted for r in records)
    classes = None
    if records and all(r.classes is not None for r in records):
        classes = sum(r.classes or 0 for r in records)
    collected = Collected(manifest, records, missing, total, problem.known_total(manifest.n), pa.table({}), classes,
                          problem.known_classes(manifest.n), [r.seconds.total for r in records])
    collected.verified = verified(layout, RunResults(manifest, scan.done))
    verified_by = collected.verified.agreeing_sites()
    rows = sorted([_ledger_row(r, manifest, verified_by.get(r.partition, [])) for r in records]
                  + [_missing_row(i, manifest) for i in missing],
                  key=lambda row: row["partition"])
    schema = _ledger_schema(problem.counts_classes, any(r.nodes is not None for r in records))
    columns = set(schema.names)  # once: pyarrow builds the list on every access (1.8 s over 20,000 rows here)
    table = pa.Table.from_pylist([{k: v for k, v in row.items() if k in columns} for row in rows], schema=schema)
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
        "permenum.partitions_done": str(len(c.records)), "permenum.partitions_total": str(scope),
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


class ResultError(RuntimeError):
    """The results are inconsistent with each other: a bug or a tampered file, reported loudly."""


def spread(seconds: list[float]) -> tuple[float, float, float]:
    return (min(seconds), statistics.median(seconds), max(seconds)) if seconds else (0.0, 0.0, 0.0)
