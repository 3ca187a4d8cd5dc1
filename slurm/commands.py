"""The one door to SLURM's command-line tools: every sbatch/squeue/scontrol/sacct/sinfo call goes through `run`.

Argument lists only (never a shell), a timeout on every call, the environment inherited (so
`SLURM_CONF` from `permenum cluster up` reaches the client) with `SLURM_BITSTR_LEN` set to 0, and on any
failure a `SlurmCommandError` that carries the command, exit code, stdout and stderr, so nothing is
swallowed or guessed.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
from collections.abc import Sequence

log = logging.getLogger(__name__)

#: Queries answer in well under a second on a healthy controller; a busy one may take a few.
DEFAULT_TIMEOUT = 60.0

#: Set for every call: the clients cut an array's task list at 64 characters by default ("0,2-3,...,37-...%3",
#: seen from scontrol and squeue on Slurm 22.05 for a pending array of 286 scattered tasks); 0 prints it whole.
FULL_TASK_LISTS = {"SLURM_BITSTR_LEN": "0"}


class SlurmCommandError(RuntimeError):
    """A SLURM command could not run, timed out, or exited non-zero."""

    def __init__(self, cmd: Sequence[str], problem: str, returncode: int | None = None,
                 stdout: str = "", stderr: str = "") -> None:
        self.cmd = list(cmd)
        self.problem = problem
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        super().__init__(self.summary())

    def summary(self) -> str:
        """One line: the command, what went wrong, and SLURM's own complaint."""
        said = " | ".join(line.strip() for line in (self.stderr or self.stdout).strip().splitlines() if line.strip())
        code = f" (exit {self.returncode})" if self.returncode is not None else ""
        return f"`{shlex.join(self.cmd)}` {self.problem}{code}" + (f": {said}" if said else "")


def run(cmd: Sequence[str], timeout: float = DEFAULT_TIMEOUT, outlive_term: bool = False) -> str:
    """Run one SLURM command and return its stdout; raise SlurmCommandError on any failure.

    ``outlive_term``: the command ignores SIGTERM, for one a job runs about itself while SLURM may be ending
    it (a requeue TERMs every process of the job, then KILLs what is left after KillWait, 30 s by default)."""
    argv = [str(a) for a in cmd]
    log.debug("running %s", shlex.join(argv))
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                              check=False, env={**os.environ, **FULL_TASK_LISTS},
                              preexec_fn=_ignore_term if outlive_term else None)
    except FileNotFoundError:
        raise SlurmCommandError(argv, f"failed: {argv[0]} is not on PATH (install SLURM's client commands, "
                                      "Debian's slurm-client)") from None
    except subprocess.TimeoutExpired as exc:
        raise SlurmCommandError(argv, f"timed out after {timeout:g} s", None, _text(exc.stdout),
                                _text(exc.stderr)) from None
    if proc.returncode != 0:
        raise SlurmCommandError(argv, "failed", proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def _ignore_term() -> None:
    """In the child, before exec: SIGTERM ignored (an ignored signal stays ignored across exec)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data
