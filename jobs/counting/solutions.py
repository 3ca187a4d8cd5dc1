"""Solutions a task found (Costas arrays): ``solutions/part-NNNNN.parquet``, one row per array.

Written atomically before the result record, which seals it (records.SolutionsSeal: the file's sha256
and its number of arrays), so a result always has its solutions beside it and a damaged, cut, padded
or swapped file is refused in one line before a byte of it is parsed. Why: flipped bytes of unsealed
files gave tracebacks in `collect`, and an array dropped or duplicated went unnoticed. An accepted
result's file is never replaced: a later attempt's arrays (`task --force`) go beside its duplicate
record. Results from before seals are read as before, their arrays counted against the result's raw
count, every parse failure one line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from permenum.atomic import quarantine, write_atomic
from permenum.errors import UserError, one_line
from permenum.layout import RunLayout
from permenum.problems.costas_symmetry import found_by, is_costas, representative, share_in, symmetries
from permenum.records import ResultRecord, SolutionsSeal, load_manifest, sound_result
from permenum.result_index import scan_results
from permenum.sealed import arrow_reader, read_sealed

Array = tuple[int, ...]


def write_arrays(path: Path, arrays: np.ndarray) -> SolutionsSeal:
    """Arrays (k, n) as zstd Parquet, column ``rows`` = fixed-size list<uint8>[n], written atomically;
    returns the seal of the file as written."""
    n = arrays.shape[1] if arrays.ndim == 2 else 0
    flat = pa.array(np.ascontiguousarray(arrays, np.uint8).reshape(-1))
    rows = pa.FixedSizeListArray.from_arrays(flat, n) if n else pa.array([], pa.list_(pa.uint8()))
    table = pa.table({"rows": rows})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    data = sink.getvalue().to_pybytes()
    write_atomic(path, lambda tmp: tmp.write_bytes(data))
    return SolutionsSeal(hashlib.sha256(data).hexdigest(), len(table))


def write_solutions(layout: RunLayout, partition: int, attempt: int, arrays: np.ndarray) -> SolutionsSeal:
    """The partition's arrays, where its result will be accepted; beside the duplicate record where the
    partition has a sound result already (records.write_result decides the same way), so that the file
    an accepted result seals is never replaced."""
    try:
        accepted = sound_result(layout, load_manifest(layout), partition)
    except UserError:
        accepted = None  # damaged: write_result moves it aside and accepts this attempt
    if accepted is None:
        set_aside_solutions(layout, partition)
    path = layout.solutions_file(partition) if accepted is None else layout.duplicate_solutions_file(partition, attempt)
    return write_arrays(path, arrays)


def set_aside_solutions(layout: RunLayout, partition: int) -> None:
    """Before a partition's solutions file is written where no sound result seals the one there (damaged, or
    left by a task that died before its result): that one is moved aside, never overwritten (evidence)."""
    path = layout.solutions_file(partition)
    if path.exists():
        quarantine(path)


def read_solutions(path: Path, n: int, seal: SolutionsSeal | None = None) -> list[Array]:
    """The arrays of a solutions file of order ``n``, refused in one line (UserError) when the file does not
    match ``seal`` or does not parse as one; no check of the arrays themselves (stored_arrays does that)."""
    return parse_solutions(path, read_sealed(path, seal.sha256 if seal is not None else None, "", "result"), n, seal)


def parse_solutions(path: Path, data: bytes, n: int, seal: SolutionsSeal | None) -> list[Array]:
    """read_solutions of bytes already read from ``path`` and held to its seal (what is checked is what is
    copied: jobs.ledger.merge)."""
    try:
        column = pq.read_table(arrow_reader(data)).column("rows").combine_chunks()
    except (pa.ArrowException, KeyError, OSError, ValueError) as exc:
        raise UserError(f"{path} does not parse as a solutions file ({type(exc).__name__}: {one_line(exc)})") from None
    kind = column.type
    if len(column) and not (pa.types.is_fixed_size_list(kind) and kind.list_size == n and kind.value_type == pa.uint8()):
        raise UserError(f"{path} holds {kind}, not arrays of order {n} (fixed_size_list<uint8>[{n}])")
    flat = column.flatten() if len(column) else pa.array([], pa.uint8())
    if column.null_count or flat.null_count or len(flat) != len(column) * n:
        raise UserError(f"{path} has empty entries: not a solutions file")
    if seal is not None and len(column) != seal.rows:
        raise UserError(f"{path} holds {len(column)} arrays, its result's seal says {seal.rows}")
    return [tuple(int(x) for x in row) for row in flat.to_numpy(zero_copy_only=False).reshape(len(column), n)]


def partition_arrays(layout: RunLayout, record: ResultRecord, symmetry: str) -> list[Array]:
    """A result's arrays, checked against it: its seal (sha256, rows) and its counts (check_arrays)."""
    path = layout.solutions_file(record.partition)
    return check_arrays(path, read_solutions(path, record.n, record.solutions_file), record, symmetry)


