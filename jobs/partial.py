"""Exact partial sums over some states of a partition, and the bookkeeping of chunks done out of order.

With several devices a partition's chunks finish out of order. The checkpoint keeps the sums of
the contiguous prefix that is done and, separately, each finished chunk beyond it, so a resumed
task skips exactly the states already counted and nothing is counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from permenum.records import parse_count


@dataclass
class Partial:
    weighted: int = 0
    raw: int = 0
    classes: int | None = 0
    nodes: int | None = 0
    kernel_seconds: float = 0.0
    solutions: list[list[int]] | None = field(default_factory=list)
    chunks: int = 0

    def add(self, other: "Partial") -> None:
        self.weighted += other.weighted
        self.raw += other.raw
        self.classes = None if self.classes is None or other.classes is None else self.classes + other.classes
        self.nodes = None if self.nodes is None or other.nodes is None else self.nodes + other.nodes
        self.kernel_seconds += other.kernel_seconds
        self.solutions = None if self.solutions is None or other.solutions is None else self.solutions + other.solutions
        self.chunks += other.chunks

    def as_json(self) -> dict[str, Any]:
        return {"weighted": self.weighted, "raw": self.raw, "classes": self.classes, "nodes": self.nodes,
                "kernel_seconds": self.kernel_seconds, "solutions": self.solutions, "chunks": self.chunks}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Partial":
        return cls(parse_count(d["weighted"]), parse_count(d["raw"]), None if d.get("classes") is None else parse_count(d["classes"]),
                   d.get("nodes"), float(d["kernel_seconds"]), d.get("solutions"), int(d["chunks"]))


class ChunkLedger:
    """Which states of [0, total) are counted: a done prefix plus finished chunks beyond it.

    ``claim`` hands out the next uncounted range (skipping chunks finished in an earlier attempt);
    ``finish`` records a chunk and folds every chunk that now touches the prefix into it.
    """

    def __init__(self, total: int, prefix_end: int, prefix: Partial, ahead: dict[int, tuple[int, Partial]]):
        self.total = total
        self.prefix_end = prefix_end
        self.prefix = prefix
        self.ahead = dict(ahead)  # start -> (end, sums)
        self.cursor = prefix_end
        self._fold()

    @classmethod
    def resumed(cls, total: int, prefix_end: int, prefix: dict[str, Any], ahead: list[dict[str, Any]]) -> "ChunkLedger":
        """The ledger a checkpoint saved (its ``prefix_json`` and ``ahead_json``)."""
        return cls(total, prefix_end, Partial.from_json(prefix),
                   {int(a["start"]): (int(a["end"]), Partial.from_json(a)) for a in ahead})

    def ahead_json(self) -> list[dict[str, Any]]:
        """The chunks finished beyond the prefix, for a checkpoint: each chunk's sums with its "start" and "end"."""
        return [{"start": s, "end": e, **sums.as_json()} for s, (e, sums) in sorted(self.ahead.items())]

    def remaining_unclaimed(self) -> int:
        return sum(end - start for start, end in self.unclaimed_ranges())

    def unclaimed_ranges(self) -> list[tuple[int, int]]:
        """The ranges still to be claimed, in order (the gaps between chunks finished earlier)."""
        out, at = [], self.cursor
        for start in sorted(s for s in self.ahead if s >= self.cursor):
            if start > at:
                out.append((at, start))
            at = max(at, self.ahead[start][0])
        return out + ([(at, self.total)] if at < self.total else [])

    def claim(self, size: int) -> tuple[int, int] | None:
        while self.cursor in self.ahead:  # done in an earlier attempt
            self.cursor = self.ahead[self.cursor][0]
        if self.cursor >= self.total:
            return None
        nxt = min((s for s in self.ahead if s > self.cursor), default=self.total)
        end = min(self.cursor + size, nxt)
        start, self.cursor = self.cursor, end
        return start, end

    def finish(self, start: int, end: int, sums: Partial) -> None:
        self.ahead[start] = (end, sums)
        self._fold()

    def _fold(self) -> None:
        while self.prefix_end in self.ahead:
            end, sums = self.ahead.pop(self.prefix_end)
            self.prefix.add(sums)
            self.prefix_end = end

    @property
    def complete(self) -> bool:
        return self.prefix_end >= self.total and not self.ahead
