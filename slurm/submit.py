"""`permenum submit` and `permenum resubmit`: sbatch array jobs over the partitions that need it.

Both submit ``RUN/slurm/array.sbatch`` with an explicit ``--array=<indices>%T`` on the sbatch command line
(it overrides the script's own #SBATCH --array). Where the cluster's MaxArraySize allows, that is one array
whose index is the partition number: a resubmission of 3, 7, 12, 13, 14 is ``--array=3,7,12-14%T``.
Beyond it, the partitions are split into as few arrays as fit, each handed a partition offset as the
script's argument (partition = index + offset), and with a throttle each array waits for the one before
(``--dependency=afterany``), so the run never holds more than T tasks. Every submission is appended to
``RUN/submissions.jsonl``: time, kind, job id, array spec, offset, the exact sbatch command. With
``--workers K`` the array is of K tasks instead, each handed the partitions as the script's argument and
counting them until none is left (`permenum task RUN --only LIST`); `resubmit` keeps the mode of the script.

Neither submits a partition that is done or still queued. While any partition of the run is pending or
running they refuse (a second submission could run it twice, and a running task may still fail and belong
in the next resubmission) unless --force, which submits the others and leaves the queued ones alone.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from permenum.atomic import write_bytes_atomic
from permenum.errors import UserError
from permenum.ranges import brief_ranges, compact_ranges
from permenum.layout import RunLayout
from permenum.lock import run_lock
from permenum.records import Manifest, check_verification_options, load_manifest
from permenum.slurm.backend import Backend, Submitted
from permenum.slurm.commands import SlurmCommandError
from permenum.slurm.queue import array_spec
from permenum.slurm.script import SbatchOptions, entry_point_dir, job_name, render
from permenum.slurm.status import StatusReport, gather
from permenum.slurm.submissions import append_submission, last_throttle, last_workers, site_shards
from permenum.task_options import TaskOptions


#: The longest list of partitions handed a worker array as its script's argument (a command line holds 128 KiB
#: an argument; SLURM keeps it in the job's record).
MAX_WORKER_LIST = 64 * 1024


@dataclass(frozen=True)
class Outcome:
    """What a submit/resubmit did: `submitted` is empty when nothing needed submitting (see `message`)."""

    message: str
    partitions: list[int]
    submitted: list[Submitted] = field(default_factory=list)


@dataclass(frozen=True)
class ArrayPlan:
    """One sbatch array: partition = index + offset; the offset is the script's argument (none when 0). Of
    ``workers`` tasks instead (`submit --workers`): each counts ``partitions``, the script's argument, until
    none is left (`permenum task RUN --only LIST`)."""

    offset: int
    partitions: list[int]
    workers: int | None = None

    @property
    def indices(self) -> list[int]:
        if self.workers:
            return list(range(self.workers))
        return [p - self.offset for p in self.partitions]

    @property
    def script_args(self) -> list[str]:
        if self.workers:
            return [compact_ranges(self.partitions)]
        return [str(self.offset)] if self.offset else []

    def describe(self, throttle: int | None) -> str:
        spec = f"--array={array_spec(self.indices, throttle)}"
        if self.workers:
            return f"{spec}: {self.workers} workers over partitions {compact_ranges(self.partitions)}"
        return f"{spec} with offset {self.offset} (partitions {compact_ranges(self.partitions)})" if self.offset else spec


def render_script(layout: RunLayout, manifest: Manifest, options: SbatchOptions) -> str:
    options.validate()
    check_kernel(manifest, options.task)
    check_device(options.task)
    title = (f"permenum array job: {manifest.problem} n={manifest.n}, {manifest.num_partitions} partitions, "
             f"run {manifest.run_id}")
    return render(layout, job_name(manifest.run_id, manifest.problem, manifest.n), manifest.num_partitions, options,
                  entry_point_dir(), title)


def check_kernel(manifest: Manifest, task: TaskOptions | None) -> None:
    """A kernel that cannot run this pool would fail every array task of the job: refuse it before anything is submitted."""
    if task is None or task.kernel is None:
        return
    from permenum.solver.registry import check_kernel as check

    check(manifest.problem, task.kernel, manifest.symmetry)


#: What `--device` names (solver.devices resolves it on the node): a kind, or PLATFORM:DEVICE, then /K sub-devices.
_DEVICE = re.compile(r"(default|all|gpu|cpu|accelerator|\d+:\d+)?(/[1-9]\d*)?")


def check_device(task: TaskOptions | None) -> None:
    """A --device that no node could resolve would fail every array task of the job: refuse it before anything
    is queued. Only its form is checked: the node's devices are not this host's (a login node has no GPU)."""
    spec = task.device if task else None
    if spec is not None and (not spec.strip() or not _DEVICE.fullmatch(spec.strip().lower())):
        raise UserError(f"unknown device {spec!r} (use gpu, cpu, accelerator, all or PLATFORM:DEVICE, optionally "
                        "/K sub-devices, e.g. cpu/2)")


def submit(layout: RunLayout, backend: Backend, options: SbatchOptions, force: bool = False,
           backend_note: str = "", shards: list[int] | None = None,
           dry_run: bool = False) -> tuple[Outcome, StatusReport]:
    """Render the script and submit every partition (of ``shards``, a site's share of the pool; None: the
    shards given here before, if any) that is neither done nor queued; ``dry_run``: say how, write nothing."""
    with run_lock(layout, "submit"):
        return _submit(layout, backend, options, force, backend_note, this_sites(layout, backend, shards), dry_run)


def this_sites(layout: RunLayout, backend: Backend, shards: list[int] | None) -> list[int] | None:
    """The shards a command at this site works on: those given (`--only all`: every partition), else
    those its earlier submits were given (another site counts the rest: submitting them here would count
    them twice)."""
    if shards is None:
        return site_shards(layout, backend.config().get("ClusterName") or None)
    return shards


def _submit(layout: RunLayout, backend: Backend, options: SbatchOptions, force: bool,
            backend_note: str, shards: list[int] | None, dry_run: bool) -> tuple[Outcome, StatusReport]:
    manifest = load_manifest(layout)
    task = options.task or TaskOptions()
    check_verification_options(layout, task.kernel, task.device)
    text = render_script(layout, manifest, options)
    report = gather(layout, backend, backend_note)
    if report.complete:
        return Outcome(f"nothing to submit: all {report.num_partitions} partitions of {layout.root} have results "
                       "(run `permenum collect`)", []), report
    todo = _within(sorted(report.states["failed"] + report.states["missing"]), shards)
    if not todo:
        which = f"partitions {compact_ranges(shards)}" if shards is not None else "partitions"
        return Outcome(f"nothing to submit: the {which} have results or are pending or running", []), report
    _refuse_while_queued(report, force, "submit")
    plans = plan_arrays(todo, backend.config(), options.workers)
    if dry_run:
        return Outcome(dry_run_message(layout, backend, plans, options.throttle), todo), report
    # the script replaces the last one only once sbatch accepted it: `resubmit` must not inherit rejected options
    write_bytes_atomic(layout.candidate_sbatch_script, text.encode())
    outcome = _submit_arrays(layout, backend, plans, options.throttle, "submit", _as_record(options),
                             layout.candidate_sbatch_script, shards)
    return outcome, report


def _within(partitions: list[int], shards: list[int] | None) -> list[int]:
    chosen = None if shards is None else set(shards)
    return partitions if chosen is None else [p for p in partitions if p in chosen]


def _as_record(options: SbatchOptions) -> dict[str, Any]:
    """The options as `submissions.jsonl` keeps them: the sbatch ones and the task's, side by side."""
    fields = {k: v for k, v in asdict(options).items() if k != "task"}
    return {**fields, **asdict(options.task or TaskOptions())}


