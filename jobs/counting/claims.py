"""Claims: a partition being counted by a live task is not started again by another executor.

Why: `permenum run R` beside another `run R` (or beside the array of `permenum submit R`) counted every
partition twice, the second results landing in ``results/duplicates/`` (4 of 4 partitions). The counts
stayed exact; the work was done twice.

How: a task holds ``claims/part-NNNNN.claim`` (RunLayout.claim_file) for as long as it counts the
partition, with ``flock(LOCK_EX)`` on an open descriptor. The kernel drops a flock when its holder's
process ends, however it ends (kill -9 included), so a dead task's claim never outlives it and there is
nothing to clean up. The file names its holder (host, pid, SLURM task, since) so that whoever is turned
away can say by whom, and is emptied when the claim is let go. After taking a claim the task checks for a
sound result (records.sound_result): a partition finished by another executor while this one waited its
turn is not counted again (``again=True``, `permenum task --force`, counts it again on purpose).

Across hosts: flock is the claim wherever the file system carries it between hosts -- NFS (Linux clients
emulate flock with NFS byte-range locks, held by the server: v4, or v3 with lockd), Lustre mounted with
``-o flock``, CephFS, GPFS -- and always between the processes of one host. Where it is local to each host
(Lustre ``-o localflock``, NFS ``-o local_lock=flock|all`` or ``nolock``, BeeGFS without global file
locks), a heartbeat covers: the holder touches the file every HEARTBEAT_SECONDS, and a claim whose flock
is free but whose file names a holder on *another* host is taken as held while that heartbeat goes on;
only once it has stood still for STALE_SECONDS (measured here, so no two hosts' clocks are compared) is
the holder taken for dead. A task on another host whose holder died uncleanly therefore waits up to
STALE_SECONDS before counting -- a requeued SLURM task is not turned away by its own killed predecessor.
What remains on such a file system: two tasks on two hosts claiming one free partition in the same
instant may both count it; its second result is kept as a duplicate (a different count is a
ResultConflict), so the total stays exact and only time is lost.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from permenum.errors import UserError, printable
from permenum.jobs.counting.environment import TaskEnvironment
from permenum.layout import RunLayout
from permenum.ranges import compact_ranges
from permenum.records import Manifest, load_manifest, now_utc, sound_result

#: How often a holder touches its claim file (the heartbeat seen from hosts where flock does not reach).
HEARTBEAT_SECONDS = 15.0
#: A claim of another host whose heartbeat stood still this long is a dead task's: 4 beats missed.
STALE_SECONDS = 60.0
_POLL_SECONDS = 1.0


class PartitionClaimed(UserError):
    """The partition is another executor's: being counted by a live task, or finished by one meanwhile.
    Not a failure of the partition (no error record is written)."""

    def __init__(self, partition: int, holder: str, finished: bool = False):
        what = f"was counted meanwhile by another executor ({holder})" if finished else f"is being counted by {holder}"
        super().__init__(f"partition {partition} {what}: left to it")
        self.partition, self.holder, self.finished = partition, holder, finished


@dataclass(frozen=True)
class Holder:
    """Who holds a claim, as its file says."""

    host: str
    pid: int
    slurm_task: str | None
    since: str

    def describe(self) -> str:
        job = f", SLURM task {self.slurm_task}" if self.slurm_task else ""
        return f"pid {self.pid} on {self.host}{job}, since {self.since}"

    def to_bytes(self) -> bytes:
        return (json.dumps({"host": self.host, "pid": self.pid, "slurm_task": self.slurm_task,
                            "since": self.since}) + "\n").encode()

    @classmethod
    def parse(cls, data: bytes) -> "Holder | None":
        """The holder a claim file names; None when it is empty (let go) or unreadable (being written)."""
        try:
            d = json.loads(data)
            return cls(str(d["host"]), int(d["pid"]), None if d["slurm_task"] is None else str(d["slurm_task"]),
                       str(d["since"]))
        except (ValueError, TypeError, KeyError):
            return None

    @classmethod
    def this_process(cls) -> "Holder":
        origin = TaskEnvironment.read().origin
        return cls(origin.host, origin.pid, origin.slurm_task or (str(origin.slurm_job_id) if origin.slurm_job_id else None),
                   now_utc())


def _open(layout: RunLayout, partition: int) -> int:
    """The claim file's descriptor (created where missing); an OSError names the file and what it was for."""
    path = layout.claim_file(partition)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise _claiming(exc, partition, exc.filename or path) from None


