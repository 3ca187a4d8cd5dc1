"""Checkpoint files: ``checkpoints/part-NNNNN.ckpt``.

Layout: the line ``permenum-checkpoint/2``, the sha256 of the payload, then the payload: zstd-
compressed JSON (it holds the Costas arrays found so far, which compress well). Written
atomically (temp + fsync + rename). On load the magic, the checksum, the JSON, and the identity
(run, partition, pool sha256) are all checked; a file failing any of them is a CheckpointError,
which the task reports, moves aside and ignores.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from permenum.atomic import write_bytes_atomic

MAGIC = b"permenum-checkpoint/2\n"  # 2: counts are JSON integers (1 held fractions as strings)


class CheckpointError(Exception):
    """A checkpoint that cannot be trusted: damaged, foreign, or from another pool."""


@dataclass
class Checkpoint:
    run_id: str
    partition: int
    pool_sha256: str
    states_done: int
    #: exact sums over states [0, states_done) in jobs.counting.partial.Partial's JSON form: weighted, raw,
    #: classes, nodes (JSON integers), kernel_seconds, chunks, solutions (Costas arrays)
    sums: dict[str, Any]
    elapsed: float
    attempt: int
    #: chunks finished beyond ``states_done`` while other devices were still busy below it:
    #: the same JSON form plus "start" and "end"
    ahead: list[dict[str, Any]] = field(default_factory=list)
    #: refined chunks counted in part (jobs.counting.partial.OpenChunk's JSON form); a reader without this
    #: field rejects the file and starts over, never counting a slice twice
    open: list[dict[str, Any]] = field(default_factory=list)
    #: the attempts whose counts it holds, each with its host and devices (records.AttemptDevices' JSON): the
    #: result of a resumed partition names every device that counted it, not only the last attempt's
    counted_by: list[dict[str, Any]] = field(default_factory=list)
    written: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))


def save_checkpoint(path: Path, ckpt: Checkpoint) -> None:
    ckpt.written = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    payload = zstandard.ZstdCompressor(level=3).compress(json.dumps(asdict(ckpt), sort_keys=True).encode())
    write_bytes_atomic(path, MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)


def load_checkpoint(path: Path, run_id: str, partition: int, pool_sha256: str) -> Checkpoint:
    """The verified checkpoint at ``path``; raises CheckpointError saying what is wrong with it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CheckpointError(f"unreadable ({exc})") from None
    if not data.startswith(MAGIC):
        raise CheckpointError(f"not a {MAGIC.decode().strip()} file (bad header)")
    digest, _, payload = data[len(MAGIC):].partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        raise CheckpointError("checksum mismatch (the file is damaged)")
    try:
        fields: dict[str, Any] = json.loads(zstandard.ZstdDecompressor().decompress(payload))
        ckpt = Checkpoint(**fields)
    except (zstandard.ZstdError, ValueError, TypeError) as exc:
        raise CheckpointError(f"undecodable payload ({exc})") from None
    if ckpt.run_id != run_id or ckpt.pool_sha256 != pool_sha256 or ckpt.partition != partition:
        raise CheckpointError(f"belongs to run {ckpt.run_id} partition {ckpt.partition}, not to this partition of run {run_id}")
    return ckpt
