"""The array job script: a pure function from a few options to the text of ``RUN/slurm/array.sbatch``.

The script is meant to be read and, if need be, submitted by hand (`sbatch RUN/slurm/array.sbatch`): plain
#SBATCH lines, array index = partition number, and it ends in ``exec permenum task ...`` so the Python
process is the batch shell itself and receives ``--signal=B:USR1@...``. Everything that comes from the user
or the file system is quoted with shlex.quote (sbatch's #SBATCH parser honours the same quoting).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.slurm.queue import array_spec
from permenum.task_options import TaskOptions

#: Seconds before the time limit at which SLURM sends USR1 to the task (time to checkpoint and requeue).
DEFAULT_SIGNAL_SECONDS = 120
#: sbatch's --signal=...@S takes 0-65535 seconds (a 16-bit field of the job).
MAX_SIGNAL_SECONDS = 65535

#: sbatch options that permenum sets itself; an --sbatch-arg may not override them (it would break the
#: partition numbering, the log names status reads, or the job name that identifies the run).
PROTECTED = {
    "--array": "permenum sets it from the partitions (use --throttle for %T)",
    "--job-name": "it identifies the run's jobs to `permenum status`",
    "--output": "status reads the task logs at RUN/logs/%A_%a.out",
    "--error": "status reads the task logs at RUN/logs/%A_%a.out",
    "--parsable": "permenum adds it",
    "--wrap": "the script is the command",
    "--signal": "permenum sets it",
    "--time": "use --time",
    "--partition": "use --partition",
    "--account": "use --account",
    "--gres": "use --gpus-per-task",
    "--no-requeue": "tasks requeue themselves after a time limit or a preemption",
}
_SHORT = {"-a": "--array", "-J": "--job-name", "-o": "--output", "-e": "--error", "-t": "--time",
          "-p": "--partition", "-A": "--account"}
#: SLURM keeps a time limit as 32-bit minutes, with the top values reserved (INFINITE, NO_VAL).
MAX_TIME_MINUTES = 0xFFFFFFFD


def _minutes(limit: str) -> int:
    """Minutes of a limit `_TIME` accepts (sbatch: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S); 0 for UNLIMITED."""
    if limit.upper() in ("UNLIMITED", "INFINITE"):
        return 0
    days, _, rest = limit.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days:  # D-H[:M[:S]]
        hours, minutes = parts[0], (parts[1] if len(parts) > 1 else 0)
        return int(days) * 1440 + hours * 60 + minutes
    return parts[0] if len(parts) <= 2 else parts[0] * 60 + parts[1]  # M[:S] or H:M:S


_TIME = re.compile(r"^(\d+-)?\d+(:\d{1,2}){0,2}$|^(UNLIMITED|INFINITE)$", re.IGNORECASE)


@dataclass(frozen=True)
class SbatchOptions:
    """What `permenum submit` lets a user choose about the array job."""

    throttle: int | None = None
    gpus_per_task: int | None = None
    time: str | None = None
    partition: str | None = None
    account: str | None = None
    extra: tuple[str, ...] = field(default_factory=tuple)
    signal_seconds: int = DEFAULT_SIGNAL_SECONDS
    #: What every `permenum task` of the array is told (--device, --kernel, ...); None: the task's defaults.
    task: TaskOptions | None = None
    #: An array of this many workers, each counting the submitted partitions until none is left (`task --only`);
    #: None: one array task a partition.
    workers: int | None = None

    def validate(self) -> None:
        """Refuse bad values before anything is written or submitted."""
        if self.throttle is not None and self.throttle < 1:
            raise UserError(f"--throttle must be at least 1 (got {self.throttle})")
        if self.workers is not None and self.workers < 1:
            raise UserError(f"--workers must be at least 1 (got {self.workers})")
        if self.workers is not None and self.throttle is not None:
            raise UserError("--workers and --throttle: a worker array runs its W tasks at once and is throttled by "
                            "W itself; give one of them")
        if self.gpus_per_task is not None and self.gpus_per_task < 1:
            raise UserError(f"--gpus-per-task must be at least 1 (got {self.gpus_per_task})")
        if self.time is not None and not _TIME.fullmatch(self.time):
            raise UserError(f"--time {self.time!r} is not a SLURM time limit (e.g. 01:30:00, 2-00:00:00, 90)")
        if self.time is not None and _minutes(self.time) > MAX_TIME_MINUTES:
            raise UserError(f"--time {self.time!r} is beyond what SLURM can hold ({MAX_TIME_MINUTES} minutes); "
                            "use UNLIMITED for no limit")
        lines = [(self.partition, "--partition"), (self.account, "--account")]
        if self.task is not None:
            self.task.validate()
            lines += [(self.task.device, "--device"), (self.task.kernel, "--kernel")]
        for value, what in lines:
            if value is not None and (not value.strip() or "\n" in value):
                raise UserError(f"{what} must be a non-empty single line (got {value!r})")
        for arg in self.extra:
            check_sbatch_arg(arg)
        if not 1 <= self.signal_seconds <= MAX_SIGNAL_SECONDS:
            raise UserError(f"--signal-seconds must be 1 to {MAX_SIGNAL_SECONDS} (got {self.signal_seconds}): "
                            "SLURM's --signal=B:USR1@S holds no more")
        limit = 60 * _minutes(self.time) if self.time is not None else 0
        if limit and self.signal_seconds >= limit:
            raise UserError(f"--signal-seconds {self.signal_seconds} is not less than --time {self.time} ({limit} s): "
                            "every task would be told to checkpoint and requeue as it starts")


def check_sbatch_arg(arg: str) -> None:
    """An extra sbatch option must be one line, start with '-', and leave permenum's own options alone."""
    if "\n" in arg or not arg.startswith("-"):
        raise UserError(f"--sbatch-arg {arg!r}: give one sbatch option per --sbatch-arg, e.g. --sbatch-arg=--mem=4G")
    name = arg.split("=", 1)[0]
    if not name.startswith("--"):
        flags = re.match(r"-([A-Za-z]*)", arg)
        clustered = next((f"-{c}" for c in (flags.group(1) if flags else "") if f"-{c}" in _SHORT), None)
        name = _SHORT.get(clustered or arg[:2], name)  # -vJx: sbatch reads -v, then -J x
    # sbatch (getopt_long) takes any unambiguous abbreviation of a long option: --out= is --output=
    hit = next((p for p in PROTECTED if len(name) > 2 and p.startswith(name)), None)
    if hit:
        raise UserError(f"--sbatch-arg {arg!r}: {hit} is set by permenum ({PROTECTED[hit]})")