def resubmit(layout: RunLayout, backend: Backend, include_missing: bool = False, force: bool = False,
             throttle: int | None = None, dry_run: bool = False,
             backend_note: str = "", shards: list[int] | None = None) -> tuple[Outcome, StatusReport]:
    """Submit the failed partitions (and the missing ones if asked) with the script `submit` wrote, within
    ``shards`` (as `submit` reads them: this_sites)."""
    SbatchOptions(throttle=throttle).validate()
    with run_lock(layout, "resubmit"):
        return _resubmit(layout, backend, include_missing, force, throttle, dry_run, backend_note,
                         this_sites(layout, backend, shards))


def _resubmit(layout: RunLayout, backend: Backend, include_missing: bool, force: bool, throttle: int | None,
              dry_run: bool, backend_note: str, shards: list[int] | None) -> tuple[Outcome, StatusReport]:
    report = gather(layout, backend, backend_note)
    if report.complete:
        return Outcome(f"nothing to resubmit: all {report.num_partitions} partitions have results", []), report
    todo = _within(report.states["failed"] + (report.states["missing"] if include_missing else []), shards)
    if not todo:
        hints = []
        if report.queued:
            hints.append(f"{brief_ranges(report.queued)} still pending or running")
        if report.states["missing"] and not include_missing:
            hints.append(f"{brief_ranges(report.states['missing'])} never ran (add --include-missing)")
        hint = f" ({'; '.join(hints)})" if hints else ""
        return Outcome(f"nothing to resubmit: no failed partitions{hint}", []), report
    _refuse_while_queued(report, force, "resubmit")
    if not layout.sbatch_script.exists():
        raise UserError(f"{layout.sbatch_script} does not exist: run `permenum submit {layout.root}` first")
    workers = last_workers(layout)  # the run's script is a worker script where the latest submit made one
    if workers is not None and throttle is not None:
        raise UserError(f"--throttle: the run's tasks are {workers} workers (`submit --workers`), which run at once "
                        "and are throttled by their number")
    if throttle is None and workers is None:
        throttle = last_throttle(layout)
    plans = plan_arrays(sorted(todo), backend.config(), workers)
    if dry_run:
        return Outcome(dry_run_message(layout, backend, plans, throttle), sorted(todo)), report
    return _submit_arrays(layout, backend, plans, throttle, "resubmit", None, shards=shards), report


