"""What SLURM says about a run's array tasks: parsers for squeue, scontrol, sacct and jobcomp text, and the
tables that say which SLURM job states mean waiting, running, ended badly or ended well.

Parsers are pure (text in, records out) so they are tested on recorded output. The scheduler is a hint:
`permenum.slurm.status` decides what a partition is, with the result files as the truth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from permenum.ranges import compact_ranges, expand_ranges

# --------------------------------------------------------------------------- state tables
# From squeue(1) "JOB STATE CODES". A state in none of these tables is reported as unknown, never
# taken as success; a queued job in an unknown state counts as pending (it is still in the queue).

#: Waiting for resources, held, or put back in the queue (a requeued task runs again by itself).
PENDING_STATES = frozenset({"PENDING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SPECIAL_EXIT"})
#: Holding an allocation: started, not yet ended (SUSPENDED/STOPPED jobs resume).
RUNNING_STATES = frozenset({"RUNNING", "CONFIGURING", "COMPLETING", "SIGNALING", "STAGE_OUT", "RESIZING",
                            "SUSPENDED", "STOPPED"})
#: Ended without finishing the work: non-zero exit, cancelled, time limit, node failure, OOM, ...
FAILED_STATES = frozenset({"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
                           "DEADLINE", "PREEMPTED"})
#: Ended with exit code 0 (still not "done": only a result file says that).
COMPLETED_STATES = frozenset({"COMPLETED"})


def category(state: str) -> str:
    """"pending", "running", "failed", "completed" or "unknown" for a SLURM state name."""
    for name, table in (("pending", PENDING_STATES), ("running", RUNNING_STATES), ("failed", FAILED_STATES),
                        ("completed", COMPLETED_STATES)):
        if state in table:
            return name
    return "unknown"


def normalize_state(raw: str) -> str:
    """sacct writes "CANCELLED by 0", squeue/scontrol "CANCELLED"; some versions append "+"."""
    return raw.strip().split(" ")[0].rstrip("+").upper()


@dataclass(frozen=True)
class TaskState:
    """One array task as one source saw it: partition ``index + offset`` (the offset its submission
    handed the script, 0 unless the run has more partitions than the cluster's MaxArraySize)."""

    array_job_id: int
    index: int
    state: str
    source: str
    reason: str = ""
    exit_code: str = ""
    #: False for a task the source says never ran (cancelled while pending: no time, no log, no exit code)
    started: bool = True
    offset: int = 0

    @property
    def partition(self) -> int:
        return self.index + self.offset

    @property
    def slurm_id(self) -> str:
        return f"{self.array_job_id}_{self.index}"

    @property
    def category(self) -> str:
        return category(self.state)

    def describe(self, sources: str | None = None) -> str:
        """E.g. "job 12_3 FAILED (NonZeroExitCode, exit 1:0) [scontrol]"."""
        extra = [x for x in (self.reason if self.reason not in ("", "None") else "",
                             f"exit {self.exit_code}" if self.exit_code not in ("", "0:0") else "") if x]
        return (f"job {self.slurm_id} {self.state}" + ("" if self.started else " before it started")
                + (f" ({', '.join(extra)})" if extra else "")
                + f" [{sources or self.source}]")


# --------------------------------------------------------------------------- array index sets


def array_spec(indices: list[int], throttle: int | None = None) -> str:
    """The ``--array`` value: ``[3, 7, 12, 13, 14], 2`` -> ``"3,7,12-14%2"`` (array task indices)."""
    return compact_ranges(indices) + (f"%{throttle}" if throttle else "")


# --------------------------------------------------------------------------- parsers

#: squeue -h -r -o SQUEUE_FORMAT: -r gives one line per array task, pending ones included.
SQUEUE_FORMAT = "%F|%K|%T|%r|%j"


def parse_squeue(text: str, job_name: str) -> list[TaskState]:
    """Lines of ``SQUEUE_FORMAT`` for ``job_name``; non-array jobs (task id N/A) are not ours."""
    records: list[TaskState] = []
    for line in text.splitlines():
        fields = line.strip().split("|", 4)
        if len(fields) != 5 or fields[4] != job_name:
            continue
        array_job, task, state, reason, _ = fields
        for index in _task_ids(task):
            records.append(TaskState(int(array_job), index, normalize_state(state), "squeue", reason))
    return records


def _task_ids(field: str) -> list[int]:
    """An array task list as SLURM prints it (``5-95:5%1``: the end is a task); one cut short (``37-...%3``)
    is refused, never read as the tasks it shows: the rest would be missed."""
    field = field.strip()
    if not field or field.upper() in ("N/A", "(NULL)"):
        return []
    if "..." in field:
        raise ValueError(f"array task list cut short: {field!r} (SLURM_BITSTR_LEN=0 prints it whole)")
    return expand_ranges(field)


#: scontrol's RunTime and sacct's Elapsed of a task that never ran (the pending elements of a
#: cancelled array keep one record, with this time; an element cancelled alone leaves none).
_NO_TIME = "00:00:00"

def _ran(run_time: str, exit_code: str) -> bool:
    """Whether a task ran: it has run time, or an exit code of its own. A requeued task's RunTime starts
    again from 0, so one that checkpointed (exit 75:0), was requeued and then cancelled while pending
    read "CANCELLED before it started"; a task that never started exits 0:0."""
    return run_time != _NO_TIME or exit_code not in ("", "0:0")


# A key starts a field when it follows a space: "Key=". Values may hold spaces (paths), so split only
# before an identifier followed by '=' (scontrol's keys: JobId, AllocNode:Sid, TRES, ...).
_KEY_START = re.compile(r" (?=[A-Za-z][A-Za-z0-9_:/]*=)")


def parse_key_values(line: str) -> dict[str, str]:
    """One ``scontrol show job -o`` (or jobcomp/filetxt) line -> {key: value}."""
    out: dict[str, str] = {}
    for field in _KEY_START.split(line.strip()):
        key, sep, value = field.partition("=")
        if sep:
            out[key] = value
    return out


def _from_key_values(kv: dict[str, str], name_key: str, job_name: str, source: str) -> list[TaskState]:
    if kv.get(name_key) != job_name or not kv.get("ArrayJobId", "").isdigit():
        return []
    state = normalize_state(kv.get("JobState", ""))
    started = _ran(kv.get("RunTime", ""), kv.get("ExitCode", ""))
    return [TaskState(int(kv["ArrayJobId"]), p, state, source, kv.get("Reason", ""), kv.get("ExitCode", ""), started)
            for p in _task_ids(kv.get("ArrayTaskId", ""))]


def parse_scontrol_jobs(text: str, job_name: str) -> list[TaskState]:
    """``scontrol show job -o``: every job the controller still remembers (ended ones for MinJobAge)."""
    return _parse_job_lines(text, "JobName", job_name, "scontrol")


def parse_jobcomp(text: str, job_name: str) -> list[TaskState]:
    """jobcomp/filetxt's log: one line per ended job, kept after the controller forgets it."""
    return _parse_job_lines(text, "Name", job_name, "jobcomp")


def _parse_job_lines(text: str, name_key: str, job_name: str, source: str) -> list[TaskState]:
    """Both write one ``JobId=... Key=Value ...`` line per job; they differ in the job name's key."""
    records: list[TaskState] = []
    for line in text.splitlines():
        if line.startswith("JobId="):
            records.extend(_from_key_values(parse_key_values(line), name_key, job_name, source))
    return records


#: sacct --parsable2 --noheader -X -o SACCT_FIELDS
SACCT_FIELDS = "JobID,JobName,State,ExitCode,Reason,Elapsed"
_SACCT_ID = re.compile(r"^(\d+)_(\[?[\d,\-:%.]+\]?)$")


def parse_sacct(text: str, job_name: str) -> list[TaskState]:
    """``sacct --parsable2`` lines; array tasks are ``12_3``, unstarted ones ``12_[4-7%2]``."""
    records: list[TaskState] = []
    for line in text.splitlines():
        fields = line.split("|")
        if len(fields) != 6 or fields[1] != job_name:
            continue
        m = _SACCT_ID.match(fields[0])
        if not m:
            continue
        state = normalize_state(fields[2])
        records.extend(TaskState(int(m.group(1)), p, state, "sacct", fields[4], fields[3], _ran(fields[5], fields[3]))
                       for p in _task_ids(m.group(2)))
    return records


def parse_config(text: str) -> dict[str, str]:
    """``scontrol show config``: "Key = Value" lines -> {Key: Value}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and " " not in key.strip():
            out[key.strip()] = value.strip()
    return out


def parse_version(text: str) -> tuple[int, int]:
    """``sinfo --version`` ("slurm-wlm 22.05.8", "slurm 25.11.0") or a pyslurm version -> (major, minor)."""
    m = re.search(r"(\d+)\.(\d+)", text)
    if not m:
        raise ValueError(f"no version number in {text!r}")
    return int(m.group(1)), int(m.group(2))
