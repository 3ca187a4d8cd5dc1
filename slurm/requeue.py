"""What a task asks SLURM about its own array element after it checkpointed on a stop signal:
why it was signalled (cancelled or not), and to requeue it."""

from __future__ import annotations

import datetime as dt
import re

from permenum.records import Origin
from permenum.slurm.commands import SlurmCommandError, run
from permenum.slurm.queue import normalize_state, parse_key_values


def _job(origin: Origin) -> str:
    return origin.slurm_task or str(origin.slurm_job_id)


def why_signalled(origin: Origin) -> str:
    """Why SLURM sent this element SIGTERM, from the controller's record of it (``scontrol show job``):
    "requeued" (SLURM requeued it already: an administrator's ``scontrol requeue``, a preemption that
    requeues), "preempted", "time limit", "cancelled" (``scancel``), or "unknown" (no answer).

    The state alone does not tell: while the task still runs, a cancelled, timed-out or requeued
    element all read COMPLETING. What does: a requeue has counted a restart beyond the task's own
    (and has no end time); a preemption sets PreemptTime; a time limit ends at start + limit; a
    cancel ends before it."""
    try:
        text = run(["scontrol", "show", "job", "-o", _job(origin)])
    except SlurmCommandError:
        return "unknown"
    fields = next((parse_key_values(line) for line in text.splitlines() if line.startswith("JobId=")), None)
    return "unknown" if fields is None else classify_end(fields, origin.slurm_restart_count or 0)


def classify_end(fields: dict[str, str], own_restarts: int) -> str:
    """The pure decision of why_signalled, over one ``scontrol show job -o`` record."""
    if normalize_state(fields.get("JobState", "")) in ("REQUEUED", "PENDING", "REQUEUE_HOLD", "REQUEUE_FED") or \
            _count(fields.get("Restarts")) > own_restarts:
        return "requeued"
    if fields.get("PreemptTime", "None") not in ("None", "", "Unknown"):
        return "preempted"
    start, end, limit = _time(fields.get("StartTime")), _time(fields.get("EndTime")), _duration(fields.get("TimeLimit"))
    if start is None or end is None:
        return "unknown"
    if limit is not None and end >= start + limit:
        return "time limit"
    return "cancelled"


def _count(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0


def _time(value: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(value) if value else None
    except ValueError:
        return None  # "Unknown", "None"


def _duration(value: str | None) -> dt.timedelta | None:
    """SLURM's [days-]hours:minutes:seconds; None for UNLIMITED or anything else."""
    m = re.fullmatch(r"(?:(\d+)-)?(\d+):(\d+):(\d+)", value or "")
    if not m:
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in m.groups())
    return dt.timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def requeue_self(origin: Origin) -> str:
    """``scontrol requeue <job>_<index>``, then make it eligible at once; returns a one-line account.

    SLURM delays a requeued batch job by about two minutes (its BeginTime) so the old one can finish
    cleaning up; this task has already checkpointed and is about to exit, so the delay is lifted
    with ``scontrol update StartTime=now`` (the job still waits for the old step to end). The requeue
    itself TERMs every process of the element, this task's scontrol children included, so both commands
    ignore TERM: the update failed with exit -15 in 5 of 8 requeues after USR1 when it did not, and the
    requeue itself, TERMed before its answer came back, would read as "requeued already" and leave the
    delay (the likely cause of a CI failure under load on 2026-11-28, not reproduced here). An element that
    is already requeued (an administrator's ``scontrol requeue``, a preemption that requeues) is left as it is.
    """
    job = _job(origin)
    try:
        run(["scontrol", "requeue", job], outlive_term=True)
    except SlurmCommandError as exc:
        if why_signalled(origin) == "requeued":
            return f"{job} is requeued already"
        return f"could not requeue {job} ({exc.summary()}): `permenum resubmit` resumes it from its checkpoint"
    try:
        run(["scontrol", "update", f"JobId={job}", "StartTime=now"], outlive_term=True)
    except SlurmCommandError as exc:
        return f"requeued {job} (it starts after SLURM's requeue delay: {exc})"
    return f"requeued {job}"
