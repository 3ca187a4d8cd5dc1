"""Which device of a task counts which states next: chunks handed out over one partition to several devices.

Each device claims its next chunk while it counts the one before (jobs.counting.device_loop refines it meanwhile).
The chunk is the smallest of: its time bound (the device's ChunkSizer), half its PHACT share of the
unclaimed work (jobs.counting.chunking.share_of_rest, in the pool's estimated work, with every device's chunk in
flight accounted for, its own too; FACTOR says why half), and -- until every device has a measured
rate -- its first-chunk size, so no device runs ahead alone. A stop request is
honoured by a device once it has done a launch in this attempt (a chunk, or a slice of a refined
chunk: jobs.counting.refine): a partition whose every restart is signalled at once (SLURM may signal up to a
minute early) still advances.

All state lives in this object's named fields, behind one lock; it knows nothing of files or
OpenCL, so it is tested with plain numbers (tests/test_schedule.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from permenum.jobs.counting.chunking import ChunkSizer, Peer, WorkIndex, share_of_rest
from permenum.jobs.counting.partial import ChunkLedger, OpenChunk, Partial


#: How much longer than a slice's rate suggests a chunk is expected to take (expected_seconds).
SLICE_GUESS_MARGIN = 2.0
#: The part of its PHACT share (jobs.counting.chunking.share_of_rest) a device of several claims at once: the rest is
#: claimed again as the devices free up, so chunks shrink as the partition nears its end (factoring) and
#: a chunk whose estimate was low ends in a short tail. The whole share trusts the pool's estimates: on 4
#: H100 one N-Queens 22 task's devices ended 13 s apart (25.2-38.2 s), the last chunk alone at the end.
FACTOR = 0.5
#: The shortest chunk a refining device (jobs.counting.refine) takes at its measured rate, unless it is the rest:
#: halving shares toward the end otherwise made one N-Queens 22 task's tail on 4 H100 some 70 chunks of
#: 0.01-0.3 s of kernel, each refined on the host for 0.05-0.2 s (deeper the smaller it is), 8 s of 38.7 s.
LEAST_CHUNK_SECONDS = 0.5


@dataclass
class DeviceState:
    """One device as the scheduler sees it: its chunk sizing, its measured rate, its chunk in flight."""

    label: str
    is_gpu: bool
    sizer: ChunkSizer
    first_chunk: int  # states of a first launch, also the cap while some peer's rate is unknown
    least_seconds: float = 0.0  # the shortest chunk worth its host work (LEAST_CHUNK_SECONDS)
    rate: float = 0.0  # estimated work (WorkIndex) per kernel-second, 0 until measured
    #: The rate a refined chunk's slice showed before any chunk ended (its share of the chunk's work taken
    #: as its share of the fine states): only for expected_seconds, so that the chunk refined meanwhile
    #: is staged whole where it fits the bound, not measured in slices again.
    slice_rate: float = 0.0
    states: int = 0  # counted in this attempt
    launches: int = 0  # chunks and slices of chunks counted in this attempt
    held: int = 0  # chunks claimed and not finished: the one it runs, and one claimed ahead
    in_flight: float = 0.0  # their estimated work
    since: float = 0.0  # when the chunk it runs now began (the scheduler's clock)

    def expected_rate(self, devices: list["DeviceState"]) -> float:
        """Its measured rate, else that of measured devices of its kind (a second GPU like the first), else 0."""
        if self.rate > 0:
            return self.rate
        kin = [d.rate for d in devices if d.rate > 0 and d.is_gpu == self.is_gpu]
        return sum(kin) / len(kin) if kin else 0.0

    def as_peer(self, devices: list["DeviceState"], now: float) -> Peer:
        rate = self.expected_rate(devices)
        busy = max(self.in_flight / rate - (now - self.since), 0.0) if rate > 0 and self.in_flight else 0.0
        return Peer(rate, busy)


@dataclass(frozen=True)
class StopRule:
    """When a task should stop early: on request (a signal), or once the attempt has run ``max_seconds``."""

    requested: threading.Event
    max_seconds: float | None = None
    started: float = 0.0  # the attempt's start on the scheduler's clock

    def due(self, now: float) -> bool:
        return self.requested.is_set() or (self.max_seconds is not None and now - self.started >= self.max_seconds)


class RateBook:
    """Each device's rate (estimated work per kernel-second, by label) as measured by the tasks of one run in
    this process, so that a partition starts at its predecessors' rate instead of ramping up from a small
    first chunk again (on an H100, 64 N-Queens 22 partitions of 1.7 s of kernel each spent about 3 s each
    beside it: first chunks of 1/16, refined on the host one after another). The estimates share one unit
    across a pool's partitions (poolgen.cost), so a rate carries over."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rates: dict[str, float] = {}

    def get(self, label: str) -> float:
        """The device's last measured rate, 0 where none was."""
        with self._lock:
            return self._rates.get(label, 0.0)

    def seed(self, rates: dict[str, float]) -> None:
        """Take ``rates`` (by label) for devices this book has not measured (the run's earlier tasks' rates,
        from other processes: jobs.counting.rate_hints)."""
        with self._lock:
            self._rates = {**rates, **self._rates}

    def learn(self, devices: list[DeviceState]) -> None:
        """Keep the rates ``devices`` measured (those that measured one)."""
        with self._lock:
            self._rates.update({d.label: d.rate for d in devices if d.rate > 0})


