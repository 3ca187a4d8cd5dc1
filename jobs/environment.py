"""A task's environment, read in one place (cf. submitit's JobEnvironment), and the rules it follows
there: which signals ask it to stop, and whether a stopped task requeues itself.

SIGUSR1 (``--signal=B:USR1@S`` before the time limit, ``scancel --signal=USR1``), SIGTERM
(preemption, ``scancel``) and SIGINT (Ctrl-C) ask the task to stop after its current chunk, with a
checkpoint. A stopped task under SLURM requeues its own array element, at most MAX_REQUEUES times
(then the partition is left to ``permenum resubmit``); elsewhere it says how to resume.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

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
        ))

    @property
    def under_slurm(self) -> bool:
        return self.origin.slurm_job_id is not None

    def after_interrupt(self) -> str:
        """What a task that stopped with a checkpoint does next: requeue itself under SLURM (below
        MAX_REQUEUES), else leave the resume to the user; returns a one-line account."""
        if self.under_slurm and (self.origin.slurm_restart_count or 0) < MAX_REQUEUES:
            from permenum.slurm.requeue import requeue_self

            return requeue_self(self.origin)
        return "run it again to resume"


class StopRequest:
    """Signals turned into a request to stop after the current chunk (the task checks ``event``)."""

    def __init__(self, announce: Callable[[str], None] | None = None) -> None:
        self.event = threading.Event()
        self._announce = announce

    def install(self, signals: tuple[int, ...] = STOP_SIGNALS, release: bool = False) -> None:
        """Handle the signals from now on; ``release``: also unblock them (a held one is delivered now)."""
        def handler(signum: int, _frame: object) -> None:
            if self._announce:
                self._announce(f"permenum: got {signal.Signals(signum).name}; stopping after the current chunk")
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
