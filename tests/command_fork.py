"""The real `permenum` command, each call a process of its own, forked from a server that imported the
command's libraries once.

A command's process spent most of its start importing pyarrow, numpy, pyopencl, click and rich (0.3 s of
an idle `status`'s 0.35 s on a 2-core machine; 0.6-1.0 s under the suite's load), and the quick suite runs
the command 409 times through `run_cli` (2026-12-07, 592c481). A process forked from this server is the
command as a user runs it but for that start: it takes the call's argv, environment, working directory and
umask, imports our modules afresh, runs `python -m permenum`'s own entry (runpy, as `-m` does) with its
stdout and stderr on the caller's pipes, and ends as an interpreter ends (SystemExit's code, atexit,
threads joined; killed by a signal: -signal). Tests of the start itself (the stop signals held in its
first instant, what a command imports, the console script) run the command afresh, as does a call whose
PYTHON* variables differ from the server's, which only an interpreter's start reads.

The server imports no permenum module and opens no OpenCL platform, so nothing a command sets up at import
or on its devices is shared; each call's waiter (a fork of the server) forks the command and reports its
pid and then its exit status over the call's connection. `bash scripts/test.sh` on a 2-core machine:
358 -> 261 s (2026-12-07; with compiled modules, scripts/install.sh).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import locale
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: What the commands' starts import, each 10-500 ms of it (`python -X importtime -m permenum ...`).
PRELOAD = ("numpy", "pyarrow", "pyarrow.parquet", "pyarrow.compute", "pyopencl", "pyopencl.tools", "click",
           "rich.console", "zstandard")


_server: CommandServer | None = None  # this process's, started on first use


def run_command(args: Sequence[str], env: Mapping[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`python -m permenum ARGS` with ENV, as subprocess.run(capture_output=True, text=True) returns it: forked
    from this process's server (started on first use), afresh where ENV's PYTHON* variables are not the
    server's."""
    global _server
    if _server is None:
        _server = CommandServer()
        atexit.register(_server.stop)
    if _python_variables(env) != _server.python_variables:
        return subprocess.run([sys.executable, "-m", "permenum", *args], capture_output=True, text=True,
                              timeout=timeout, env=dict(env))
    return _server.run(args, env, timeout)


def _python_variables(env: Mapping[str, str]) -> dict[str, str]:
    """What only an interpreter's start reads (PYTHONPATH, PYTHONHASHSEED and the like)."""
    return {key: value for key, value in env.items() if key.startswith("PYTHON")}


class CommandServer:
    """The server of one test process: started once, asked for a command at a time, stopped at the end."""

    def __init__(self) -> None:
        self.address = f"\0permenum-tests-{os.getpid()}-{time.monotonic_ns()}"  # Linux's abstract namespace
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(self.address)
        listener.listen(64)
        code = "import sys; from tests.command_fork import serve; serve(int(sys.argv[1]))"
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.process = subprocess.Popen([sys.executable, "-c", code, str(listener.fileno())], cwd=root,
                                        pass_fds=[listener.fileno()], stdin=subprocess.DEVNULL)
        listener.close()
        self.python_variables = _python_variables(os.environ)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)

    def run(self, args: Sequence[str], env: Mapping[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        request = {"argv": list(args), "env": dict(env), "cwd": os.getcwd(), "umask": _umask()}
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as connection:
            connection.connect(self.address)
            socket.send_fds(connection, [json.dumps(request).encode()], [out_w, err_w])
            os.close(out_w)
            os.close(err_w)
            pid = json.loads(connection.recv(4096))["pid"]
            cmd = [sys.executable, "-m", "permenum", *args]
            try:
                out, err = _read_until_closed(out_r, err_r, time.monotonic() + timeout)
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(cmd, timeout) from None
            returncode = json.loads(connection.recv(4096))["returncode"]
        return subprocess.CompletedProcess(cmd, returncode, _text(out), _text(err))


def _umask() -> int:
    """The caller's umask, read from /proc (Linux): setting one to learn the old would leave another thread
    that creates a file in that instant with the wrong mode."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Umask:")), 8)


def _read_until_closed(out_fd: int, err_fd: int, deadline: float) -> tuple[bytes, bytes]:
    """Both pipes read until every writer closed them (the command and any child it left), as communicate()."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                for key, _ in selector.select(left):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
        finally:
            os.close(out_fd)
            os.close(err_fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _text(data: bytes) -> str:
    """As subprocess's text mode decodes: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def serve(listener_fd: int) -> None:
    """The server's loop; it returns only in a command's process, which then runs the command."""
    before = dict(os.environ)
    for name in PRELOAD:
        importlib.import_module(name)
    # what the libraries set at import (pyopencl's PYOPENCL_HOME, where its OpenCL loader finds the drivers:
    # without it the loader crashed), set again in each command as their import there would
    set_at_import = {key: value for key, value in os.environ.items() if before.get(key) != value}
    assert not any(name == "permenum" or name.startswith("permenum.") for name in sys.modules), "imported permenum"
    listener = socket.socket(fileno=listener_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped as they end
    while True:
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            request = _wait_on_command(connection)
            request["env"].update(set_at_import)
            break
        connection.close()
    _become(request)
    sys.argv = ["-m", *request["argv"]]
    runpy.run_module("permenum", run_name="__main__", alter_sys=True)


def _wait_on_command(connection: socket.socket) -> dict[str, Any]:
    """The waiter: fork the command, report its pid, wait, report its exit status; the command returns."""
    message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 2)
    request = json.loads(message)
    request["fds"] = fds
    pid = os.fork()
    if pid == 0:
        connection.close()
        return request
    for fd in fds:
        os.close(fd)
    with contextlib.suppress(OSError):  # a caller past its timeout has gone
        connection.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        connection.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
    os._exit(0)


def _become(request: dict[str, Any]) -> None:
    """The command's process takes the caller's pipes, environment, directory and umask."""
    out_fd, err_fd = request["fds"]
    null = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((null, 0), (out_fd, 1), (err_fd, 2)):
        os.dup2(source, target)
        os.close(source)
    env = request["env"]
    for key in [key for key in os.environ if key not in env]:
        del os.environ[key]
    # only what differs: a library may keep a pointer to a variable's string read at its import
    os.environ.update({key: value for key, value in env.items() if os.environ.get(key) != value})
    os.chdir(request["cwd"])
    os.umask(request["umask"])