def _refuse_while_queued(report: StatusReport, force: bool, verb: str) -> None:
    if not report.queued or force:
        return
    jobs = sorted({j for js in report.queued_jobs.values() for j in js})
    raise UserError(
        f"refusing to {verb}: partitions {brief_ranges(report.queued)} of this run are still pending or running "
        f"(job {', '.join(map(str, jobs))}); wait for them (`permenum status {report.run}`), or use --force to "
        f"{verb} the others now")


def plan_arrays(partitions: list[int], config: dict[str, str], workers: int | None = None) -> list[ArrayPlan]:
    """The arrays to submit: one with index = partition whenever all fit below the cluster's MaxArraySize
    (read, not assumed: sites change it), else as few as can be, each starting at its first partition.
    With ``workers``: one array of that many workers (no more than the partitions) over all of them."""
    raw = config.get("MaxArraySize", "")
    if not raw.isdigit() or int(raw) < 1:
        raise UserError(f"cannot read MaxArraySize from `scontrol show config` (got {raw!r})")
    limit = int(raw)
    if workers:
        workers = min(workers, len(partitions))
        if workers > limit:
            raise UserError(f"--workers {workers} is more array tasks than the cluster's MaxArraySize={limit}")
        if len(compact_ranges(partitions)) > MAX_WORKER_LIST:
            raise UserError(f"the {len(partitions)} partitions to submit are too scattered to hand a worker array as "
                            f"one argument ({len(compact_ranges(partitions))} characters); submit them with --only in "
                            "a few ranges, or without --workers")
        return [ArrayPlan(0, partitions, workers)]
    if not partitions or max(partitions) < limit:
        return [ArrayPlan(0, partitions)]
    plans: list[ArrayPlan] = []
    for p in partitions:  # sorted
        if plans and p - plans[-1].offset < limit:
            plans[-1].partitions.append(p)
        else:
            plans.append(ArrayPlan(p, [p]))
    return plans


def sbatch_args(plan: ArrayPlan, throttle: int | None, before: str | None) -> tuple[list[str], list[str]]:
    """sbatch's options and the script's arguments for one array: its ``--array``; with a throttle, a
    dependency on the array ``before`` it (its job id), so the throttle holds for the run; its offset (a
    worker array's: its partitions)."""
    chained = [f"--dependency=afterany:{before}"] if throttle and before else []
    return [f"--array={array_spec(plan.indices, throttle)}", *chained], plan.script_args


