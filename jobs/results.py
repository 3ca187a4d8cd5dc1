"""Result records: ``results/part-NNNNN.json``, written once, atomically, by the task; never edited.

A second result for a partition that already has one is kept aside as a duplicate attempt when
its numbers agree, and is refused loudly (written as a conflict file) when they differ.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from permenum.atomic import write_json_atomic
from permenum.errors import UserError
from permenum.jobs.environment import TaskEnvironment
from permenum.layout import RunLayout
from permenum.poolgen.manifest import Manifest

FORMAT = "permenum-result/1"
# The numbers that must agree between two attempts at one partition.
IDENTITY_KEYS = ("solutions", "states", "pool_sha256", "run_id", "partition")


class ResultConflict(RuntimeError):
    """Two attempts at one partition produced different numbers: never silently pick one."""


def read_result(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: unreadable result ({exc})") from None
    if record.get("format") != FORMAT:
        raise UserError(f"{path}: not a permenum result record")
    return record


def check_result(record: dict[str, Any], manifest: Manifest, partition: int, path: Path) -> None:
    """Refuse a result from another run or another pool (files must never be mixed)."""
    entry = manifest.partition(partition)
    if record.get("run_id") != manifest.run_id:
        raise UserError(f"{path}: result belongs to run {record.get('run_id')}, this pool is run {manifest.run_id}")
    if record.get("partition") != partition or record.get("pool_sha256") != entry["sha256"]:
        raise UserError(f"{path}: result is for another partition or another version of partition {partition}")


def write_result(layout: RunLayout, record: dict[str, Any]) -> str:
    """Write the record; returns "accepted" or "duplicate"; raises ResultConflict on different numbers."""
    partition = int(record["partition"])
    path = layout.result_file(partition)
    record = {"format": FORMAT, **record}
    try:
        write_json_atomic(path, record, replace=False)
        return "accepted"
    except FileExistsError:
        pass
    first = read_result(path)
    dup_path = layout.duplicate_result_file(partition, int(record["attempt"]))
    same = all(first.get(k) == record.get(k) for k in IDENTITY_KEYS)
    record["duplicate_of_attempt"] = first.get("attempt")
    record["conflict"] = not same
    write_json_atomic(dup_path, record)
    if not same:
        raise ResultConflict(
            f"partition {partition}: attempt {record['attempt']} found {record['solutions']} but the accepted "
            f"attempt {first.get('attempt')} found {first.get('solutions')}; kept both ({dup_path})"
        )
    return "duplicate"


def write_failure(layout: RunLayout, partition: int, exc: BaseException) -> None:
    """Record why a task failed; never a result (the partition stays not-done)."""
    write_json_atomic(layout.failure_file(partition), {
        "partition": partition,
        "error": f"{type(exc).__name__}: {exc}",
        "environment": TaskEnvironment.read().as_dict(),
        "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    })


def attempts_so_far(layout: RunLayout, partition: int) -> int:
    """Finished attempts at this partition (accepted or duplicate), to number the next one."""
    dup_dir = layout.results_dir / "duplicates"
    dups = list(dup_dir.glob(f"{layout.part_name(partition)}.attempt-*.json")) if dup_dir.exists() else []
    return int(layout.result_file(partition).exists()) + len(dups)