def _claiming(exc: OSError, partition: int, path: str | Path) -> OSError:
    """The system's refusal to take a claim, naming the file and what it was for."""
    return OSError(exc.errno, f"{exc.strerror} (claiming partition {partition})", str(path))


def _lock(fd: int) -> bool:
    """Take the flock without waiting: False when a live process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise


def _named(fd: int) -> tuple[Holder | None, int]:
    """What the file says about its holder, and its mtime (ns): the heartbeat."""
    return Holder.parse(os.pread(fd, 4096, 0)), os.fstat(fd).st_mtime_ns


def _foreign_alive(fd: int, wait: bool) -> Holder | None:
    """With the flock taken: the holder on another host that the file still names and whose heartbeat goes
    on (flock did not reach this host from its), else None. ``wait``: watch the heartbeat until it moves
    (alive) or has stood still for STALE_SECONDS (dead); otherwise judge by its age on this host's clock."""
    holder, beat = _named(fd)
    if holder is None or holder.host == socket.gethostname():  # flock is exact between one host's processes
        return None
    if not wait:
        return holder if time.time() - beat / 1e9 < STALE_SECONDS else None
    deadline = time.monotonic() + STALE_SECONDS
    while time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
        now, moved = _named(fd)
        if now is None or now.host == socket.gethostname():
            return None  # let go meanwhile
        if moved != beat:
            return now
    return None


class _Heartbeats:
    """One thread touching every claim file this process holds, every HEARTBEAT_SECONDS. Why one for all:
    a thread a claim took 1.6 ms a task to start and join here, and `run` holds 20,000 claims one after
    another (three at a time)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fds: set[int] = set()
        self.thread: threading.Thread | None = None

    def hold(self, fd: int) -> None:
        with self.lock:
            self.fds.add(fd)
            if self.thread is None:
                self.thread = threading.Thread(target=self._beat, name="claim-heartbeat", daemon=True)
                self.thread.start()

    def let_go(self, fd: int) -> None:
        """Once this returns, ``fd`` is touched no more (it may be closed and its number reused)."""
        with self.lock:
            self.fds.discard(fd)

    def _beat(self) -> None:
        while True:
            time.sleep(HEARTBEAT_SECONDS)
            with self.lock:
                for fd in self.fds:
                    try:
                        os.utime(fd)
                    except OSError:
                        pass  # a missed beat: other hosts may take the claim for dead after STALE_SECONDS, never sooner


_HEARTBEATS = _Heartbeats()


def _done(layout: RunLayout, manifest: Manifest, partition: int) -> str | None:
    """Who wrote the partition's sound result, None when it has none (a damaged one the task replaces)."""
    try:
        record = sound_result(layout, manifest, partition)
    except UserError:
        return None
    return None if record is None else f"attempt {record.attempt}, pid {record.origin.pid} on {record.origin.host}"


