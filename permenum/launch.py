"""The `permenum` command's first instant: a task holds its stop signals back until its handler is in place.

SLURM may send ``--signal``'s USR1 within a second of starting an array element (seen: 0.3 s after a
requeued element was started by backfill; SLURM sends it up to a minute early), while `permenum.cli`
and its libraries still import (0.4-0.7 s); USR1's default action would end the task without a
checkpoint. Held back, the signal is delivered once `permenum.cli.app.main` has installed the handler.
Before this process runs at all, the array script ignores USR1 (`trap '' USR1`, inherited across
exec): one that came while bash or the interpreter started killed an element here under load.

The command's process then finds no pandas (permenum.without_pandas), and ends without the
interpreter's teardown (``_exit_now``).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

from permenum.signals import hold_stop_signals


def main() -> None:
    if sys.argv[1:2] == ["task"]:
        hold_stop_signals()
    from permenum.without_pandas import WithoutPandas

    sys.meta_path.insert(0, WithoutPandas())
    from permenum.cli.app import main as cli_main

    try:
        cli_main()
    except SystemExit as stop:
        _exit_now(stop.code)
    _exit_now(0)


def _exit_now(code: object) -> NoReturn:
    """End as the interpreter would -- threads joined, exit handlers run (multiprocessing's finalizers,
    logging's flush), the streams flushed, the status kept -- but without its teardown of every module
    and object: on an H100 node that took 0.27 s after the last exit handler (pyopencl's objects and the
    NVIDIA driver's own exit), 2% of an N-Queens 21 run. Every file is written and synced before the
    command returns, so nothing is lost that the teardown would have saved."""
    if code is not None and not isinstance(code, int):  # sys.exit("text"): said on stderr, status 1
        print(code, file=sys.stderr)
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            pass
    os._exit(code or 0)
