"""A search run as a SLURM array: task t runs ``permenum search-task RUN --index t`` on its own seed range;
the first to find cancels the rest of the array so the allocation is freed.

The script is ``RUN/slurm/search.sbatch`` (array index = task), submitted once with ``--array=0-(K-1)``
(``%T`` with a throttle) and recorded in ``submissions.jsonl`` like an enumeration's arrays. A search
task does not requeue itself: a task stopped by its time limit has written what it tried, and a new
search is a new seed.
"""

from __future__ import annotations

import shlex

from permenum.atomic import write_bytes_atomic
from permenum.errors import UserError
from permenum.jobs.counting.environment import TaskEnvironment
from permenum.layout import RunLayout
from permenum.records import SearchPlan, now_utc
from permenum.slurm import commands
from permenum.slurm.backend import Backend, Submitted
from permenum.slurm.queue import TaskState, array_spec
from permenum.slurm.script import SbatchOptions, check_run_path, comment_line, entry_point_dir, quote_option
from permenum.slurm.submissions import append_submission


def job_name(plan: SearchPlan) -> str:
    return f"permenum-search-{plan.problem}{plan.n}-{plan.run_id[:12]}"


def render(layout: RunLayout, plan: SearchPlan, options: SbatchOptions) -> str:
    """The array script's text (no I/O). Every value from the user or the file system is quoted."""
    options.validate()
    check_run_path(layout)
    q = shlex.quote
    directives = [f"--job-name={q(job_name(plan))}", f"--array={array_spec(list(range(plan.tasks)), options.throttle)}",
                  f"--output={q(str(layout.slurm_log_pattern))}", "--no-requeue", "--open-mode=append"]
    directives += [f"--time={options.time}"] if options.time else []
    directives += [f"--partition={q(options.partition)}"] if options.partition else []
    directives += [f"--account={q(options.account)}"] if options.account else []
    directives += [f"--gres=gpu:{options.gpus_per_task}"] if options.gpus_per_task else []
    directives += [quote_option(a) for a in options.extra]
    lines = [
        "#!/bin/bash",
        comment_line(f"permenum search: {plan.problem} n={plan.n}, {plan.tasks} tasks from seed {plan.seed}, run {plan.run_id}"),
        "# Rendered by `permenum search --submit`. Array index = task (its seeds: search.json's seed + task * 2^32 + walk).",
        *(f"#SBATCH {d}" for d in directives),
        "",
        ': "${SLURM_ARRAY_TASK_ID:?submit this script as an array job: sbatch --array=... (index = task)}"',
        f'export PATH={q(str(entry_point_dir()))}:"$PATH"',
        'echo "permenum: search task $SLURM_ARRAY_TASK_ID, job ${SLURM_ARRAY_JOB_ID} on $(hostname) at $(date -Is)"',
        f'exec permenum search-task {q(str(layout.root))} --index "$SLURM_ARRAY_TASK_ID"',
        "",
    ]
    return "\n".join(lines)


def submit(layout: RunLayout, plan: SearchPlan, backend: Backend, options: SbatchOptions) -> Submitted:
    limit = backend.config().get("MaxArraySize", "")
    if limit.isdigit() and plan.tasks > int(limit):
        raise UserError(f"--tasks {plan.tasks} is more than this cluster's MaxArraySize ({limit}): ask for fewer tasks "
                        "(each runs as many walks as its device holds)")
    script = layout.slurm_dir / "search.sbatch"
    write_bytes_atomic(script, render(layout, plan, options).encode())
    layout.logs_dir.mkdir(parents=True, exist_ok=True)  # SLURM cannot create the --output directory
    spec = array_spec(list(range(plan.tasks)), options.throttle)
    submitted = backend.submit(script, [f"--array={spec}"])
    append_submission(layout, {"time": now_utc(), "kind": "search", "job_id": submitted.job_id,
                               "cluster": submitted.cluster, "array": spec, "offset": 0,
                               "partitions": f"0-{plan.tasks - 1}", "throttle": options.throttle,
                               "command": submitted.command, "script": str(script)})
    return submitted


def cancel_others(plan: SearchPlan, task: int) -> str:
    """Cancel every task of this array job but ``task`` (pending ones never start); one line on what was done."""
    origin = TaskEnvironment.read().origin
    if origin.slurm_array_job_id is None:
        return "not an array task: nothing to cancel"
    others = [t for t in range(plan.tasks) if t != task]
    if not others:
        return "no other tasks"
    target = f"{origin.slurm_array_job_id}_[{array_spec(others, None)}]"
    try:
        commands.run(["scancel", "--quiet", target])
    except commands.SlurmCommandError as exc:  # tasks that ended meanwhile: the others are cancelled all the same
        return f"cancelled the rest of the array ({exc.summary()})"
    return f"cancelled the rest of the array ({target})"


def queue(backend: Backend, plan: SearchPlan) -> list[TaskState]:
    """The search's tasks SLURM still holds (pending or running)."""
    return backend.queue(job_name(plan))
