"""A result as a row of the ledger: the ledger's columns (type, unit, meaning) and the values an accepted result
gives them. One owner for both, read by the verified-results index (permenum.result_index), which keeps each
result's row, and by the collector (jobs.ledger.collect), which adds what belongs to the partition and writes the
ledger.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

from permenum.records import DeviceUse, ResultRecord


#: Count columns are decimal128(38, 0): whole numbers to 10^38 that pandas sums as exact Decimals, DuckDB
#: as DECIMAL(38,0) and polars as Decimal(38, 0), without casts. int64 would wrap silently in pandas past
#: 2^63 (Q(29) is about 3.9e19) and uint64 failed past 2^64; strings summed by concatenation.
COUNT = pa.decimal128(38, 0)
#: SLURM ids are nullable int64 (null for a local run); the pandas metadata below makes pandas read them as
#: Int64 rather than float with NaN.
SLURM_ID = pa.int64()
#: How pandas names the nullable dtype of each integer type a ledger column may hold nulls in.
PANDAS_NULLABLE = {pa.int32(): "Int32", pa.int64(): "Int64"}


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


#: The columns of a partition rather than of its result: the collector fills them (whether it is counted, the
#: pool's estimate, the sites whose re-counts agreed).
PARTITION_COLUMNS = ("counted", "estimated_nodes", "verified_by")
#: The columns a result gives (result_row), in the ledger's order.
RESULT_COLUMNS = tuple(c for c in LEDGER_COLUMNS if c.name not in PARTITION_COLUMNS)


def result_row(record: ResultRecord) -> dict[str, Any]:
    """The values a sound result gives its partition's ledger row (RESULT_COLUMNS)."""
    origin = record.origin
    return {
        "partition": record.partition, "attempt": record.attempt, "states": record.states,
        "solutions": _decimal(record.weighted), "solutions_raw": _decimal(record.raw),
        "classes": _decimal(record.classes), "nodes": _decimal(record.nodes),
        "seconds_load": record.seconds.load, "seconds_kernel": record.seconds.kernel,
        "seconds_total": record.seconds.total, "finished": _finished(record.finished),
        "devices": ", ".join(device_name(d) for d in record.devices), "host": origin.host, "site": origin.site,
        "slurm_job_id": origin.slurm_job_id, "slurm_array_job_id": origin.slurm_array_job_id,
        "slurm_array_task_id": origin.slurm_array_task_id,
        "kernel": record.kernel, **{column: ", ".join(values) for column, values in _provenance(record).items()},
        "permenum_version": origin.version,
    }


def _finished(stamp: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None  # a result without its time (or one no parser reads): the row has none


def device_name(device: DeviceUse) -> str:
    """A device as the ledger and `report` name it: its label, and which physical device where that is known
    (one-GPU tasks all see their GPU as ``0:0``; the PCI bus id tells the node's GPUs apart)."""
    return f"{device.label} @ {device.identity}" if device.identity else device.label


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


class ResultError(RuntimeError):
    """The results are inconsistent with each other: a bug or a tampered file, reported loudly."""
