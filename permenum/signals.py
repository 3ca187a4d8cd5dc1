"""The signals that ask a task to stop after its current chunk, and holding them back at start-up.

Only the standard library here: the `permenum` command imports this first (permenum.launch).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

#: SIGUSR1: ``--signal=B:USR1@S`` before the time limit, ``scancel --signal=USR1``; SIGTERM: preemption,
#: ``scancel``; SIGINT: Ctrl-C.
STOP_SIGNALS = (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT)
#: `permenum task` exits with this (EX_TEMPFAIL) when it stopped early after checkpointing; `status` reads
#: it back in the scheduler's exit code ("75:0").
EXIT_INTERRUPTED = 75


def hold_stop_signals(signals: tuple[int, ...] = STOP_SIGNALS) -> None:
    """Block the stop signals: one that arrives stays pending until a handler is installed and they are released."""
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)


def release_stop_signals(signals: tuple[int, ...] = STOP_SIGNALS) -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


@contextmanager
def stop_signals_held(signals: tuple[int, ...] = STOP_SIGNALS) -> Iterator[None]:
    """Block the stop signals for a moment, then restore the mask (one that came meanwhile is delivered then).

    What starts meanwhile keeps the mask: a process (fork, exec and posix_spawn keep it) and a thread, and
    the processes that thread starts in turn. A signal sent to the whole process group (`timeout -s USR1`,
    a scheduler signalling every process of a job) then leaves them running under the run instead of
    ending them."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (it tracks the semaphores of worker processes' queues) with the
    stop signals held: a USR1 sent to the whole process group killed it, and its relaunch printed a KeyError
    traceback for every semaphore at the end of an otherwise clean stop. Before the first process is spawned."""
    from multiprocessing import resource_tracker

    with stop_signals_held():
        resource_tracker.ensure_running()
