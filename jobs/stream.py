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

from permenum.errors import UserError
from permenum.problems import StateBatch


class StreamedPartition:
    """The verified bytes of one partition; its states become available in row order."""

    def __init__(self, data: bytes, mask_names: tuple[str, ...], label: str):
        self._file = pq.ParquetFile(pa.BufferReader(data))
        self._columns = [*mask_names, "prefix", "weight"]
        self._mask_names, self._label = mask_names, label
        self.total = self._file.metadata.num_rows
        names = self._file.schema_arrow.names
        self.est_cost = self._file.read(columns=["est_cost"]).column(0).to_numpy() if "est_cost" in names else None
        self._parts: list[StateBatch] = []
        self._starts: list[int] = [0]  # first row of every parsed row group, then the end
        self._error: BaseException | None = None
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
                self._ready.notify_all()

    def wait_all(self) -> None:
        """Block until every row group is parsed (or parsing failed)."""
        self._wait(self.total)

    def _wait(self, end: int) -> None:
        with self._ready:
            self._ready.wait_for(lambda: self._starts[-1] >= end or self._error is not None)
            if self._error is not None:
                raise UserError(f"{self._label} does not parse ({self._error})") from self._error

    def take(self, start: int, end: int) -> StateBatch:
        """States [start, end), once parsed; one row group's slice is a view, a span over several a copy."""
        self._wait(end)
        starts = np.asarray(self._starts)
        first = int(np.searchsorted(starts, start, side="right")) - 1
        pieces = []
        for g in range(first, len(self._parts)):
            lo, hi = starts[g], starts[g + 1]
            if lo >= end:
                break
            pieces.append(self._parts[g].take(slice(max(start, lo) - lo, min(end, hi) - lo)))
        return pieces[0] if len(pieces) == 1 else StateBatch.concat(pieces)
