"""``RUN/submissions.jsonl``: one JSON line per sbatch that permenum ran (time, kind, job id, array
spec, the partition offset handed to the script, a worker array's workers, the exact command, the options).
Its one reader and writer: `submit` appends, `resubmit` reads the throttle, the workers and the site's shards,
`status` reads which array job covered each partition last, which offset turns a job's array indices into
partitions, and which partitions a worker array counts.
"""

from __future__ import annotations

import json
import os
from typing import Any

from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.ranges import expand_ranges


def append_submission(layout: RunLayout, record: dict[str, Any]) -> None:
    """One JSON line per submission, appended and fsynced (an append of one short line is atomic)."""
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(layout.submissions, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)  # the umask applies
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_submissions(layout: RunLayout) -> list[dict[str, Any]]:
    if not layout.submissions.exists():
        return []
    out: list[dict[str, Any]] = []
    for n, line in enumerate(layout.submissions.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                raise UserError(f"{layout.submissions}:{n}: not a JSON line") from None
    return out


def _offset(record: dict[str, Any]) -> int:
    offset = record.get("offset", 0)  # lines written before arrays were split have none: index = partition
    return offset if isinstance(offset, int) and offset >= 0 else 0


def _workers(record: dict[str, Any]) -> int | None:
    workers = record.get("workers")
    return workers if type(workers) is int and workers > 0 else None


def array_offsets(layout: RunLayout) -> dict[int, int]:
    """Array job -> the offset its script was handed (partition = array index + offset); worker arrays,
    whose indices are no partitions, are in worker_arrays."""
    return {record["job_id"]: _offset(record) for record in read_submissions(layout)
            if isinstance(record.get("job_id"), int) and _workers(record) is None}


def worker_arrays(layout: RunLayout) -> dict[int, list[int]]:
    """Worker array job (`submit --workers`) -> the partitions its workers count."""
    out: dict[int, list[int]] = {}
    for record in read_submissions(layout):
        if isinstance(record.get("job_id"), int) and _workers(record) is not None:
            try:
                out[record["job_id"]] = expand_ranges(str(record.get("partitions", "")))
            except ValueError:
                continue
    return out


def latest_submission(layout: RunLayout) -> dict[int, str]:
    """Partition -> the array task (``JOB_INDEX``) of the latest submission that covered it (a worker array's
    ``JOB_[0-W]``: any of its workers)."""
    out: dict[int, str] = {}
    for record in read_submissions(layout):
        job, spec = record.get("job_id"), str(record.get("array", "")).partition("%")[0]
        if not isinstance(job, int) or not spec:
            continue  # a dry run, or a line permenum did not write: it says nothing of a job
        try:
            indices = expand_ranges(spec)
            workers = _workers(record)
            placed = ({p: f"{job}_[{spec}]" for p in expand_ranges(str(record.get("partitions", "")))} if workers
                      else {index + _offset(record): f"{job}_{index}" for index in indices})
        except ValueError:
            continue
        out.update(placed)
    return out


def last_throttle(layout: RunLayout) -> int | None:
    """A resubmission keeps the throttle of the run's latest submission (the cluster's limits did not change)."""
    for record in reversed(read_submissions(layout)):
        if record.get("throttle"):
            return int(record["throttle"])
    return None


def last_workers(layout: RunLayout) -> int | None:
    """The workers of the run's latest `submit` (its script is then a worker script), None for one array task
    a partition."""
    for record in reversed(read_submissions(layout)):
        if record.get("kind") == "submit" and record.get("job_id"):
            return _workers(record)
    return None


def site_shards(layout: RunLayout, site: str | None) -> list[int] | None:
    """The shards this site's copy of the run was given (`submit --only`: a site's share of a campaign), as
    the union over the submissions made at ``site`` (the cluster's name; a copy of the run directory
    brought from another site carries that site's lines too); None when one of them covered the whole
    pool, or none was made."""
    chosen: set[int] = set()
    for record in read_submissions(layout):
        if record.get("kind") != "submit" or not record.get("job_id"):
            continue
        if site is not None and record.get("site") not in (None, site):
            continue
        if not record.get("shards"):
            return None
        try:
            chosen.update(expand_ranges(str(record["shards"])))
        except ValueError:
            return None
    return sorted(chosen) or None