@contextmanager
def claim(layout: RunLayout, partition: int, again: bool = False, manifest: Manifest | None = None) -> Iterator[None]:
    """Hold the partition's claim while the block runs; PartitionClaimed when another live task holds it,
    or when it has a sound result and ``again`` is not set (finished by another executor meanwhile).
    ``manifest``: the run's, where the caller has read it (one read a task, a merge)."""
    manifest = manifest or load_manifest(layout)
    manifest.partition(partition)  # no claim file for a partition the pool does not have
    fd = _open(layout, partition)
    try:
        if not _lock(fd):
            holder, _ = _named(fd)
            raise PartitionClaimed(partition, holder.describe() if holder else "another task")
        foreign = _foreign_alive(fd, wait=True)
        if foreign is not None:
            raise PartitionClaimed(partition, foreign.describe())
        done = None if again else _done(layout, manifest, partition)
        if done is not None:
            raise PartitionClaimed(partition, done, finished=True)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, Holder.this_process().to_bytes(), 0)
        except OSError as exc:  # a full disk: os.pwrite names no file
            raise _claiming(exc, partition, layout.claim_file(partition)) from None
        _HEARTBEATS.hold(fd)
        try:
            yield
        finally:
            _HEARTBEATS.let_go(fd)
            os.ftruncate(fd, 0)  # let go: an empty file names no holder
    finally:
        os.close(fd)  # drops the flock


def claimed_elsewhere(layout: RunLayout, partitions: list[int]) -> dict[int, str]:
    """Which of ``partitions`` live tasks hold now, with their holders (a glance: a claim may be taken or
    let go right after). Opens every claim file, so a run directory this process cannot write is an
    OSError here, naming the file, before anything starts."""
    held: dict[int, str] = {}
    for i in partitions:
        fd = _open(layout, i)
        try:
            if not _lock(fd):
                holder, _ = _named(fd)
            else:
                holder = _foreign_alive(fd, wait=False)
                if holder is None:
                    continue
            held[i] = holder.describe() if holder else "another task"
        finally:
            os.close(fd)
    return held


def live_claims(layout: RunLayout, partitions: Iterable[int]) -> dict[int, Holder | None]:
    """Which of ``partitions`` live tasks hold now, with the holder each file names (None: not written yet),
    for `status`: read without creating a file or taking a lock, since status may read a run it cannot
    write, and a lock taken only to look turns away a task claiming in that instant. A flock of this host
    is listed in /proc/locks (Linux), or its file names a live process of this host; another
    host's claim is alive while its heartbeat goes on (_foreign_alive)."""
    flocked = _flocked()
    held: dict[int, Holder | None] = {}
    for i in partitions:
        try:
            fd = os.open(layout.claim_file(i), os.O_RDONLY)
        except OSError:
            continue  # never claimed (or unreadable here): no evidence of a live task
        try:
            st = os.fstat(fd)
            holder, _ = _named(fd)
            # /proc/locks may name another device than stat (overlayfs, btrfs subvolumes): a holder named on this
            # host whose pid is alive holds it too (a claim let go is emptied first)
            here = (flocked is not None and (st.st_dev, st.st_ino) in flocked) or (
                holder is not None and holder.host == socket.gethostname() and _pid_alive(holder.pid))
            if here or _foreign_alive(fd, wait=False) is not None:
                held[i] = holder
        finally:
            os.close(fd)
    return held


def _flocked() -> set[tuple[int, int]] | None:
    """(device, inode) of every file a process of this host holds a flock on, from /proc/locks; None where
    the system has no such list. Its lines: ``1: FLOCK  ADVISORY  WRITE 10176 fe:00:2147459 0 EOF`` (device
    numbers in hex); a waiter's read ``1: -> FLOCK ...``."""
    try:
        text = open("/proc/locks", encoding="ascii", errors="replace").read()
    except OSError:
        return None
    held: set[tuple[int, int]] = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            held.add((os.makedev(int(major, 16), int(minor, 16)), int(inode)))
        except ValueError:
            continue
    return held


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def left_to_others(held: dict[int, str]) -> str:
    """One line: which partitions this executor left to others, and to whom (the first holder named)."""
    first = min(held)
    which = f"partitions {compact_ranges(sorted(held))}" if len(held) > 1 else f"partition {first}"
    named = f"partition {first}: {held[first]}; {len(held) - 1} more" if len(held) > 1 else held[first]
    return f"{which} left to another executor ({printable(named)}); not counted here"