def job_name(run_id: str, problem: str, n: int) -> str:
    """The job name that marks a run's jobs, also when submitted by hand (run ids are random uuids)."""
    return f"permenum-{problem}{n}-{run_id[:12]}"


def entry_point_dir() -> Path:
    """The directory holding the `permenum` command of *this* Python, for the script's PATH.

    Compute nodes may have no `permenum` on PATH, or another one; the script must run the same
    installation that rendered it.
    """
    candidates = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))]
    for d in candidates:
        if (d / "permenum").is_file() and os.access(d / "permenum", os.X_OK):
            return d
    found = shutil.which("permenum")
    if found:
        return Path(found).parent
    raise UserError(f"cannot find the `permenum` command next to {sys.executable}; install permenum "
                    "(pip install -e .) so compute nodes can run `permenum task`")


def quote_option(arg: str) -> str:
    """``--comment=a b`` -> ``--comment='a b'``: quote the value, keep the option name readable."""
    name, sep, value = arg.partition("=")
    return f"{name}={shlex.quote(value)}" if sep and name.startswith("--") else shlex.quote(arg)


def task_args(options: TaskOptions | None) -> list[str]:
    """`permenum task`'s options for the script, each value quoted."""
    return [shlex.quote(arg) for arg in options.cli_args()] if options else []


def check_run_path(layout: RunLayout) -> None:
    """SLURM reads ``%`` and ``\\`` in --output as filename patterns: logs would land outside the run."""
    bad = sorted({c for c in str(layout.root) if c in "%\\" or not c.isprintable()})
    if bad:
        raise UserError(f"{layout.root} holds {' and '.join(map(repr, bad))}: SLURM reads % and \\ in log file names "
                        "as patterns, and a line break would split the batch script; move the run to a path without them")


