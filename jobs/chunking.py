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


def share_of_rest(remaining: int, own_rate: float, other_rates: list[float]) -> int:
    """The most of the ``remaining`` unclaimed states one device of several may claim now.

    PHACT's rule: shares follow the measured rates (states per second), so a chunk of
    ``remaining * own / (own + others)`` states ends when the devices together would have finished
    the rest -- a device 35x slower than the others takes a sliver, never the task's end. A device
    whose own rate is not measured yet takes an equal share; devices still on their first (probe)
    chunk do not count against one whose rate is known. 0 means: leave the rest to the others; the
    fastest device never gets 0 while states remain (the crumbs are its), so the rest is always taken.
    """
    if not other_rates:
        return remaining
    if own_rate <= 0:
        return -(-remaining // (len(other_rates) + 1))
    known = [r for r in other_rates if r > 0]
    share = int(remaining * own_rate / (own_rate + sum(known)))
    return share if share > 0 or own_rate < max(known, default=0.0) else remaining
