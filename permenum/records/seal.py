"""The records' sealed JSON, in one place: each record file holds its content's canonical JSON with the
sha256 of it beside (``sha256``), written atomically, and is read back only when that seal matches and its
format is the one this permenum reads -- a damaged or edited file is refused in one line instead of counted.
(The data files a record names with their sha256 -- partitions, solutions -- are read through permenum.sealed.)"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from permenum.atomic import write_json_atomic
from permenum.errors import UserError


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def parse_count(value: Any) -> int:
    """A count as written: a JSON integer of any size (never a float, a string or a negative)."""
    if type(value) is not int or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def parse_fields(path: Path, what: str, build: Any, data: Any) -> Any:
    """``build(data)``; a missing field or one of the wrong type is a one-line UserError naming the file."""
    try:
        return build(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"{path}: malformed {what} ({type(exc).__name__}: {exc})") from None


def _read_json(path: Path, what: str, data: bytes | None = None) -> Any:
    try:
        return json.loads(path.read_bytes() if data is None else data)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: unreadable {what} ({exc})") from None


#: A record's canonical JSON, as json.dumps(sort_keys=True, separators=(",", ":")) writes it; one encoder for
#: all (json.dumps makes one a call: 10% of reading a result).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def _digest(content: dict[str, Any]) -> str:
    """sha256 of a record's canonical JSON (sorted keys, no spaces): what its seal certifies."""
    return hashlib.sha256(_CANONICAL.encode(content).encode()).hexdigest()


def write_record(path: Path, content: dict[str, Any], *, replace: bool = True) -> None:
    """Write a record with the sha256 of its own content beside it (key ``sha256``), atomically."""
    write_json_atomic(path, {**content, "sha256": _digest(content)}, replace=replace)


def read_record(path: Path, what: str, fmt: str, raw: bytes | None = None) -> dict[str, Any]:
    """A record's content, once its seal matches and its format is ``fmt``; else one line saying what is wrong.

    Why: a flipped ``n``, ``symmetry`` or count in a file the run trusts would otherwise give a wrong
    total without a word (checkpoints carry the same kind of checksum)."""
    data = _read_json(path, what, raw)
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a permenum {what}")
    seal = data.pop("sha256", None)
    if seal is None:
        raise UserError(f"{path}: {what} of format {data.get('format')!r} has no checksum; this permenum reads "
                        f"{fmt!r} (written by an older permenum, or damaged)")
    if seal != _digest(data):
        raise UserError(f"{path}: {what} is damaged (its content does not match its sha256)")
    if data.get("format") != fmt:
        raise UserError(f"{path}: {what} format {data.get('format')!r}, this permenum reads {fmt!r}")
    return data
