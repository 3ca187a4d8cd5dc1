"""One writer at a time per run directory: `pool`, `submit` and `resubmit` hold the run's lock.

Why: two `submit`s at once both submitted every partition (all work done twice), and two `pool`s
into one directory left a manifest matching half its files. The lock is a POSIX record lock
(``fcntl.lockf``) on ``RUN/.permenum.lock``: it holds across the hosts of NFS (v3 with lockd, v4)
and of Lustre or GPFS mounted with their ``flock`` option; on a file system without POSIX locks
across hosts, run these commands from one host. The lock goes with the process, even on kill -9.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from permenum.errors import UserError
from permenum.layout import RunLayout


@contextmanager
def run_lock(layout: RunLayout, command: str) -> Iterator[None]:
    """Hold the run directory's lock (the directory exists); another holder makes this a one-line error."""
    fd = os.open(layout.lock_file, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno == errno.ENOLCK:
                raise UserError(f"{layout.lock_file}: this file system keeps no locks (NFS without lockd?); run "
                                f"`permenum {command}` on the host that holds the directory") from None
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            raise UserError(f"{layout.root} is busy: another `permenum pool`, `submit`, `resubmit` or `merge` is at work on it; "
                            f"run `permenum {command}` again once it has finished") from None
        yield
    finally:
        os.close(fd)
