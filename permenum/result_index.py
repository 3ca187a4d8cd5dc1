"""Every result of a run, read and verified: the done partitions, the damaged ones, and each sound result's ledger
row, with a verified-results index so that a scan does not verify again what it verified before.

Why the index: at 20,000 partitions, verifying every result file (its JSON parsed, its seal re-encoded and
hashed, its record built) took 4.2 s a scan here, and `status`, `collect` and `run` each scan; reading the
files' bytes and hashing them takes 0.55 s. ``results/index.arrow`` keeps, for each result verified once, the
sha256 of the file's bytes and the ledger row of its record (permenum.ledger_rows). A result file whose bytes
hash to what the index names is the very file verified then (and checked against this manifest), so its row
stands; any other (new, replaced, damaged) is verified in full, and the index is rewritten with what changed.

The index is sealed (the sha256 of its body heads it) and made for one manifest (run id, pool sha256, number
of partitions): a damaged, foreign or stale one is ignored and rewritten, never trusted, and one the run
directory does not take (read-only, full) is simply not kept. It is as trustworthy as the results it indexes:
whoever can write the run directory can reseal a result as well. A solutions file a result seals (Costas) is
checked against its seal on every scan, as before. ``records`` stay the owners of each result's format; a
caller that needs a whole record (a verification's comparison, the arrays) reads it from its file on demand
(ResultScan.done).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
import pyarrow as pa

from permenum.atomic import write_bytes_atomic
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum import __version__
from permenum.ledger_rows import RESULT_COLUMNS, ResultError, result_row
from permenum.records import Manifest, ResultRecord, check_solutions_file, verified_result
from permenum.sealed import arrow_reader

_MAGIC = b"permenum-result-index/1\n"
_DIGEST = "file_sha256"  # of the result file's bytes
_SOLUTIONS = "solutions_sha256"  # the solutions file the result seals (null: none)
ROWS = pa.schema([pa.field(c.name, c.type) for c in RESULT_COLUMNS])
SCHEMA = pa.schema(list(ROWS) + [pa.field(_DIGEST, pa.binary(32)), pa.field(_SOLUTIONS, pa.string())])


class _Records(Mapping[int, ResultRecord]):
    """The sound results by partition; a record is read from its file when first asked for (most callers want
    only which partitions are done, or the rows)."""

    def __init__(self, layout: RunLayout, manifest: Manifest, partitions: list[int], read: dict[int, ResultRecord]):
        self._layout, self._manifest, self._keys, self._read = layout, manifest, partitions, dict(read)
        self._set = set(partitions)

    def __getitem__(self, partition: int) -> ResultRecord:
        if partition not in self._set:
            raise KeyError(partition)
        if partition not in self._read:
            self._read[partition] = verified_result(self._layout, self._manifest, partition)
        return self._read[partition]

    def __contains__(self, partition: object) -> bool:
        return partition in self._set

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


@dataclass(frozen=True)
class ResultScan:
    """Every result file of a run, read and verified: the done partitions (``done``, each record on demand), their
    ledger rows (``rows``: RESULT_COLUMNS, by partition), and the damaged ones with why.

    A damaged result (its seal, its JSON, or it belongs to another run or pool version) does not make
    its partition done: `status` reports it, `run` and `resubmit` count the partition again, and the
    task moves the damaged file aside (``.bad-<time>``) before writing its own."""

    done: Mapping[int, ResultRecord]
    damaged: dict[int, str]
    rows: pa.Table = field(default_factory=ROWS.empty_table)

    def first_start(self) -> dt.datetime | None:
        """When the earliest counted result's task started (finished less its seconds): the run's start."""
        starts = [f - dt.timedelta(seconds=s) for f, s in zip(self.rows.column("finished").to_pylist(),
                                                              self.rows.column("seconds_total").to_pylist())
                  if f is not None and s is not None]
        return min(starts, default=None)


def scan_results(layout: RunLayout, manifest: Manifest) -> ResultScan:
    """Read every result file of the manifest's partitions once; verify in full those the index does not vouch for."""
    known = _load(layout, manifest)
    digests = dict(zip(known.column("partition").to_pylist(), known.column(_DIGEST).to_pylist()))
    present = layout.with_result_file()
    folder = str(layout.results_dir)
    kept: list[int] = []  # rows of the index that stand
    fresh: dict[int, tuple[ResultRecord, bytes, dict[str, Any]]] = {}
    damaged: dict[int, str] = {}
    row_of = {p: k for k, p in enumerate(known.column("partition").to_pylist())}
    for entry in manifest.partitions:
        p = entry.index
        if p not in present:
            continue
        path = os.path.join(folder, layout.result_file_name(p))
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            continue  # moved aside since the listing (a task quarantined it): no result
        except OSError as exc:
            damaged[p] = f"{path} is unreadable ({exc.strerror})"
            continue
        digest = hashlib.sha256(raw).digest()
        if digests.get(p) == digest:
            kept.append(row_of[p])
            continue
        try:
            record = verified_result(layout, manifest, p, raw)
            fresh[p] = (record, digest, result_row(record))
        except (UserError, ResultError) as exc:  # a count past the ledger's 38 digits cannot be a ledger row
            damaged[p] = str(exc)
    rows = known.take(pa.array(kept, pa.int64())) if len(kept) != known.num_rows else known
    rows, broken = _solutions_sound(layout, rows)
    damaged.update(broken)
    if fresh:
        rows = pa.concat_tables([rows, _rows(fresh)])
    done = rows.column("partition").to_pylist()
    if done != sorted(done):  # sort_by imports pyarrow.compute (35-60 ms of a command's start): only if needed
        rows = rows.sort_by("partition")
        done = rows.column("partition").to_pylist()
    if fresh or rows.num_rows != known.num_rows:
        _save(layout, manifest, rows)  # sorted, so that the next scan need not sort
    return ResultScan(_Records(layout, manifest, done, {p: r for p, (r, _, _) in fresh.items()}), damaged,
                      rows.drop_columns([_DIGEST, _SOLUTIONS]))


