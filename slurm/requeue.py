"""Ask SLURM to requeue this task's own array element (after it checkpointed on USR1/TERM)."""

from __future__ import annotations

from permenum.records import Origin
from permenum.slurm.commands import SlurmCommandError, run


def requeue_self(origin: Origin) -> str:
    """``scontrol requeue <job>_<index>``, then make it eligible at once; returns a one-line account.

    SLURM delays a requeued batch job by about two minutes (its BeginTime) so the old one can finish
    cleaning up; this task has already checkpointed and is about to exit, so the delay is lifted
    with ``scontrol update StartTime=now`` (the job still waits for the old step to end).
    """
    job = origin.slurm_task or str(origin.slurm_job_id)
    run(["scontrol", "requeue", job])
    try:
        run(["scontrol", "update", f"JobId={job}", "StartTime=now"])
    except SlurmCommandError as exc:
        return f"requeued {job} (it starts after SLURM's requeue delay: {exc})"
    return f"requeued {job}"