class Scheduler:
    """Hands out the chunks of one partition to its devices; see the module docstring for the rule.

    ``open`` starts the hand-out (after the partition is loaded, while the devices may still be
    building their kernels); ``claim`` and ``finish`` are called by each device's thread;
    ``on_progress`` runs under the lock after every chunk that leaves the partition unfinished
    (the task checkpoints there, so a checkpoint always sees one consistent ledger). ``on_drained``
    runs once, when every device holds its last chunk (the local executor then starts the next task).
    """

    def __init__(self, devices: list[DeviceState], stop: StopRule,
                 clock: Callable[[], float] = time.perf_counter, rates: RateBook | None = None,
                 on_drained: Callable[[], None] = lambda: None) -> None:
        self.devices = devices
        self.stop = stop
        self.clock = clock
        self.rates = rates or RateBook()
        self.on_drained = on_drained
        self.ledger: ChunkLedger | None = None
        self.work: WorkIndex | None = None
        self.on_progress: Callable[[], None] = lambda: None
        self.interrupted = False  # a device honoured a stop request: the others follow
        self.failed = False  # one device failed (a kernel that does not build): the others stop claiming
        self.lock = threading.Lock()
        self._active = set(range(len(devices)))
        self._drained = False
        self._opened = threading.Event()

    def open(self, ledger: ChunkLedger, work: WorkIndex, on_progress: Callable[[], None] | None = None) -> None:
        """Start the hand-out; a device starts at the rate the run's earlier tasks measured on it, else at
        the rate this partition's earlier attempts did."""
        for d in self.devices:
            d.sizer.resume_at(ledger.prefix_end, ledger.prefix.kernel_seconds)
            d.rate = self.rates.get(d.label)
            if d.rate > 0:
                half_bound = work.states_within(ledger.cursor, d.rate * 0.5 * d.sizer.bound_seconds, ledger.total)
                d.sizer.size = max(d.sizer.size, half_bound)
        self.ledger, self.work = ledger, work
        self.on_progress = on_progress or self.on_progress
        self._opened.set()

    def abort(self) -> None:
        """No chunk will be handed out (the partition did not load, or a device failed)."""
        self.failed = True
        self._opened.set()

    def wait_open(self) -> bool:
        """Block until chunks are handed out; False when they never will be."""
        self._opened.wait()
        return not self.failed

    @property
    def progressed(self) -> bool:
        return sum(d.launches for d in self.devices) > 0

    def claim(self, k: int) -> tuple[int, int] | None:
        """Device ``k``'s next chunk of states, or None: it is done (and leaves the hand-out) -- unless it
        still holds a chunk and its peers are to take the rest before that chunk ends (share_of_rest): it
        then asks again when free."""
        ledger, work = self._opened_ledger()
        with self.lock:
            d, now = self.devices[k], self.clock()
            size = self._chunk_size(k, now)
            going = k in self._active and not self.failed and not self._stopping(d, now)
            if size == 0 and going and d.held and ledger.remaining_unclaimed() > 0:
                return None
            claimed = ledger.claim(size) if size > 0 and going else None
            if claimed is None:
                # leave under the same lock: a slower device deciding at this moment must not count
                # on this one to take the tail (both would quit, the task stopped short)
                self._leave(k)
                return None
            if not d.held:  # a chunk claimed ahead (jobs.counting.device_loop) begins when the one before ends
                d.since = now
            d.held += 1
            d.in_flight += work.between(*claimed)
            if ledger.remaining_unclaimed() == 0:  # every device holds its last chunk (a deferred one too)
                self._drain()
            return claimed

    def open_chunk(self, start: int) -> OpenChunk | None:
        """The part of the chunk at ``start`` an earlier attempt counted, if it began it."""
        ledger, _ = self._opened_ledger()
        with self.lock:
            return ledger.open.get(start)

    def expected_seconds(self, k: int, start: int, end: int) -> float | None:
        """Kernel seconds device ``k`` should take over [start, end) at the rate measured, else twice what
        a refined chunk's slice suggests (a slice's share of the work is a guess, and the first states in
        tree order may be light ones: a launch staged whole on it should not outlast the bound); None: not
        known."""
        _, work = self._opened_ledger()
        with self.lock:
            d = self.devices[k]
            rate = d.expected_rate(self.devices)
            guess = d.slice_rate
        if rate > 0:
            return work.between(start, end) / rate
        return SLICE_GUESS_MARGIN * work.between(start, end) / guess if guess > 0 else None

    def advance(self, k: int, start: int, end: int, depth: int, fine_total: int, fine_done: int,
                sums: Partial, slice_states: int) -> None:
        """Device ``k`` counted a slice (``slice_states`` of its fine states) of refined chunk [start, end),
        not its last: keep it (checkpointed)."""
        ledger, work = self._opened_ledger()
        with self.lock:
            d = self.devices[k]
            d.launches += 1
            if d.rate == 0 and sums.kernel_seconds > 0:
                d.slice_rate = work.between(start, end) * slice_states / fine_total / sums.kernel_seconds
            ledger.advance(start, end, depth, fine_total, fine_done, sums)
            self.on_progress()

    def finish(self, k: int, start: int, end: int, sums: Partial, kernel_seconds: float, share: float = 1.0) -> None:
        """Device ``k`` counted [start, end) (or an open chunk's last slice; ``kernel_seconds``: all of its
        launches in this attempt, over ``share`` of the chunk -- less than 1 for a chunk an earlier attempt
        began): fold the sums in, update its rate and chunk size."""
        ledger, work = self._opened_ledger()
        with self.lock:
            d = self.devices[k]
            d.launches += 1
            d.sizer.observe(max(1, round((end - start) * share)), kernel_seconds)
            measured = work.between(start, end) * share / max(kernel_seconds, 1e-9)
            d.rate = measured if d.rate == 0 else 0.5 * (d.rate + measured)
            d.states += end - start
            d.held = max(d.held - 1, 0)
            d.in_flight = max(d.in_flight - work.between(start, end), 0.0) if d.held else 0.0  # the one claimed ahead
            d.since = self.clock()
            ledger.finish(start, end, sums)
            if ledger.complete:
                self.rates.learn(self.devices)
            else:
                self.on_progress()

    def stopping(self, k: int) -> bool:
        """Whether device ``k`` should count no more (a stop request, or a failed peer): it then drops a
        chunk it claimed ahead, which the checkpoint does not hold (a resumed task counts it)."""
        with self.lock:
            return self.failed or self._stopping(self.devices[k], self.clock())

    def leave(self, k: int) -> None:
        """Device ``k`` stops (done or failed); peers no longer wait for it to take the tail."""
        with self.lock:
            self._leave(k)

    def _leave(self, k: int) -> None:
        """(Under the lock.) The last device to leave hands the rest of the run on, if nothing did before."""
        if k in self._active:
            self._active.discard(k)
            if not self._active:
                self._drain()

    def _drain(self) -> None:
        """(Under the lock.) Hand the rest of the run on (``on_drained``), once: every state is claimed, or
        every device has left (done, stopped or failed)."""
        if not self._drained:
            self._drained = True
            self.rates.learn(self.devices)
            self.on_drained()

    def _opened_ledger(self) -> tuple[ChunkLedger, WorkIndex]:
        assert self.ledger is not None and self.work is not None, "claim() before open()"
        return self.ledger, self.work

    def _chunk_size(self, k: int, now: float) -> int:
        """States for device ``k``'s next chunk: time bound, its share of the rest, the GPU floor, the least
        chunk worth its host work (under the lock)."""
        ledger, work = self._opened_ledger()
        d = self.devices[k]
        remaining = ledger.remaining_unclaimed()
        rest = work.of(ledger.unclaimed_ranges())
        peers = [self.devices[j].as_peer(self.devices, now) for j in self._active if j != k]
        floor = work.between(ledger.cursor, min(ledger.cursor + d.sizer.floor, ledger.total))
        unit = work.between(ledger.cursor, min(ledger.cursor + 1, ledger.total))
        own_busy = d.as_peer(self.devices, now).busy  # a chunk claimed ahead begins when its chunk in flight ends
        rate = d.expected_rate(self.devices)
        share = share_of_rest(rest, rate, peers, floor, unit, own_busy)
        if peers and share < rest:
            share = max(FACTOR * share, min(floor, share))
        size = min(d.sizer.next(max(remaining, 1)),
                   remaining if share >= rest else work.states_within(ledger.cursor, share, remaining))
        if size > 0 and rate > 0:
            size = max(size, work.states_within(ledger.cursor, rate * d.least_seconds, remaining))
        if d.rate > 0 and any(p.rate <= 0 for p in peers):
            size = min(size, d.first_chunk)  # until every rate is known, no device runs ahead alone
        return size

    def _stopping(self, d: DeviceState, now: float) -> bool:
        if d.launches == 0:
            return False
        if self.stop.due(now):
            self.interrupted = True
        return self.interrupted
