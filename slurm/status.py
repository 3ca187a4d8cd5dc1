"""What each partition of a run is: done, running, pending, failed or missing.

* done: its result file exists (the truth; read last, so a task that ends during the query counts). A done
  partition whose task the queue still lists RUNNING or COMPLETING is that task ending; a duplicate is
  reported only where ``results/duplicates/`` holds one.
* running: a live task holds its claim (jobs.counting.claims.live_claims: what `run` and every task take while they
  count, so a local run's partitions show as running too, "(local)"), or the queue lists it running.
* pending / running: the queue (squeue, or pyslurm) lists its array task in such a state, or the controller's
  own record of the job (scontrol) holds it so: Slurm 22.05's ``squeue -r`` leaves out the last task of a
  pending array that it shows as a stepped range (``5-95:5%1`` listed 5 to 90), and a task the scheduler
  still holds is never failed.
* failed: not done, not queued, and something says it ran and ended: the scheduler (scontrol while it
  remembers the job, sacct where accounting exists, the jobcomp log where readable) reports an end
  state, the task left ``logs/part-NNNNN.error.json``, or SLURM wrote its log ``logs/%A_%a.out`` (a
  task that started and is gone without a result has ended, whatever the reason).
  One rule for a task cancelled while pending, however it was cancelled: failed (resubmit runs it).
  A task that ended with exit 75 checkpointed and stopped (a cancel, a time limit, a preemption not yet
  requeued): failed too, for resubmit to resume, and said first: "stopped, checkpointed at k of n states".
  SLURM keeps a CANCELLED record with no run time when the whole array is cancelled, and none at all
  when the element is cancelled alone: then ``submissions.jsonl`` says it was submitted, and a task
  that was submitted, is not queued, left no log and has no result never started.
* missing: none of the above: never submitted by permenum (or so long ago that nothing remembers it).

A worker array (`submit --workers`: its tasks count a list of partitions each, until none is left) stands for
its partitions (spread_workers): pending while any of its workers is queued (running where a claim is held),
and once all have ended each uncounted partition carries their end as an array task's would.

A run that `permenum submit` never touched (no ``slurm/array.sbatch``, no ``submissions.jsonl``) is a
local run (`permenum run`, `permenum task`): no scheduler knows it, and one may not exist here, so none
is asked and the report says so; its partitions are done, failed (an error record) or missing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from permenum.checkpoints.progress import RunProgress, run_progress
from permenum.ranges import compact_ranges
from permenum.layout import RunLayout
from permenum.errors import UserError
from permenum.jobs.counting.claims import Holder, live_claims
from permenum.records import Manifest, load_manifest, partition_scope, read_failure
from permenum.result_index import scan_results
from permenum.signals import EXIT_INTERRUPTED
from permenum.slurm.backend import Backend
from permenum.slurm.queue import TaskState
from permenum.slurm.script import job_name
from permenum.slurm.submissions import array_offsets, latest_submission, worker_arrays

STATES = ("done", "running", "pending", "failed", "missing")
#: The report's scheduler source for a local run.
NOT_ASKED = "none asked (a local run: never submitted)"
_LOG_TAIL_BYTES = 4096


@dataclass
class StatusReport:
    run: Path
    job_name: str
    num_partitions: int
    states: dict[str, list[int]]
    #: Why each failed partition counts as failed, newest evidence first.
    evidence: dict[int, list[str]] = field(default_factory=dict)
    #: The newest SLURM log of each partition that has one (the file to open).
    logs: dict[int, Path] = field(default_factory=dict)
    #: The array jobs holding each state's queued partitions, e.g. {"pending": [12, 15]}.
    queued_jobs: dict[str, list[int]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    backend: str = ""
    notes: list[str] = field(default_factory=list)
    progress: RunProgress | None = None
    scheduler_asked: bool = True
    #: Running partitions whose claim a task outside SLURM holds (`permenum run`, `task` by hand).
    local: list[int] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return len(self.states["done"]) == self.num_partitions

    @property
    def queued(self) -> list[int]:
        """The partitions SLURM holds: pending, or running under a job (a local process's are not queued)."""
        return sorted(set(self.states["pending"] + self.states["running"]) - set(self.local))

    def states_within(self, shards: list[int]) -> dict[str, list[int]]:
        """Each state's partitions among ``shards`` (a site's share of the pool)."""
        chosen = set(shards)
        return {state: [p for p in parts if p in chosen] for state, parts in self.states.items()}

    def as_json(self) -> dict[str, Any]:
        return {
            "run": str(self.run),
            "job_name": self.job_name,
            "partitions": self.num_partitions,
            "states": states_json(self.states),
            "failed": {str(i): {"evidence": self.evidence.get(i, []), "log": str(self.logs[i]) if i in self.logs else None}
                       for i in self.states["failed"]},
            "queued_jobs": self.queued_jobs,
            "sources": self.sources,
            "backend": self.backend,
            "scheduler_asked": self.scheduler_asked,
            "running_local": self.local,
            "notes": self.notes,
            "progress": None if self.progress is None else {
                "states_done": self.progress.states_done, "states_total": self.progress.states_total,
                "eta_seconds": self.progress.eta_seconds,
                "partial": {str(i): {"states_done": d, "states": t} for i, (d, t) in self.progress.partial.items()},
            },
        }


def states_json(states: dict[str, list[int]]) -> dict[str, Any]:
    """Each state's partitions as `status --json` writes them."""
    return {s: {"count": len(v), "compact": compact_ranges(v), "partitions": v} for s, v in states.items()}


@dataclass(frozen=True)
class Evidence:
    """Everything read about a run, before deciding: the inputs of `classify`."""

    num_partitions: int
    done: set[int]
    queue: list[TaskState]
    ended: list[TaskState]
    errors: dict[int, str]
    logs: dict[int, tuple[Path, str]]
    damaged: dict[int, str] = field(default_factory=dict)  # result files that failed their checks: not done
    submitted: dict[int, str] = field(default_factory=dict)  # partition -> the latest array task (JOB_INDEX) for it
    scope: list[int] | None = None  # the partitions the directory counts (a verification's sample); None: all
    claims: dict[int, Holder | None] = field(default_factory=dict)  # held by a live task (jobs.counting.claims.live_claims)
    checkpoints: dict[int, tuple[int, int]] = field(default_factory=dict)  # partition -> (states done, states)
    duplicates: set[int] = field(default_factory=set)  # partitions with a second result in results/duplicates/


def classify(ev: Evidence) -> tuple[dict[str, list[int]], dict[int, list[str]], dict[str, list[int]], list[str]]:
    """Pure decision: (partitions per state, failure evidence, queued array jobs per state, notes)."""
    states: dict[str, list[int]] = {s: [] for s in STATES}
    evidence: dict[int, list[str]] = {}
    notes: list[str] = []
    in_range = range(ev.num_partitions)
    queued: dict[int, str] = {}
    queued_by: dict[int, list[tuple[str, int]]] = {}
    for t in ev.queue:
        if t.partition not in in_range:
            notes.append(f"job {t.slurm_id} is not a partition of this run (0..{ev.num_partitions - 1})")
            continue
        cat = t.category
        if cat == "unknown":
            notes.append(f"job {t.slurm_id} is queued in state {t.state}, unknown to permenum: counted as pending")
            cat = "pending"
        if queued.get(t.partition) != "running":  # two submissions of one partition: running wins
            queued[t.partition] = cat
        queued_by.setdefault(t.partition, []).append((cat, t.array_job_id))
    # a running one is its task ending (the result is written first); a pending one finds the result and
    # ends without counting (`task` counts a done partition again only with --force)
    again = sorted(i for i in ev.done if queued.get(i) == "pending")
    if again:
        notes.append(f"partitions {compact_ranges(again)} are done and queued again: their tasks find the "
                     "result and end without counting")
    if ev.duplicates:
        notes.append(f"partitions {compact_ranges(sorted(ev.duplicates))} were counted more than once: the "
                     "later results are kept in results/duplicates/")
    jobs: dict[str, set[int]] = {"pending": set(), "running": set()}
    ended: dict[int, list[TaskState]] = {}
    for t in ev.ended:
        if t.partition in in_range and t.category not in ("pending", "running"):
            ended.setdefault(t.partition, []).append(t)
    for i in in_range if ev.scope is None else ev.scope:
        if i in ev.done:
            states["done"].append(i)
        elif i in ev.claims:  # a live task counts it, whatever the queue says meanwhile
            states["running"].append(i)
            jobs["running"].update(job for cat, job in queued_by.get(i, []) if cat == "running")
        elif i in queued:
            states[queued[i]].append(i)
            for cat, job in queued_by[i]:
                jobs[cat].add(job)
        else:
            why = _scheduler_evidence(ended.get(i, []))
            last = max(ended.get(i, []), key=lambda t: t.array_job_id, default=None)  # the newest job's end
            if last is not None and last.exit_code.startswith(f"{EXIT_INTERRUPTED}:"):
                k, n = ev.checkpoints.get(i, (0, 0))
                why.insert(0, f"stopped, checkpointed at {k} of {n} states (resubmit resumes it)" if n
                           else "stopped before its first checkpoint")
            if i in ev.damaged:
                why.insert(0, f"result damaged: {ev.damaged[i]}")
            if i in ev.errors:
                why.append(f"task error: {ev.errors[i]}")
            if i in ev.logs:
                path, last_line = ev.logs[i]
                if not last_line or last_line.removeprefix("error: ") not in ev.errors.get(i, ""):
                    why.append(f"log {path.name}: {last_line or '(empty)'}")
            if not why and i in ev.submitted:
                why.append(f"job {ev.submitted[i]} never started (not queued, no log, no record left): "
                           "cancelled while pending [submissions.jsonl]")
            if why:
                states["failed"].append(i)
                evidence[i] = why
            else:
                states["missing"].append(i)
    return states, evidence, {k: sorted(v) for k, v in jobs.items() if v}, notes


def _scheduler_evidence(records: list[TaskState]) -> list[str]:
    """One line per (job, state), newest job first, naming every source that reported it."""
    merged: dict[tuple[int, str], list[TaskState]] = {}
    for t in records:
        merged.setdefault((t.array_job_id, t.state), []).append(t)
    lines: list[str] = []
    for (job, _state), same in sorted(merged.items(), key=lambda kv: -kv[0][0]):
        best = max(same, key=lambda t: (t.reason not in ("", "None"), t.exit_code != "", t.source))
        sources = ", ".join(sorted({t.source for t in same}))
        line = best.describe(sources)
        if best.category == "completed":
            line += ": exited 0 without writing a result"
        elif best.category == "unknown":
            line += ": ended in a state unknown to permenum"
        lines.append(line)
    return lines


def was_submitted(layout: RunLayout) -> bool:
    """Whether `permenum submit` (or sbatch of its script) may have put the run in a queue."""
    return layout.sbatch_script.exists() or layout.submissions.exists()


@dataclass(frozen=True)
class SchedulerView:
    """What the scheduler said about a run's jobs: queued tasks, ended ones, and the sources read."""

    queue: list[TaskState]
    ended: list[TaskState]
    sources: dict[str, str]
    backend: str
    asked: bool = True
    notes: list[str] = field(default_factory=list)


def held_tasks(listed: list[TaskState], remembered: list[TaskState], listed_by: str,
               remembered_by: str) -> tuple[list[TaskState], list[str]]:
    """The queued tasks: those the queue listed, and those the controller's records hold pending or running
    that it left out (Slurm 22.05's ``squeue -r`` drops the last task of a stepped range: recorded in
    tests/data/squeue_r_stepped.txt). A note names what was left out: (queue, notes)."""
    seen = {(t.array_job_id, t.index) for t in listed}
    missed: dict[tuple[int, int], TaskState] = {}
    for t in remembered:
        if t.category in ("pending", "running") and (t.array_job_id, t.index) not in seen:
            missed.setdefault((t.array_job_id, t.index), t)
    if not missed:
        return listed, []
    by_job: dict[int, list[int]] = {}
    for job, index in missed:
        by_job.setdefault(job, []).append(index)
    which = "; ".join(f"job {job} tasks {compact_ranges(indices)}" for job, indices in sorted(by_job.items()))
    return listed + list(missed.values()), [f"{listed_by} left out tasks that {remembered_by} holds pending or "
                                            f"running (counted as queued): {which}"]


NO_SCHEDULER = SchedulerView([], [], {"scheduler": NOT_ASKED}, "none", asked=False)


def ask_scheduler(backend: Backend, name: str, manifest: Manifest, backend_note: str = "") -> SchedulerView:
    """Every source the backend has: the queue, the controller's memory, sacct, the jobcomp log."""
    listed = backend.queue(name)
    remembered = backend.jobs(name)
    queue, notes = held_tasks(listed, remembered, backend.queue_source, backend.jobs_source)
    accounting = backend.accounting(name, _since(manifest))
    jobcomp = backend.jobcomp(name)
    sources = {
        backend.queue_source: f"{len(listed)} queued tasks",
        backend.jobs_source: f"{len(remembered)} task records (kept for MinJobAge="
                             f"{backend.config().get('MinJobAge', '?')})",
        "sacct": accounting.note,
        "jobcomp": jobcomp.note,
    }
    return SchedulerView(queue, remembered + accounting.records + jobcomp.records, sources,
                         backend_note or backend.name, notes=notes)


def gather(layout: RunLayout, backend: Backend | None, backend_note: str = "") -> StatusReport:
    """Ask the scheduler (none when ``backend`` is None), then read the result files, then classify."""
    manifest = load_manifest(layout)
    name = job_name(manifest.run_id, manifest.problem, manifest.n)
    submitted = latest_submission(layout)  # before the queue: a submission landing meanwhile is then queued
    # the scheduler first: a task that ends meanwhile has its result by the time the results are read
    view = NO_SCHEDULER if backend is None else ask_scheduler(backend, name, manifest, backend_note)
    offsets = array_offsets(layout)  # after the queue: every job it lists has its line by now
    workers = worker_arrays(layout)
    scan = scan_results(layout, manifest)
    done = set(scan.done)
    scope = partition_scope(layout, manifest)
    not_done = [i for i in scope if i not in done]
    errors = _error_records(layout, not_done)
    logs = _latest_logs(layout, set(not_done), offsets, set(workers))
    claims = live_claims(layout, not_done)
    progress = run_progress(layout, manifest, scan)
    queue, ended = spread_workers(view.queue, view.ended, workers, done, set(progress.partial))
    ev = Evidence(manifest.num_partitions, done, _placed(queue, offsets), _placed(ended, offsets), errors,
                  {i: (p, _last_line(p)) for i, p in logs.items()}, scan.damaged, submitted,
                  None if len(scope) == manifest.num_partitions else scope, claims, progress.partial,
                  layout.duplicated_partitions())
    states, evidence, queued_jobs, notes = classify(ev)
    # a local process's: its claim names a holder with no SLURM task (an unwritten one, a task taking its claim
    # that instant, is not known to be local: `submit` must not count it twice, a test must not stop waiting)
    local = [i for i in states["running"] if (holder := claims.get(i)) is not None and not holder.slurm_task]
    sources = {
        "results": f"{len(done)} result files" + (f", {len(scan.damaged)} damaged" if scan.damaged else ""),
        **view.sources,
        "task logs": f"{len(errors)} error records, {len(logs)} SLURM logs of unfinished partitions",
        "claims": f"{len(claims)} held by live tasks",
    }
    return StatusReport(layout.root, name, len(scope), states, evidence,
                        {i: logs[i] for i in states["failed"] if i in logs}, queued_jobs, sources, view.backend,
                        view.notes + notes, progress, view.asked, local)


def _placed(records: list[TaskState], offsets: dict[int, int]) -> list[TaskState]:
    """Each array task with the offset its job's script was handed (none for a job submitted by hand; a
    worker array's tasks are placed already: spread_workers)."""
    return [t if t.offset else replace(t, offset=offsets.get(t.array_job_id, 0)) for t in records]


def spread_workers(queue: list[TaskState], ended: list[TaskState], workers: dict[int, list[int]],
                   done: Collection[int] = (), checkpointed: Collection[int] = ()) -> tuple[list[TaskState], list[TaskState]]:
    """A worker array's tasks (`submit --workers`) as the partitions they count, each placed at its partition
    (offset = partition - index): while any of its workers is queued, every one of its partitions is pending
    (a live claim says which run); once all have ended, each partition stands with the telling end of the
    workers (an exit 75: stopped; a failure; else any), for classify to judge. A worker's exit 75 speaks
    only for the partitions with a checkpoint: the others were never started. Done partitions stand alone
    (a worker array still queued does not queue them again)."""
    plain_queue = [t for t in queue if t.array_job_id not in workers]
    plain_ended = [t for t in ended if t.array_job_id not in workers]
    for job, covered in workers.items():
        partitions = [p for p in covered if p not in done]
        held = [t for t in queue if t.array_job_id == job]
        if held:
            plain_queue += [replace(held[0], state="PENDING", offset=p - held[0].index) for p in partitions]
            continue
        over = [t for t in ended if t.array_job_id == job]
        if not over:
            continue
        telling = max(over, key=lambda t: (t.exit_code.startswith(f"{EXIT_INTERRUPTED}:"), t.category == "failed"))
        plain_ended += [replace(t, offset=p - t.index, exit_code="" if t.exit_code.startswith(f"{EXIT_INTERRUPTED}:")
                                and p not in checkpointed else t.exit_code)
                        for t in over if t.index == telling.index for p in partitions]
    return plain_queue, plain_ended


def _since(manifest: Manifest) -> str:
    """sacct's --starttime: when the pool was made (no job of this run is older), in local time."""
    try:
        created = dt.datetime.fromisoformat(manifest.created)
        return created.astimezone().strftime("%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return "now-365days"


def _error_records(layout: RunLayout, partitions: Iterable[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    recorded = layout.with_failure_file()
    for i in partitions:
        if i not in recorded:
            continue
        try:
            failure = read_failure(layout, i)
        except UserError as exc:
            out[i] = f"unreadable error record {layout.failure_file(i).name} ({exc})"
            continue
        if failure is not None:
            out[i] = failure.describe()
    return out


def _latest_logs(layout: RunLayout, partitions: set[int], offsets: dict[int, int],
                 workers: set[int]) -> dict[int, Path]:
    """Partition -> the log of its latest array task (a worker's log is of many partitions: not one's)."""
    latest: dict[int, Path] = {}
    for job, index, path in layout.slurm_logs():  # oldest job first: later ones win
        if job in workers:
            continue
        partition = index + offsets.get(job, 0)
        if partition in partitions:
            latest[partition] = path
    return latest


def _last_line(path: Path) -> str:
    """The last non-empty line of a task log: slurmstepd's "*** JOB ... CANCELLED ***", "error: ...", ..."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - _LOG_TAIL_BYTES))
            lines = [ln.strip() for ln in fh.read().decode(errors="replace").splitlines() if ln.strip()]
    except OSError as exc:
        return f"(unreadable: {exc.strerror})"
    return lines[-1][:300] if lines else ""
