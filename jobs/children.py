"""The processes of a run's workers and of a several-device task's devices: forked from a server that has
imported their modules once.

A spawned child is a fresh interpreter: before it can open its device it imports numpy, pyarrow,
pyopencl and permenum again (0.8 s on a GPU node, on the command's critical path: on 4 H100 the
workers' partitions were loaded 3 s into `enumerate` against 1.4 s for one GPU in the command's own
process). multiprocessing's fork server imports them once, in a process started as early as the command
knows it may need children (``start_early``: while it counts its devices), and forks each child from it.
A fork is safe there: the server never starts OpenCL (no platform is asked for before a child does so),
and each child narrows the GPUs it sees before it starts OpenCL (``become_child``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext

from permenum.signals import STOP_SIGNALS, release_stop_signals, start_resource_tracker
from permenum.solver.devices import Visibility, see_only

#: What every child imports (the modules its target lives in, and through them the rest).
PRELOAD = ["permenum.jobs.local", "permenum.jobs.device_process"]


def context() -> BaseContext:
    """The context children are started from (the fork server, started here if ``start_early`` was not)."""
    start_early()
    return mp.get_context("forkserver")


def start_early(device: str | None = None) -> None:
    """Start the fork server (once; it imports ``PRELOAD`` while the caller goes on) and multiprocessing's
    resource tracker, both with the stop signals blocked, a mask they keep: a signal sent to the whole
    process group (scancel, `timeout -s USR1`) must not end them under the run (permenum.signals). Nothing
    where ``device`` names one device (``P:D``), which needs no child."""
    from multiprocessing import forkserver

    if device is not None and ":" in device and "/" not in device:
        return
    start_resource_tracker()
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@dataclass(frozen=True)
class ChildSetup:
    """What a child starts from: the GPUs it is to see (solver.devices.own_visibility; None: the node's list)
    and its parent's environment when the child was made (the fork server's is the one it started with)."""

    visibility: Visibility | None
    environment: dict[str, str] = field(default_factory=lambda: dict(os.environ))


def become_child(setup: ChildSetup) -> None:
    """A child's first step: its parent's environment, the stop signals its parent's to handle (ignored here,
    and unblocked: the server's mask is inherited), and only its GPUs seen, before OpenCL starts."""
    if setup.environment != os.environ:
        os.environ.clear()
        os.environ.update(setup.environment)
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    release_stop_signals()
    if setup.visibility is not None:
        see_only(setup.visibility)
