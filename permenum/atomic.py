"""Atomic, durable file writes: a reader sees the old file or the whole new one, never a torn one."""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable


def fsync_dir(directory: Path) -> None:
    """Make the directory's entries (files created or renamed in it) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    """The process's umask: from /proc (Linux), else by setting it and straight back (not thread-safe)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def write_atomic(path: Path, writer: Callable[[Path], None], *, replace: bool = True, durable: bool = True,
                 sync_dir: bool = True) -> None:
    """Call ``writer(tmp)`` on a temporary sibling of ``path``, fsync it, then rename it into place.

    With ``replace=False`` an existing ``path`` is an error (used for results, which are never
    edited); the check and the rename are made race-free by ``os.link``. ``durable=False`` skips the
    fsyncs (a hint, which a crash may leave empty, and whose reader takes that for none): still atomic
    for readers, and 2 fsyncs (4.5 ms here) cheaper. ``sync_dir=False`` leaves the folder's fsync to the
    caller, who writes many files into it and fsyncs it once (fsync_dir) before saying they are written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file meant, not its temporary sibling (a read-only or full directory)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it 0600: a run's files follow the umask, as open() would
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        writer(tmp)
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # raises FileExistsError instead of overwriting
            tmp.unlink()
        if durable and sync_dir:
            fsync_dir(path.parent)
    except OSError as exc:
        if exc.errno is None:  # not the system's refusal (pyarrow's own OSError in a writer): as it came
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # the file meant (a full disk, a quota)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_bytes_atomic(path: Path, data: bytes, *, replace: bool = True, sync_dir: bool = True) -> None:
    write_atomic(path, lambda tmp: tmp.write_bytes(data), replace=replace, sync_dir=sync_dir)


def write_json_atomic(path: Path, obj: Any, *, replace: bool = True, durable: bool = True) -> None:
    data = (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()
    write_atomic(path, lambda tmp: tmp.write_bytes(data), replace=replace, durable=durable)


def quarantine(path: Path) -> Path:
    """Move a file that cannot be trusted aside as ``<name>.bad-<time>`` (never delete evidence); returns where it went."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    target = path.with_name(f"{path.name}.bad-{stamp}")
    path.rename(target)
    return target


def write_new_file(path: Path, data: bytes | memoryview) -> None:
    """Create ``path`` (it must not exist), write ``data`` and fsync it; the caller fsyncs the directory
    once for many such files (a pool's partitions, committed together by the manifest written after).
    An error names the file (os.write and fsync do not)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
