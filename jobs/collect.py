"""The collector: rebuild ``ledger.parquet`` from the result files (single writer) and check the totals."""

from __future__ import annotations

import io
import statistics
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from permenum.atomic import write_bytes_atomic
from permenum.layout import RunLayout
from permenum.problems import get_problem
from permenum.errors import UserError
from permenum.ranges import compact_ranges
from permenum.records import Manifest, ResultRecord, load_manifest, partition_scope, scan_results


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
    ledger_error: str | None = None  # why ledger.parquet could not be written (a read-only run, a full disk)

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def matches(self) -> bool | None:
        if not self.complete or self.known_total is None:
            return None
        return self.total == self.known_total and (self.known_classes is None or self.classes is None
                                                   or self.classes == self.known_classes)


#: Count columns are decimal128(38, 0): whole numbers to 10^38 that pandas sums as exact Decimals and
#: DuckDB as DECIMAL(38,0), without casts. int64 would wrap silently in pandas past 2^63 (Q(29) is
#: about 3.9e19) and uint64 failed past 2^64; strings summed by concatenation.
COUNT = pa.decimal128(38, 0)

_LEDGER_SCHEMA = pa.schema([
    ("partition", pa.int32()), ("attempt", pa.int32()), ("states", pa.int64()),
    ("solutions", COUNT), ("solutions_raw", COUNT), ("classes", COUNT), ("nodes", COUNT),
    ("seconds_load", pa.float64()), ("seconds_kernel", pa.float64()), ("seconds_total", pa.float64()),
    ("estimated_cost", pa.float64()), ("measured_cost", pa.float64()), ("devices", pa.string()), ("host", pa.string()),
    ("slurm_job_id", pa.int64()), ("finished", pa.string()),
    # provenance: what counted (records.DeviceUse), each a ", "-joined list over the devices that ran states
    ("kernel", pa.string()), ("models", pa.string()), ("platforms", pa.string()), ("drivers", pa.string()),
    ("builds", pa.string()), ("permenum_version", pa.string()),
])


def _ledger_row(record: ResultRecord, manifest: Manifest) -> dict[str, Any]:
    """One ledger row. ``measured_cost`` is what ``estimated_cost`` (the pool's estimate, in search
    nodes) predicts: the nodes visited where the task counted them, else the kernel's seconds."""
    return {
        "partition": record.partition, "attempt": record.attempt, "states": record.states,
        "solutions": _decimal(record.weighted), "solutions_raw": _decimal(record.raw),
        "classes": _decimal(record.classes), "nodes": _decimal(record.nodes), "seconds_load": record.seconds.load,
        "seconds_kernel": record.seconds.kernel, "seconds_total": record.seconds.total,
        "estimated_cost": manifest.partition(record.partition).estimated_cost,
        "measured_cost": record.measured_cost,
        "devices": ", ".join(d.label for d in record.devices), "host": record.origin.host,
        "slurm_job_id": record.origin.slurm_job_id, "finished": record.finished,
        "kernel": record.kernel, **{column: ", ".join(values) for column, values in _provenance(record).items()},
        "permenum_version": record.origin.version,
    }


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
    """Read every result, refuse foreign ones, write the ledger, and total the accepted counts."""
    manifest = load_manifest(layout)
    scan = scan_results(layout, manifest)
    if scan.damaged:
        first = min(scan.damaged)
        raise UserError(f"partitions {compact_ranges(list(scan.damaged))} have damaged results ({scan.damaged[first]}); "
                        "`permenum run` or `permenum resubmit` counts them again")
    records = [scan.done[i] for i in sorted(scan.done)]
    missing = [i for i in partition_scope(layout, manifest) if i not in scan.done]
    table = pa.Table.from_pylist([_ledger_row(r, manifest) for r in records], schema=_LEDGER_SCHEMA)
    ledger_error = _write_ledger(layout, table)
    problem = get_problem(manifest.problem)
    total = sum(r.weighted for r in records)
    classes = None
    if records and all(r.classes is not None for r in records):
        classes = sum(r.classes or 0 for r in records)
    return Collected(manifest, records, missing, total, problem.known_total(manifest.n), table, classes,
                     problem.known_classes(manifest.n), [r.seconds.total for r in records], ledger_error)


def _write_ledger(layout: RunLayout, table: pa.Table) -> str | None:
    """Write ledger.parquet; None, or why it could not be written. A finished run shared read-only, or a
    full disk, must still be reportable: the totals come from the verified results, not from the ledger."""
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    try:
        write_bytes_atomic(layout.ledger, buf.getvalue())
    except OSError as exc:
        return f"{exc.strerror or exc} ({layout.ledger})"
    return None


class ResultError(RuntimeError):
    """The results are inconsistent with each other: a bug or a tampered file, reported loudly."""


def spread(seconds: list[float]) -> tuple[float, float, float]:
    return (min(seconds), statistics.median(seconds), max(seconds)) if seconds else (0.0, 0.0, 0.0)
