"""How permenum talks to SLURM: one `Backend` interface, a command-line implementation and a pyslurm one.

`select_backend` takes pyslurm only when it imports and its major.minor equals the installed Slurm's
(``sinfo --version``): pyslurm is compiled against one Slurm release's C API and must match it exactly.
Otherwise, and always on Debian 12 (Slurm 22.05; PyPI's pyslurm is 25.11), the command line is used.
Submission is `sbatch` in both, so the script's #SBATCH lines mean the same whoever submits it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from permenum.ranges import expand_ranges
from permenum.slurm import commands
from permenum.slurm.queue import (
    SACCT_FIELDS,
    SQUEUE_FORMAT,
    TaskState,
    normalize_state,
    parse_config,
    parse_jobcomp,
    parse_sacct,
    parse_scontrol_jobs,
    parse_squeue,
    parse_version,
)


@dataclass(frozen=True)
class Submitted:
    job_id: int
    cluster: str | None
    command: list[str]


@dataclass(frozen=True)
class History:
    """Ended tasks from a source that outlives the controller's memory, or why it was not available."""

    records: list[TaskState]
    note: str
    available: bool


class Backend:
    """The command-line backend; `PyslurmBackend` replaces the live queries."""

    name = "command line"
    queue_source = "squeue"
    jobs_source = "scontrol"

    def __init__(self) -> None:
        self._config: dict[str, str] | None = None

    def version(self) -> str:
        return commands.run(["sinfo", "--version"]).strip()

    def config(self) -> dict[str, str]:
        """``scontrol show config`` (read once): MaxArraySize, accounting and jobcomp settings."""
        if self._config is None:
            self._config = parse_config(commands.run(["scontrol", "show", "config"]))
        return self._config

    def submit_command(self, script: Path, sbatch_args: list[str], script_args: list[str] | None = None) -> list[str]:
        """``sbatch --parsable ARGS SCRIPT [SCRIPT_ARGS]``: what `submit` runs (and a dry run shows)."""
        return ["sbatch", "--parsable", *sbatch_args, str(script), *(script_args or [])]

    def submit(self, script: Path, sbatch_args: list[str], script_args: list[str] | None = None) -> Submitted:
        """sbatch the script (submit_command); command-line options override the script's #SBATCH lines."""
        cmd = self.submit_command(script, sbatch_args, script_args)
        out = commands.run(cmd).strip()
        job, _, cluster = out.partition(";")  # --parsable: "jobid" or "jobid;cluster"
        if not job.isdigit():
            raise commands.SlurmCommandError(cmd, f"answered {out!r}, not a job id")
        return Submitted(int(job), cluster or None, cmd)

    def queue(self, job_name: str) -> list[TaskState]:
        """The tasks still in the queue (pending or running), one per array index (squeue -r)."""
        return _parsed(["squeue", "-h", "-r", "--name", job_name, "-o", SQUEUE_FORMAT],
                       lambda text: parse_squeue(text, job_name))

    def jobs(self, job_name: str) -> list[TaskState]:
        """Every task the controller remembers: the queued ones (a pending array as one record with its whole
        task list) and the ended ones until MinJobAge passes."""
        return _parsed(["scontrol", "show", "job", "-o"], lambda text: parse_scontrol_jobs(text, job_name))

    def accounting(self, job_name: str, since: str) -> History:
        """sacct, where an accounting storage is configured (it keeps ended jobs for good)."""
        kind = self.config().get("AccountingStorageType", "accounting_storage/none")
        if kind.endswith("/none"):
            return History([], f"not configured (AccountingStorageType={kind})", False)
        try:
            records = _parsed(["sacct", "--parsable2", "--noheader", "-X", "--name", job_name,
                               "--starttime", since, "-o", SACCT_FIELDS], lambda text: parse_sacct(text, job_name))
        except commands.SlurmCommandError as exc:
            return History([], f"unavailable: {exc.summary()}", False)
        return History(records, f"{len(records)} task records", True)

    def jobcomp(self, job_name: str) -> History:
        """jobcomp/filetxt's log, where it is configured and readable (the controller host's file)."""
        cfg = self.config()
        kind, loc = cfg.get("JobCompType", "jobcomp/none"), cfg.get("JobCompLoc", "")
        if kind != "jobcomp/filetxt":
            return History([], f"not configured (JobCompType={kind})", False)
        try:
            records = parse_jobcomp(Path(loc).read_text(errors="replace"), job_name)
        except OSError as exc:
            return History([], f"{loc} unreadable ({exc.strerror})", False)
        except ValueError as exc:
            return History([], f"{loc} unreadable ({exc})", False)
        return History(records, f"{loc}, {len(records)} task records", True)


def _parsed(cmd: list[str], parse: Callable[[str], list[TaskState]]) -> list[TaskState]:
    """Run one query and parse its output; output permenum cannot read (an array task list it cannot expand)
    fails that command in one line, never as a traceback, and is never read as "no tasks"."""
    text = commands.run(cmd)
    try:
        return parse(text)
    except ValueError as exc:
        raise commands.SlurmCommandError(cmd, f"printed what permenum cannot read ({exc})") from None


class PyslurmBackend(Backend):
    """Live queries through pyslurm's API (one RPC instead of a process per query); the rest as above.

    Not exercised by the tests here: it needs a pyslurm built for the installed Slurm.
    """

    name = "pyslurm"
    queue_source = "pyslurm queue"
    jobs_source = "pyslurm jobs"

    def _load(self, job_name: str) -> list[TaskState]:
        import pyslurm  # type: ignore[import-not-found]

        records: list[TaskState] = []
        for job in pyslurm.Jobs.load().values():
            if job.name != job_name or job.array_id is None:
                continue
            ids = [job.array_task_id] if job.array_task_id is not None else expand_ranges(job.array_tasks_waiting or "")
            exit_code = f"{job.exit_code or 0}:{job.exit_code_signal or 0}"
            records.extend(TaskState(int(job.array_id), int(p), normalize_state(job.state), "pyslurm",
                                     job.state_reason or "", exit_code) for p in ids)
        return records

    def queue(self, job_name: str) -> list[TaskState]:
        return [t for t in self._load(job_name) if t.category in ("pending", "running", "unknown")]

    def jobs(self, job_name: str) -> list[TaskState]:
        return self._load(job_name)


def pyslurm_matches(pyslurm_version: str, sinfo_version: str) -> bool:
    """pyslurm works only against the Slurm release it was built for: major.minor must be equal."""
    try:
        return parse_version(pyslurm_version) == parse_version(sinfo_version)
    except ValueError:
        return False


def select_backend() -> tuple[Backend, str]:
    """The backend to use and why (shown by `permenum status`)."""
    cli = Backend()
    try:
        import pyslurm  # type: ignore[import-not-found]
    except Exception as exc:  # noqa: BLE001  ImportError, or a pyslurm built for another libslurm failing to load
        return cli, f"command line (pyslurm not importable: {type(exc).__name__})"
    py_version = str(getattr(pyslurm, "__version__", "?"))
    slurm_version = cli.version()
    if pyslurm_matches(py_version, slurm_version):
        return PyslurmBackend(), f"pyslurm {py_version} (Slurm {slurm_version})"
    return cli, f"command line (pyslurm {py_version} does not match {slurm_version})"
