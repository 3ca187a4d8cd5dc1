"""A worker task: count the partitions of a list one after another, until none is left.

Why: a process start (Python, pyopencl, the device's context) and SLURM's launch of an array element cost
about 2 s on a GPU node, as much as a short partition's kernel: an array of one element a partition ran
64 partitions of N-Queens 22 at 2.35x the best way on two GPUs. `permenum submit --workers W` submits W
elements instead, each running `permenum task RUN --only LIST`, which pays that start once and then takes
partition after partition through the run's claims (jobs.claims): a partition is counted by whichever
worker claims it first, never by two, and one another executor holds is left to it.

What stays per partition: every partition gets its own claim, checkpoints, result or error record, so
`status`, `resubmit` and the ledger read a worker's partitions as they read an array task's. A worker
stopped by a signal checkpoints the partition it holds and stops (jobs.task); its requeued self, or any
other worker, resumes it. A partition that failed under this array's workers is not tried again by them
(a bad pool file would otherwise fail once per worker): `resubmit` tries it again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from permenum.errors import UserError
from permenum.jobs.claims import PartitionClaimed
from permenum.jobs.environment import TaskEnvironment
from permenum.jobs.task import TaskInterrupted, TaskResult, run_task
from permenum.layout import RunLayout
from permenum.records import read_failure
from permenum.task_options import TaskOptions


@dataclass
class Pulled:
    """What one worker did: the partitions it counted, those it left to others, and those that failed."""

    counted: list[TaskResult] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)


def count_until_none_left(layout: RunLayout, partitions: list[int], options: TaskOptions, stop: threading.Event,
                          say: Callable[[str], None]) -> Pulled:
    """Count every partition of ``partitions`` that has no result, in their order, each under its claim;
    TaskInterrupted (from jobs.task) when ``stop`` is set mid-partition, with that partition checkpointed."""
    pulled = Pulled()
    own_array = TaskEnvironment.read().origin.slurm_array_job_id
    for partition in partitions:
        if stop.is_set():
            break
        if partition in layout.with_result_file():  # a listing: cheap beside a partition's count
            continue
        if own_array is not None and _failed_in(layout, partition, own_array):
            pulled.failed[partition] = "failed under another worker of this array"
            continue
        try:
            done = run_task(layout, partition, options, stop)
        except TaskInterrupted:
            raise
        except PartitionClaimed:
            pulled.left.append(partition)
            continue
        except Exception as exc:  # recorded by run_task (logs/part-NNNNN.error.json); the others still count
            pulled.failed[partition] = str(exc)
            say(f"partition {partition} failed: {exc}")
            continue
        pulled.counted.append(done)
        r = done.record
        say(f"partition {partition}: {r.weighted} solutions from {r.states} states in {r.seconds.total:.2f} s "
            f"(kernel {r.seconds.kernel:.2f} s) [{done.status}, attempt {r.attempt}, resumed from state {r.resumed_from}]")
    return pulled


def _failed_in(layout: RunLayout, partition: int, array_job: int) -> bool:
    """Whether the partition's error record was written by a task of ``array_job`` (this worker array)."""
    if partition not in layout.with_failure_file():
        return False
    try:
        failure = read_failure(layout, partition)
    except UserError:
        return False
    return failure is not None and failure.origin.slurm_array_job_id == array_job