def dry_run_message(layout: RunLayout, backend: Backend, plans: list[ArrayPlan], throttle: int | None) -> str:
    """The sbatch commands that the real submission runs, one line each; JOBk stands for the job id that
    sbatch gives the k-th array (not known before it is submitted)."""
    lines = []
    for k, plan in enumerate(plans, 1):
        args, script_args = sbatch_args(plan, throttle, f"JOB{k - 1}" if k > 1 else None)
        lines.append(f"  {shlex.join(backend.submit_command(layout.sbatch_script, args, script_args))}"
                     f"  # JOB{k}: partitions {compact_ranges(plan.partitions)}")
    count = sum(len(plan.partitions) for plan in plans)
    head = (f"dry run: would submit 1 array job ({count} partitions):" if len(plans) == 1 else
            f"dry run: would submit {len(plans)} array jobs ({count} partitions; MaxArraySize="
            f"{backend.config().get('MaxArraySize')}: partition = array index + the offset after the script"
            + ("; each after the one before, so the throttle holds for the run" if throttle else "") + "):")
    return "\n".join([head, *lines])


def _submit_arrays(layout: RunLayout, backend: Backend, plans: list[ArrayPlan], throttle: int | None, kind: str,
                   options: dict[str, Any] | None, script: Path | None = None,
                   shards: list[int] | None = None) -> Outcome:
    """sbatch ``script`` (default: the run's script) once per plan; once accepted, it is the run's script.

    With a throttle each array depends on the one before (afterany): the throttle holds for the run."""
    submitted: list[Submitted] = []
    for plan in plans:
        before = str(submitted[-1].job_id) if submitted else None
        try:
            submitted.append(_submit_array(layout, backend, plan, throttle, kind, options, before, script, shards))
        except SlurmCommandError as exc:
            if not submitted:
                raise
            done = ", ".join(str(s.job_id) for s in submitted)
            raise UserError(f"{exc.summary()}; jobs {done} were submitted and run partitions "
                            f"{compact_ranges([p for q in plans[:len(submitted)] for p in q.partitions])}: "
                            f"`permenum {kind} --force {layout.root}` submits the rest") from None
        script = None  # accepted: the candidate is now the run's script
    partitions = [p for plan in plans for p in plan.partitions]
    if plans[0].workers:
        message = f"submitted job {submitted[0].job_id}: {plans[0].describe(throttle)} ({len(partitions)} partitions)"
    elif len(plans) == 1:
        message = f"submitted job {submitted[0].job_id}: {plans[0].describe(throttle)} ({len(partitions)} partitions)"
    else:
        arrays = ", ".join(f"job {s.job_id} {plan.describe(throttle)}" for s, plan in zip(submitted, plans))
        chained = ", each after the one before (the throttle holds for the run)" if throttle else ""
        message = (f"submitted {len(plans)} array jobs, MaxArraySize={backend.config()['MaxArraySize']}{chained}: "
                   f"{arrays} ({len(partitions)} partitions)")
    return Outcome(message, partitions, submitted)


def _submit_array(layout: RunLayout, backend: Backend, plan: ArrayPlan, throttle: int | None, kind: str,
                  options: dict[str, Any] | None, before: str | None, script: Path | None,
                  shards: list[int] | None) -> Submitted:
    """sbatch one array (after the job ``before`` it, with a throttle) and record it in submissions.jsonl."""
    spec = array_spec(plan.indices, throttle)
    layout.logs_dir.mkdir(parents=True, exist_ok=True)  # SLURM cannot create the --output directory
    submitted = backend.submit(script or layout.sbatch_script, *sbatch_args(plan, throttle, before))
    if script is not None and script != layout.sbatch_script:
        os.replace(script, layout.sbatch_script)  # sbatch has its own copy of the script
    record = {
        "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "kind": kind,
        "job_id": submitted.job_id,
        "cluster": submitted.cluster,
        "array": spec,
        "offset": plan.offset,
        "partitions": compact_ranges(plan.partitions),
        "throttle": throttle,
        "workers": plan.workers,
        "command": submitted.command,
        "script": str(layout.sbatch_script),
    }
    if options is not None:
        record["options"] = options
    if shards is not None:
        record["shards"] = compact_ranges(shards)  # this site's share of the pool (slurm.submissions.site_shards)
    record["site"] = backend.config().get("ClusterName") or None
    append_submission(layout, record)
    return submitted
