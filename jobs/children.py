"""The processes of a run's workers and of a several-device task's devices: forked from a server that has
imported their modules once.

A spawned child is a fresh interpreter: before it can open its device it imports numpy, pyarrow,
pyopencl and permenum again (0.8 s on a GPU node, on the command's critical path: on 4 H100 the
workers' partitions were loaded 3 s into `enumerate` against 1.4 s for one GPU in the command's own
process). multiprocessing's fork server imports them once, in a process started as early as the command
knows it may need children (``start_early``: while it counts its devices), and forks each child from it.
A fork is safe there: the server never starts OpenCL (no platform is asked for before a child does so),
and each child narrows the GPUs it sees before it starts OpenCL (``become_child``). A worker of several
devices (`run -w K` with fewer workers than devices) starts its devices' processes from a server of its
own (a fork server's child does not reach its parent's): they import once more there, as spawned.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess

from permenum.signals import STOP_SIGNALS, release_stop_signals, start_resource_tracker
from permenum.solver.devices import Visibility, see_only

#: What every child imports (the modules its target lives in, and through them the rest).
PRELOAD = ["permenum.jobs.local", "permenum.jobs.device_process"]


def context() -> BaseContext:
    """The context children are started from: the fork server (started here if ``start_early`` was not), or
    spawn where no server could start (its socket's path under a long TMPDIR is past the 108 bytes a Unix
    socket's may have)."""
    return mp.get_context("forkserver" if start_early() else "spawn")


def start_early(device: str | None = None) -> bool:
    """Start the fork server (once; it imports ``PRELOAD`` while the caller goes on) and multiprocessing's
    resource tracker, both with the stop signals blocked, a mask they keep: a signal sent to the whole
    process group (scancel, `timeout -s USR1`) must not end them under the run (permenum.signals); the
    tracker first, as the server would otherwise start it, unblocking SIGINT and SIGTERM. Whether the
    server runs; nothing where ``device`` names one device (``P:D``), which needs no child.

    The server is a ``python -c`` whose path starts with the working directory, which Python 3.11 and
    3.12 before 3.12.8 do not replace by this process's path (CPython gh-117378): a ``permenum`` folder
    there (a checkout's) would be imported in place of the installed package, and every child would fail.
    PYTHONSAFEPATH keeps the working directory off its path; the children take their parent's environment
    (``ChildSetup``)."""
    from multiprocessing import forkserver

    if device is not None and ":" in device and "/" not in device:
        return False
    start_resource_tracker()
    mp.get_context("forkserver").set_forkserver_preload(PRELOAD)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    safe = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        forkserver.ensure_running()
        return True
    except OSError:
        return False
    finally:
        if safe is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = safe
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def alive(process: BaseProcess) -> bool:
    """Whether a child still runs. A fork server's child is reported ended (exit code 255) once the server is
    gone (killed: it blocks the stop signals), though it counts on; the system is asked then."""
    if process.is_alive():
        return True
    if process.exitcode != 255 or process.pid is None:
        return False
    try:
        os.kill(process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
