"""``logs/part-NNNNN.error.json``: why a task failed (FailureRecord); never a result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from permenum.layout import RunLayout
from permenum.records.origin import Origin
from permenum.records.seal import parse_fields, read_record, write_record, now_utc

FAILURE_FORMAT = "permenum-failure/1"


@dataclass(frozen=True)
class FailureRecord:
    """``logs/part-NNNNN.error.json``: why a task failed. Never a result: the partition stays not-done."""

    partition: int
    error: str
    origin: Origin
    time: str = field(default_factory=now_utc)

    def describe(self) -> str:
        job = f" (job {self.origin.slurm_task})" if self.origin.slurm_task else ""
        return f"{self.error}{job}, {self.time}"

    def to_json(self) -> dict[str, Any]:
        return {"format": FAILURE_FORMAT, "partition": self.partition, "error": self.error,
                "environment": self.origin.to_json(), "time": self.time}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "FailureRecord":
        return cls(int(d["partition"]), str(d["error"]), Origin.from_json(d.get("environment") or {}), str(d.get("time", "?")))


def write_failure(layout: RunLayout, partition: int, exc: BaseException, origin: Origin) -> None:
    write_record(layout.failure_file(partition), FailureRecord(partition, f"{type(exc).__name__}: {exc}", origin).to_json())


def read_failure(layout: RunLayout, partition: int) -> FailureRecord | None:
    """The partition's failure record, or None; raises UserError when it is there but unreadable."""
    path = layout.failure_file(partition)
    if not path.exists():
        return None
    return parse_fields(path, "error record", FailureRecord.from_json, read_record(path, "error record", FAILURE_FORMAT))