def comment_line(text: str) -> str:
    """One comment line whatever ``text`` holds (a newline in it would start a command)."""
    return "# " + "".join(c if c.isprintable() else "?" for c in text)


def render(layout: RunLayout, job_name: str, num_partitions: int, options: SbatchOptions, bin_dir: Path,
           title: str) -> str:
    """The sbatch script text; no I/O, so it is compared with a saved copy in the tests."""
    check_run_path(layout)
    q = shlex.quote
    tasks = options.workers or num_partitions
    directives = [
        f"--job-name={q(job_name)}",
        f"--array={array_spec(list(range(tasks)), options.throttle)}",
        f"--output={q(str(layout.slurm_log_pattern))}",
        f"--signal=B:USR1@{options.signal_seconds}",
        "--requeue",
        "--open-mode=append",  # a requeued task's log keeps its earlier attempts (SLURM truncates by default)
    ]
    if options.time:
        directives.append(f"--time={options.time}")
    if options.partition:
        directives.append(f"--partition={q(options.partition)}")
    if options.account:
        directives.append(f"--account={q(options.account)}")
    if options.gpus_per_task:
        directives.append(f"--gres=gpu:{options.gpus_per_task}")
    directives.extend(quote_option(a) for a in options.extra)
    lines = [
        "#!/bin/bash",
        comment_line(title),
        *(_WORKERS_HEAD if options.workers else _PARTITION_HEAD),
        *(f"#SBATCH {d}" for d in directives),
        "",
        "# SLURM may send --signal's USR1 up to a minute early, even as the element starts: until the task's",
        "# handler is in place an early USR1 is ignored, not fatal (the time limit's TERM still stops the task).",
        "trap '' USR1",
        *(_WORKERS_ARGUMENT if options.workers else _PARTITION_ARGUMENT),
        "# The permenum installation that rendered this script (compute nodes may have none on PATH).",
        f'export PATH={q(str(bin_dir))}:"$PATH"',
        ('echo "permenum: ' + ("worker over partitions $partitions" if options.workers else "partition $partition")
         + ', job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} on $(hostname) at $(date -Is)"'),
        "# exec: the task is the batch shell itself, so it receives USR1 before the time limit.",
        "exec " + " ".join(["permenum", "task", q(str(layout.root)),
                            *(["--only", '"$partitions"'] if options.workers else ["--index", '"$partition"']),
                            *task_args(options.task)]),
        "",
    ]
    return "\n".join(lines)


_PARTITION_HEAD = (
    "# Rendered by `permenum submit`. Partition = array index + the offset given as the script's argument",
    "# (default 0; `submit` and `resubmit` hand one beyond the cluster's MaxArraySize and record it, and",
    "# `status` reads it there): `sbatch --array=<partitions> <this file>` runs those partitions.",
)
_PARTITION_ARGUMENT = (
    ': "${SLURM_ARRAY_TASK_ID:?submit this script as an array job: sbatch --array=... (index = partition)}"',
    'offset=${1:-0}',
    '[[ $offset =~ ^[0-9]+$ ]] || { echo "permenum: the argument must be a partition offset, got \'$offset\'" >&2; exit 2; }',
    "partition=$((SLURM_ARRAY_TASK_ID + 10#$offset))  # 10#: a leading zero is not octal",
)
_WORKERS_HEAD = (
    "# Rendered by `permenum submit --workers`. Each array task is a worker: it counts the partitions given as",
    "# the script's argument (e.g. 0-63 or 3,7,12-14) that have no result, one after another, each under its claim,",
    "# until none is left: `sbatch --array=0-<W-1> <this file> <partitions>` runs those partitions on W workers.",
)
_WORKERS_ARGUMENT = (
    ': "${SLURM_ARRAY_TASK_ID:?submit this script as an array job: sbatch --array=0-<W-1> <this file> <partitions>}"',
    'partitions=${1:?give the partitions to count as the argument, e.g. 0-63}',
    '[[ $partitions =~ ^[0-9,-]+$ ]] || { echo "permenum: the argument must be a list of partitions, got \'$partitions\'" >&2; exit 2; }',
)