def _rows(fresh: dict[int, tuple[ResultRecord, bytes, dict[str, Any]]]) -> pa.Table:
    rows = [{**row, _DIGEST: digest, _SOLUTIONS: record.solutions_file.sha256 if record.solutions_file else None}
            for record, digest, row in fresh.values()]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _solutions_sound(layout: RunLayout, rows: pa.Table) -> tuple[pa.Table, dict[int, str]]:
    """The indexed rows whose solutions file is still the one their result sealed; the others, with why."""
    sealed = rows.column(_SOLUTIONS)
    if sealed.null_count == len(sealed):
        return rows, {}
    broken: dict[int, str] = {}
    for p, sha in zip(rows.column("partition").to_pylist(), sealed.to_pylist()):
        if sha is not None:
            try:
                check_solutions_file(layout, p, sha)
            except UserError as exc:
                broken[p] = str(exc)
    if not broken:
        return rows, {}
    import pyarrow.compute as pc  # here only: its import is 35-60 ms of every command's start

    keep = pc.invert(pc.is_in(rows.column("partition"), pa.array(sorted(broken), pa.int32())))
    return rows.filter(keep), broken


def _identity(manifest: Manifest) -> dict[bytes, bytes]:
    """What an index is of: this manifest, checked by this permenum (another may check a result otherwise)."""
    return {b"run_id": manifest.run_id.encode(), b"pool_sha256": manifest.pool_sha256.encode(),
            b"partitions": str(manifest.num_partitions).encode(), b"permenum": __version__.encode()}


def _load(layout: RunLayout, manifest: Manifest) -> pa.Table:
    """The index's rows where it is sound and this manifest's; else none (every result is verified again)."""
    try:
        data = layout.results_index.read_bytes()
    except OSError:
        return SCHEMA.empty_table()
    head, body = data[:len(_MAGIC) + 64], data[len(_MAGIC) + 64:]
    if head[:len(_MAGIC)] != _MAGIC or head[len(_MAGIC):] != hashlib.sha256(body).hexdigest().encode():
        return SCHEMA.empty_table()  # damaged, or not an index of this format
    try:
        table = pa.ipc.open_file(arrow_reader(body)).read_all()
    except (pa.ArrowInvalid, OSError):
        return SCHEMA.empty_table()
    meta = table.schema.metadata or {}
    if not table.schema.remove_metadata().equals(SCHEMA) or any(meta.get(k) != v for k, v in _identity(manifest).items()):
        return SCHEMA.empty_table()  # another run's, another pool's, or another permenum's columns
    return table.replace_schema_metadata(None)


def _save(layout: RunLayout, manifest: Manifest, rows: pa.Table) -> None:
    """Keep the index for the next scan, where the run directory takes it (a read-only run is read in full)."""
    sink = pa.BufferOutputStream()
    table = rows.replace_schema_metadata(_identity(manifest))
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    body = sink.getvalue().to_pybytes()
    try:
        write_bytes_atomic(layout.results_index, _MAGIC + hashlib.sha256(body).hexdigest().encode() + body,
                           sync_dir=False)
    except OSError:
        pass  # a cache: the next scan verifies every result again