def check_arrays(path: Path, arrays: list[Array], record: ResultRecord, symmetry: str) -> list[Array]:
    """The arrays, once they account for the result's counts; else one line. One array per solution counted
    raw, none twice, each one the search under ``symmetry`` finds, and the classes whose representative
    is among them are the result's classes, their sizes its weighted count. Why: a result resealed with
    an array and its raw count both taken away keeps its seals and, where the array was not its class's
    representative, its weighted count. Arrays that are not Costas arrays are not judged here (their
    symmetries mean nothing): stored_arrays flags them."""
    if len(arrays) != record.raw:
        raise UserError(f"{path} holds {len(arrays)} arrays, the result of partition {record.partition} counted "
                        f"{record.raw}")
    if not all(is_costas(a) for a in arrays):
        return arrays
    if len(set(arrays)) != len(arrays):
        raise UserError(f"{path} holds an array twice: not what the result of partition {record.partition} counted")
    if (stray := next((a for a in arrays if not found_by(symmetry)(a)), None)) is not None:
        raise UserError(f"{path} holds {list(stray)}, which the {symmetry} search never finds: not what the result "
                        f"of partition {record.partition} counted")
    shares = [share_in(symmetry)(a) for a in arrays]
    weighted, classes = sum(w for w, _ in shares), sum(c for _, c in shares)
    if (weighted, classes) != (record.weighted, record.classes):
        raise UserError(f"{path}: its arrays are {weighted} solutions in {classes} classes, the result of partition "
                        f"{record.partition} counted {record.weighted} in {record.classes}: it does not add up")
    return arrays


@dataclass(frozen=True)
class StoredArrays:
    """What a finished run stored: its Costas arrays (checked by host code), and any that fail the check."""

    arrays: list[Array]  # one per symmetry class, at its representative; every member with expand
    not_costas: list[Array]  # as stored (a faulty kernel's: their symmetries mean nothing)
    #: members of a stored class that the search must have found and no partition stored (orbit_gaps)
    missing_members: list[Array]


def stored_arrays(layout: RunLayout, expand: bool) -> StoredArrays:
    """Every array stored by a finished run, each checked for the Costas property (host code, independent
    of the kernels) before its symmetries are taken.

    One entry per symmetry class, at its representative (the smallest of its 8 images, what the counts
    count); ``expand`` lists every member of every class instead. Refuses a run whose partitions are not
    all done (the list would be partial), and any solutions file that does not match its result."""
    from permenum.problems import get_problem
    from permenum.ranges import compact_ranges

    manifest = load_manifest(layout)
    if not get_problem(manifest.problem).reports_solutions:
        raise UserError(f"`arrays` lists Costas arrays; {layout.root} is a run of {manifest.problem}")
    scan = scan_results(layout, manifest)
    missing = [i for i in range(manifest.num_partitions) if i not in scan.done]
    if missing:
        why = f" ({scan.damaged[min(scan.damaged)]})" if scan.damaged else ""
        raise UserError(f"partitions {compact_ranges(missing)} have no sound result yet{why}: the list would be incomplete")
    stored: set[Array] = set()
    bad: list[Array] = []
    for i in range(manifest.num_partitions):
        for array in partition_arrays(layout, scan.done[i], manifest.symmetry):
            if is_costas(array):
                stored.add(array)
            else:
                bad.append(array)
    classes = sorted({representative(a) for a in stored})
    found = sorted({m for r in classes for m in symmetries(r)}) if expand else classes
    return StoredArrays(found, bad, orbit_gaps(classes, stored, manifest.symmetry))


def orbit_gaps(classes: list[Array], stored: set[Array], symmetry: str) -> list[Array]:
    """The members of these classes that a whole search finds (costas_symmetry.found_by: every member, or those
    the canonical or centre search lets through) and that no partition stored: a whole run has none.
    Why: it catches an array taken away, with its raw count, from a partition that did not hold its class's
    representative (check_arrays cannot: there the partition's counts still add up)."""
    searched = found_by(symmetry)
    return sorted(m for r in classes for m in set(symmetries(r)) if searched(m) and m not in stored)


def collected_arrays(layout: RunLayout, expand: bool) -> list[Array]:
    """What `permenum arrays` lists: stored_arrays, refused in one line if any stored array is not a Costas array."""
    stored = stored_arrays(layout, expand)
    if stored.not_costas:
        raise UserError(f"{len(stored.not_costas)} stored arrays are not Costas arrays, e.g. {list(stored.not_costas[0])} "
                        "(`permenum collect` checks the run)")
    return stored.arrays
