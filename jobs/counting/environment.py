"""A task's environment, read in one place (cf. submitit's JobEnvironment), and the rules it follows
there: which signals ask it to stop, and whether a stopped task requeues itself.

SIGUSR1, SIGTERM and SIGINT ask the task to stop after its current chunk, with a checkpoint. Then,
under SLURM (README "Checkpoints, signals and requeue"):

* SIGUSR1 is the time limit's warning (``--signal=B:USR1@S``) or a user's ``scancel --signal=USR1``
  asking for a checkpoint: the task requeues its element.
* SIGTERM is what SLURM sends on ``scancel``, on preemption, at the time limit and on an
  administrator's ``scontrol requeue``; the controller's record of the element tells them apart
  (permenum.slurm.requeue.why_signalled). Cancelled: the user stopped it: it exits for good
  (``permenum resubmit`` resumes it later from its checkpoint). Requeued by SLURM already: it just
  exits. Preempted, time limit, or no answer: it requeues itself.
* At most MAX_REQUEUES requeues, then the partition is left to ``permenum resubmit``.

Elsewhere (the local executor, a shell) the task says how to resume.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

from permenum import __version__
from permenum.records import Origin
from permenum.signals import STOP_SIGNALS, hold_stop_signals, release_stop_signals

MAX_REQUEUES = 100  # a task requeued this often is left for `resubmit` (something is wrong)


def _env_int(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None


@dataclass(frozen=True)
class TaskEnvironment:
    origin: Origin

    @classmethod
    def read(cls) -> "TaskEnvironment":
        return cls(Origin(
            host=socket.gethostname(),
            pid=os.getpid(),
            slurm_job_id=_env_int("SLURM_JOB_ID"),
            slurm_array_job_id=_env_int("SLURM_ARRAY_JOB_ID"),
            slurm_array_task_id=_env_int("SLURM_ARRAY_TASK_ID"),
            slurm_restart_count=_env_int("SLURM_RESTART_COUNT"),
            version=__version__,
            cluster=os.environ.get("SLURM_CLUSTER_NAME") or None,
        ))

    @property
    def under_slurm(self) -> bool:
        return self.origin.slurm_job_id is not None

    def after_interrupt(self, signum: int | None) -> str:
        """What a task that stopped with a checkpoint on ``signum`` does next (the module's rule);
        returns a one-line account."""
        if not self.under_slurm:
            return "run it again to resume"
        from permenum.slurm.requeue import requeue_self, why_signalled

        why = why_signalled(self.origin) if signum == signal.SIGTERM else (
            f"{signal.Signals(signum).name}" if signum else "a stop request (--max-seconds)")
        if why == "cancelled":
            return "cancelled: stopped for good (`permenum resubmit` resumes it from its checkpoint)"
        if why == "requeued":
            return "requeued by SLURM already"
        if (self.origin.slurm_restart_count or 0) >= MAX_REQUEUES:
            return f"{why}: requeued {MAX_REQUEUES} times already, left to `permenum resubmit`"
        return f"{why}: {requeue_self(self.origin)}"


class StopRequest:
    """Signals turned into a request to stop after the current chunk (the task checks ``event``)."""

    def __init__(self, announce: Callable[[str], None] | None = None) -> None:
        self.event = threading.Event()
        self.signum: int | None = None  # the last stop signal received (it decides requeue or not)
        self._announce = announce

    def install(self, signals: tuple[int, ...] = STOP_SIGNALS, release: bool = False) -> None:
        """Handle the signals from now on; ``release``: also unblock them (a held one is delivered now)."""
        def handler(signum: int, _frame: object) -> None:
            if self._announce:
                self._announce(f"permenum: got {signal.Signals(signum).name}; stopping after the current chunk")
            self.signum = signum
            self.event.set()

        for sig in signals:
            signal.signal(sig, handler)
        if release:
            release_stop_signals(signals)

    def around_device_start(self, open_device: Callable[[], None], signals: tuple[int, ...] = STOP_SIGNALS) -> None:
        """Open the device with the signals held back, then install the handlers again: PoCL installs its
        own SIGUSR1 handler when its first context is created, which would silently replace ours (and
        swallow a signal arriving meanwhile). The held signal is delivered to our handler afterwards."""
        self.install(signals)
        hold_stop_signals(signals)
        try:
            open_device()
            self.install(signals)
        finally:
            release_stop_signals(signals)
