"""Chunk sizes that keep one kernel launch under a time bound, adapted to the device's measured rate.

A GPU kernel cannot be paused, so a task splits its partition into launches short enough that a
signal (time limit, preemption) is answered within one chunk. The next chunk aims at half the
bound at the rate measured so far (per-state cost varies), and grows at most 4x per step; it never
goes below ``floor`` (a GPU's launches need several states per lane or their tail dominates, so
with very heavy states a launch may outlast the bound: choose --signal-seconds above it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

FIRST_CHUNK = 4096
DEFAULT_CHUNK_SECONDS = 30.0
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
        if math.isinf(self.bound_seconds):
            return max(1, remaining)
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


@dataclass(frozen=True)
class Peer:
    """Another device of the task, as the one deciding its next chunk sees it."""

    rate: float  # states per second; 0: not known, not counted
    busy: float = 0.0  # seconds until its chunk in flight ends (0: free now)


def share_of_rest(remaining: int, own_rate: float, peers: list[Peer], floor: int = 1) -> int:
    """The most of the ``remaining`` unclaimed states one device of several may claim now.

    PHACT's rule, rate-proportional shares, with the chunks still in flight accounted for: the share
    ends at the moment T when this device and its peers -- each joining once its own chunk ends --
    would together have finished the rest, so devices finish together and a device 35x slower takes
    a sliver, never the task's end. (Without the in-flight chunks, the first of two GPUs to finish a
    chunk takes half of the rest, the other then half of what is left, and so on: many short launches,
    each with its own tail.) A device whose own rate is not known takes an equal share; peers of
    unknown rate (a CPU on its probe chunk) do not count. 0 means: leave the rest to the others; the
    fastest device never gets 0 while states remain (the crumbs are its), so the rest is always taken.
    A device does not leave fewer than its ``floor`` states behind (a GPU launch of crumbs is all tail),
    and one below RETIRE_BELOW of its peers' rate gets 0.
    """
    if not peers:
        return remaining
    if own_rate <= 0:
        return -(-remaining // (len(peers) + 1))
    counted = sorted((p.busy, p.rate) for p in peers if p.rate > 0)
    if own_rate < RETIRE_BELOW * sum(r for _, r in counted):
        return 0
    t, rate, left = 0.0, own_rate, float(remaining)
    for busy, peer_rate in counted:  # T lies past each peer that frees up before the rest is done
        if left <= rate * (busy - t):
            break
        left -= rate * max(busy - t, 0.0)
        t, rate = max(t, busy), rate + peer_rate
    share = min(int(own_rate * (t + left / rate)), remaining)
    if share > 0 and remaining - share < floor:
        return remaining
    return share if share > 0 or own_rate < max((r for _, r in counted), default=0.0) else remaining
