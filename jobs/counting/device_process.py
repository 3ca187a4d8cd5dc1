"""A device of a several-device task in a process of its own, reaching the task's scheduler through a pipe.

Why: a device's host work (parsing, refining and staging its chunks: numpy and pyopencl calls) holds
the GIL for much of its time. With every device's host work in the task's one process, four H200 ran
N-Queens 22 at 2.27x one (49.0 s against 111.1 s): each GPU's second chunk took 27-31 s for 12-14 s of
kernel, waiting on the other devices' host work between its launches. In a process of its own a
device's loop (jobs.counting.device_loop, the same code that runs on a thread for a lone device) competes with
no other; the scheduler, the ledger and the checkpoints stay in the task's process, and only spans of
states, sums and log lines cross the pipe (a few hundred bytes a chunk).

The child ignores the stop signals: the task's process receives them (SLURM's ``B:`` signals reach
only it), checkpoints, and tells its devices to stop through ``stopping``; a child whose task's process
is gone finds its pipe closed and ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from permenum.errors import UserError
from permenum.jobs.counting.children import ChildSetup, become_child, context
from permenum.jobs.counting.device_loop import DeviceLoop, DeviceReport, Handout, Spec
from permenum.jobs.counting.stream import StreamedPartition
from permenum.kernel_cache import BUILDS
from permenum.solver.devices import Visibility, check_seen

#: What the child may ask of the parent's hand-out (the rest of Handout's methods, by name).
_CALLS = ("claim", "open_chunk", "expected_seconds", "advance", "finish", "stopping", "log", "account")


class _Remote:
    """The hand-out as a device's process sees it: each call a request on the pipe, answered in order."""

    def __init__(self, conn: Connection) -> None:
        self._conn, self._lock = conn, threading.Lock()  # the device's thread and its claim-ahead thread

    def call(self, name: str, *args: Any) -> Any:
        with self._lock:
            self._conn.send((name, args))
            return self._conn.recv()

    def tell(self, name: str, *args: Any) -> None:
        """The last word (a report or a failure): sent, not answered."""
        with self._lock:
            self._conn.send((name, args))

    def __getattr__(self, name: str) -> Any:
        if name not in _CALLS:
            raise AttributeError(name)
        return lambda *args: self.call(name, *args)


def _child(spec: Spec, conn: Connection, speaks: bool, setup: ChildSetup) -> None:
    """The device's process: open the device and build, wait for the partition's verified bytes, serve
    (``speaks``: this one says that kernels are being built, for the task; ``setup``: the one GPU it is
    to see, solver.devices.own_visibility, and the task's environment)."""
    become_child(setup)
    if not speaks:
        BUILDS.silence()
    remote = _Remote(conn)
    try:
        from permenum.problems import get_problem
        from permenum.solver.devices import select_devices

        [ref] = select_devices(spec.options.device, spec.options.only)
        if setup.visibility is not None:
            check_seen(setup.visibility, [ref])
        problem = get_problem(spec.problem)
        loop = DeviceLoop(ref, spec, problem, remote)  # type: ignore[arg-type]
        loop.build()
        opened = remote.call("open")
        if opened is not None:
            data, label = opened
            loop.serve(StreamedPartition(data, problem.mask_names, label))
        remote.tell("done", loop.report())
    except (EOFError, BrokenPipeError):
        return  # the task's process is gone: nothing to report to
    except BaseException as exc:  # noqa: BLE001 - handed to the task, which records the failure
        try:
            remote.tell("failed", str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}",
                        isinstance(exc, UserError))
        except (OSError, ValueError):
            pass  # the task's process is gone
    finally:
        conn.close()


class DeviceProcess:
    """The task's end of one device's process: ``serve`` answers its requests until it is done."""

    def __init__(self, spec: Spec, position: int, visibility: Visibility | None, speaks: bool = True) -> None:
        """Start device ``position``'s process (``visibility``: what it is to see, solver.devices.own_visibility,
        computed for every device before any is started)."""
        ctx = context()  # not a fork of the task's process: OpenCL state does not survive a fork
        self._conn, child_end = ctx.Pipe()
        child_spec = replace(spec, options=replace(spec.options, only=(0,) if visibility else (position,)))
        self._process = ctx.Process(target=_child, args=(child_spec, child_end, speaks, ChildSetup(visibility)),
                                    name=f"permenum-device-{position}")
        self._process.start()  # while the task loads its partition
        child_end.close()

    def serve(self, handout: Handout, opened: Callable[[], tuple[bytes, str] | None]) -> DeviceReport:
        """Answer the device's requests through ``handout`` until it reports; ``opened`` waits for the
        partition's verified bytes (None: it will not be counted)."""
        try:
            while True:
                try:
                    name, args = self._conn.recv()
                except EOFError:
                    self._process.join()
                    raise RuntimeError(f"the device's process ended without a report (exit code "
                                       f"{self._process.exitcode})") from None
                if name == "done":
                    return args[0]
                if name == "failed":
                    message, user = args
                    raise UserError(message) if user else RuntimeError(message)
                self._conn.send(opened() if name == "open" else getattr(handout, name)(*args))
        finally:
            self._conn.close()
            self._process.join()

