"""A partition's states, parsed row group by row group while the devices already count the first ones.

Why: parsing a large partition (N-Queens 21: 22 M states, zstd Parquet) and turning it into arrays
took ~1.7 s on a GPU node before the first launch, the same on one GPU as on two -- the part of
the task that a second GPU cannot halve. The file is still read and checked against the manifest's
sha256 in full first (nothing is counted from bytes that are not the pool's); only the parsing
streams, and a chunk waits until the row groups under it are parsed.
"""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from permenum.errors import UserError, one_line
from permenum.problems import StateBatch
from permenum.sealed import arrow_reader


def does_not_parse(label: str, exc: BaseException) -> UserError:
    """The one-line refusal of a partition file that matched its sha256 but is no pool Parquet (a pool
    written wrongly, or damaged and re-sealed)."""
    return UserError(f"{label} does not parse ({type(exc).__name__}: {one_line(exc)})")


class StreamedPartition:
    """The verified bytes of one partition; its states become available in row order."""

    def __init__(self, data: bytes, mask_names: tuple[str, ...], label: str):
        self.data = data  # for a device's process (jobs.counting.device_process), which parses its own copy
        self._columns = [*mask_names, "prefix", "weight"]
        self._mask_names, self._label = mask_names, label
        try:
            self._file = pq.ParquetFile(arrow_reader(data))
            self.total = self._file.metadata.num_rows
            names = self._file.schema_arrow.names
            self.est_cost = self._file.read(columns=["est_cost"]).column(0).to_numpy() if "est_cost" in names else None
        except (pa.ArrowException, OSError, ValueError, KeyError) as exc:  # passed its checksum, yet cut or garbled
            raise does_not_parse(label, exc) from exc
        self._parts: list[StateBatch] = []
        self._starts: list[int] = [0]  # first row of every parsed row group, then the end
        self._error: BaseException | None = None
        self._done = False  # the parse thread has ended
        self._ready = threading.Condition()
        threading.Thread(target=self._parse, name="partition-parse", daemon=True).start()

    def _parse(self) -> None:
        try:
            for group in range(self._file.num_row_groups):
                part = StateBatch.from_table(self._file.read_row_group(group, columns=self._columns), self._mask_names)
                with self._ready:
                    self._parts.append(part)
                    self._starts.append(self._starts[-1] + len(part))
                    self._ready.notify_all()
        except BaseException as exc:  # a file that passed its checksum but does not parse
            with self._ready:
                self._error = exc
        finally:
            with self._ready:
                self._done = True
                self._ready.notify_all()

    def _parsed(self, end: int) -> tuple[list[StateBatch], list[int]]:
        """The row groups parsed once rows [0, end) are (copies of the lists, taken under the lock)."""
        with self._ready:
            self._ready.wait_for(lambda: self._starts[-1] >= end or self._done)
            if self._error is not None:
                raise does_not_parse(self._label, self._error) from self._error
            if self._starts[-1] < end:
                raise UserError(f"{self._label} holds {self._starts[-1]} states, its metadata says {self.total}")
            return list(self._parts), list(self._starts)

    def take(self, start: int, end: int) -> StateBatch:
        """States [start, end), once parsed; one row group's slice is a view, a span over several a copy."""
        parts, starts = self._parsed(end)
        first = int(np.searchsorted(starts, start, side="right")) - 1
        pieces = []
        for g in range(first, len(parts)):
            lo = starts[g]
            if lo >= end:
                break
            pieces.append(parts[g].take(slice(max(start, lo) - lo, min(end, starts[g + 1]) - lo)))
        return pieces[0] if len(pieces) == 1 else StateBatch.concat(pieces)
