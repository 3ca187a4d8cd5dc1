"""Exact partial sums over some states of a partition, and the bookkeeping of chunks done out of order.

With several devices a partition's chunks finish out of order. The checkpoint keeps the sums of
the contiguous prefix that is done and, separately, each finished chunk beyond it, so a resumed
task skips exactly the states already counted and nothing is counted twice. A refined chunk too
heavy for one launch is counted in slices of its fine states (jobs.counting.refine): until its last slice it
is *open*, kept with the depth it was refined to and how many of its fine states are counted, and a
resumed task refines it to that depth again and counts the rest.
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
                   None if d.get("nodes") is None else parse_count(d["nodes"]), float(d["kernel_seconds"]),
                   d.get("solutions"), int(d["chunks"]))


@dataclass
class OpenChunk:
    """A refined chunk [start, end) counted in part: its first ``fine_done`` of ``fine_total`` states
    at ``depth`` (the order jobs.counting.refine refines them in), with their sums."""

    end: int
    depth: int
    fine_total: int
    fine_done: int
    sums: Partial

    def as_json(self, start: int) -> dict[str, Any]:
        return {"start": start, "end": self.end, "depth": self.depth, "fine_total": self.fine_total,
                "fine_done": self.fine_done, **self.sums.as_json()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "OpenChunk":
        return cls(int(d["end"]), int(d["depth"]), int(d["fine_total"]), int(d["fine_done"]), Partial.from_json(d))


class ChunkLedger:
    """Which states of [0, total) are counted: a done prefix plus finished chunks beyond it, and the
    open chunks (refined chunks counted in part).

    ``claim`` hands out the next uncounted range (skipping chunks finished in an earlier attempt, an
    open one whole); ``advance`` records a slice of an open chunk; ``finish`` records a chunk (or an
    open one's last slice) and folds every chunk that now touches the prefix into it.
    """

    def __init__(self, total: int, prefix_end: int, prefix: Partial, ahead: dict[int, tuple[int, Partial]],
                 open_chunks: dict[int, OpenChunk] | None = None):
        self.total = total
        self.prefix_end = prefix_end
        self.prefix = prefix
        self.ahead = dict(ahead)  # start -> (end, sums)
        self.open = dict(open_chunks or {})  # start -> its counted part
        self.cursor = prefix_end
        self._fold()

    @classmethod
    def resumed(cls, total: int, prefix_end: int, prefix: dict[str, Any], ahead: list[dict[str, Any]],
                open_chunks: list[dict[str, Any]]) -> "ChunkLedger":
        """The ledger a checkpoint saved (its ``prefix_json``, ``ahead_json`` and ``open_json``)."""
        return cls(total, prefix_end, Partial.from_json(prefix),
                   {int(a["start"]): (int(a["end"]), Partial.from_json(a)) for a in ahead},
                   {int(o["start"]): OpenChunk.from_json(o) for o in open_chunks})

    def ahead_json(self) -> list[dict[str, Any]]:
        """The chunks finished beyond the prefix, for a checkpoint: each chunk's sums with its "start" and "end"."""
        return [{"start": s, "end": e, **sums.as_json()} for s, (e, sums) in sorted(self.ahead.items())]

    def open_json(self) -> list[dict[str, Any]]:
        return [chunk.as_json(start) for start, chunk in sorted(self.open.items())]

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
        self.cursor = max(self.cursor, self.prefix_end)  # a chunk done in an earlier attempt may be folded in
        while self.cursor in self.ahead:  # done in an earlier attempt
            self.cursor = self.ahead[self.cursor][0]
        if self.cursor >= self.total:
            return None
        if self.cursor in self.open:  # begun in an earlier attempt: claimed as it was refined
            start, self.cursor = self.cursor, self.open[self.cursor].end
            return start, self.cursor
        nxt = min((s for s in (*self.ahead, *self.open) if s > self.cursor), default=self.total)
        end = min(self.cursor + size, nxt)
        start, self.cursor = self.cursor, end
        return start, end

    def advance(self, start: int, end: int, depth: int, fine_total: int, fine_done: int, sums: Partial) -> None:
        """A slice of refined chunk [start, end) is counted: its fine states up to ``fine_done``."""
        chunk = self.open.get(start)
        if chunk is None:
            chunk = self.open[start] = OpenChunk(end, depth, fine_total, 0, Partial(
                classes=None if self.prefix.classes is None else 0, nodes=None if self.prefix.nodes is None else 0))
        assert (chunk.end, chunk.depth, chunk.fine_total) == (end, depth, fine_total) and fine_done > chunk.fine_done
        chunk.fine_done = fine_done
        chunk.sums.add(sums)

    def finish(self, start: int, end: int, sums: Partial) -> None:
        """Chunk [start, end) is counted: ``sums`` is all of it, or an open chunk's last slice."""
        if start in self.open:
            whole = self.open.pop(start).sums
            whole.add(sums)
            sums = whole
        self.ahead[start] = (end, sums)
        self._fold()

    def _fold(self) -> None:
        while self.prefix_end in self.ahead:
            end, sums = self.ahead.pop(self.prefix_end)
            self.prefix.add(sums)
            self.prefix_end = end

    @property
    def complete(self) -> bool:
        return self.prefix_end >= self.total and not self.ahead and not self.open
