"""Chunk sizes that keep one kernel launch under a time bound, adapted to the device's measured rate.

A GPU kernel cannot be paused, so a task splits its partition into launches short enough that a
signal (time limit, preemption) is answered within one chunk. The next chunk aims at half the
bound at the rate measured so far (per-state cost varies), and grows at most 4x per step; it never
goes below ``floor`` (a GPU's launches need several states per lane or their tail dominates, so
with very heavy states a launch may outlast the bound: choose --signal-seconds above it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from permenum.task_options import DEFAULT_CHUNK_SECONDS

FIRST_CHUNK = 4096
#: A device measured below this fraction of its peers' combined rate takes no more chunks: it could
#: save at most that fraction of the time, less than its host thread and cores cost the devices that
#: do the work (a 32-core CPU beside two H200 GPUs on N-Queens: 0.1%).
RETIRE_BELOW = 0.01


@dataclass
class ChunkSizer:
    bound_seconds: float = DEFAULT_CHUNK_SECONDS
    size: int = FIRST_CHUNK
    floor: int = 1

    def next(self, remaining: int) -> int:
        take = min(max(self.size, self.floor), remaining)
        return remaining if remaining - take < self.floor else max(1, take)  # no launch below the floor at the end

    def resume_at(self, states: int, seconds: float) -> None:
        """Start a resumed task at the rate its earlier attempts measured, not at FIRST_CHUNK again."""
        if states > 0 and seconds > 0:
            self.size = max(self.size, int(states * (0.5 * self.bound_seconds) / seconds))

    def observe(self, states: int, seconds: float) -> None:
        if states <= 0:
            return
        ideal = states * (0.5 * self.bound_seconds) / max(seconds, 1e-6)
        self.size = int(max(1, min(ideal, 4 * self.size)))


class WorkIndex:
    """The partition's states measured in estimated work (the pool's ``est_cost``), so that devices share
    the rest by what it costs, not by how many states it holds.

    Per-state cost varies along a partition (rows are in tree order): on two H200 GPUs, N-Queens 21,
    equal state counts took 5.84 s and 3.44 s, and shares by state count left one GPU 4.5 s behind
    the other. The Knuth estimates summed over a chunk predicted its kernel seconds within 3% there.
    Without estimates every state counts 1.
    """

    def __init__(self, costs: np.ndarray | None, total: int):
        weights = np.ones(total) if costs is None else np.maximum(np.asarray(costs, np.float64), 1e-9)
        self.cum = np.concatenate([[0.0], np.cumsum(weights)])

    def between(self, start: int, end: int) -> float:
        return float(self.cum[end] - self.cum[start])

    def of(self, ranges: Iterable[tuple[int, int]]) -> float:
        return sum(self.between(a, b) for a, b in ranges)

    def states_within(self, start: int, work: float, most: int) -> int:
        """How many states from ``start`` (at most ``most``) fit in ``work``; 0 if not even one does."""
        end = int(np.searchsorted(self.cum, self.cum[start] + work * (1 + 1e-12), side="right")) - 1
        return int(min(max(end - start, 0), most))


@dataclass(frozen=True)
class Peer:
    """Another device of the task, as the one deciding its next chunk sees it."""

    rate: float  # work (WorkIndex) per second; 0: not known, not counted
    busy: float = 0.0  # seconds until its chunk in flight ends (0: free now)


def share_of_rest(remaining: float, own_rate: float, peers: list[Peer], floor: float = 1, unit: float = 1,
                  own_busy: float = 0.0) -> float:
    """The most of the ``remaining`` unclaimed work one device of several may claim now (in the units
    of the rates: states, or a WorkIndex's estimated work).

    PHACT's rule, rate-proportional shares, with the chunks still in flight accounted for: the share
    ends at the moment T when this device and its peers -- each joining once its own chunk ends --
    would together have finished the rest, so devices finish together and a device 35x slower takes
    a sliver, never the task's end. (Without the in-flight chunks, the first of two GPUs to finish a
    chunk takes half of the rest, the other then half of what is left, and so on: many short launches,
    each with its own tail.) The claimer's own chunk in flight counts too (``own_busy``: a chunk claimed
    ahead begins when that one ends); one busy past T gets 0 and asks again when free. A device whose own
    rate is not known takes an equal share; peers of unknown rate (a CPU on its probe chunk) do not count.
    0 means: leave the rest to the others; the fastest device, free, never gets 0 while states remain (the
    crumbs are its), so the rest is always taken. A device does not leave less than its ``floor`` behind (a
    GPU launch of crumbs is all tail), one below RETIRE_BELOW of its peers' rate gets 0, and a share below
    ``unit`` (one state) counts as 0.
    """
    if not peers:
        return remaining
    if own_rate <= 0:
        return remaining / (len(peers) + 1)
    counted = [(p.busy, p.rate) for p in peers if p.rate > 0]
    if own_rate < RETIRE_BELOW * sum(r for _, r in counted):
        return 0
    end = _finish_time(remaining, [*counted, (own_busy, own_rate)])
    share = min(own_rate * max(end - own_busy, 0.0), remaining)
    if share >= unit and remaining - share < floor:
        return remaining
    if share >= unit:
        return share
    if own_busy > 0:
        return 0
    return 0 if own_rate < max((r for _, r in counted), default=0.0) else remaining


def _finish_time(remaining: float, devices: list[tuple[float, float]]) -> float:
    """When ``devices`` (seconds until each is free, its rate), each working from then on, have done
    ``remaining``: T lies past each device that frees up before the rest is done."""
    t, rate, left = 0.0, 0.0, float(remaining)
    for busy, device_rate in sorted(devices):
        if rate > 0 and left <= rate * (busy - t):
            break
        left -= rate * max(busy - t, 0.0)
        t, rate = max(t, busy), rate + device_rate
    return t + left / rate
