"""The processes of a run's workers and of a several-device task's devices: forked from a server that has
imported their modules once.

A spawned child is a fresh interpreter: before it can open its device it imports numpy, pyarrow,
pyopencl and permenum again (0.8 s on a GPU node, on the command's critical path: on 4 H100 the
workers' partitions were loaded 3 s into `enumerate` against 1.4 s for one GPU in the command's own
process). multiprocessing's fork server imports them once, in a process started as early as the command
knows it may need children (``start_early``: while it counts its devices), and forks each child from it.
A fork is safe there: the server never starts OpenCL (no platform is asked for before a child does so),
and each child narrows the GPUs it sees before it starts OpenCL (``become_child``). Processes started
where no server was (a `task`'s several devices, a worker's devices) are spawned, as before.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess

from permenum.signals import STOP_SIGNALS, release_stop_signals, start_resource_tracker, stop_signals_held
from permenum.solver.devices import Visibility, see_only

#: What a device's process imports (its target's module, and through it the rest); a command whose children
#: run other targets names their modules to start_early (the local executor's workers: permenum.cli.runner).
DEVICE_PRELOAD = ("permenum.jobs.counting.device_process",)

_server = False  # whether this process started the fork server (start_early)


def context() -> BaseContext:
    """The context children are started from: the fork server where this process started one (``start_early``),
    else spawn -- a `task`'s several devices, a worker's devices, or a TMPDIR too long for the server's Unix
    socket (108 bytes at most). A server started later would change the environment while other threads
    run, and a worker's would import once more anyway."""
    start_resource_tracker()
    return mp.get_context("forkserver" if _server else "spawn")


def start_early(also: Sequence[str] = ()) -> None:
    """At a command's start, before other threads: start the fork server (once; it imports DEVICE_PRELOAD and
    ``also``, the modules of the command's other children's targets, while the command goes on) and
    multiprocessing's resource tracker, both with the stop signals blocked, a mask
    they keep: a signal sent to the whole process group (scancel, `timeout -s USR1`) must not end them under
    the run (permenum.signals); the tracker first, as the server would otherwise start it, unblocking SIGINT
    and SIGTERM.

    The server is a ``python -c`` whose path starts with the working directory, which Python 3.11 and
    3.12 before 3.12.8 do not replace by this process's path (CPython gh-117378): a ``permenum`` folder
    there (a checkout's) would be imported in place of the installed package, and every child would fail.
    PYTHONSAFEPATH keeps the working directory off its path; the children take their parent's environment
    (``ChildSetup``)."""
    global _server
    from multiprocessing import forkserver

    if _server:
        return
    start_resource_tracker()
    mp.get_context("forkserver").set_forkserver_preload([*DEVICE_PRELOAD, *also])
    safe = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        with stop_signals_held():
            forkserver.ensure_running()
        _server = True
    except OSError:
        pass  # context() spawns
    finally:
        if safe is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = safe


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
        pass  # it runs, as another user
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
