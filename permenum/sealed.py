"""Reading a file the run trusts only through its seal: the sha256 its owner recorded for it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from permenum.errors import UserError

if TYPE_CHECKING:
    import pyarrow as pa


def read_sealed(path: Path, sha256: str | None, what: str, sealer: str) -> bytes:
    """The bytes of ``path`` (``what``, e.g. "partition 3: "), refused in one line when missing, unreadable,
    or when their sha256 is not the one ``sealer`` recorded (None: nothing recorded, nothing checked)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{what}{path} is missing") from None
    except OSError as exc:
        raise UserError(f"{what}{path} is unreadable ({exc.strerror})") from None
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest != sha256:
        raise UserError(f"{what}{path} is corrupted or not this run's (sha256 {digest[:12]}..., {sealer} says "
                        f"{sha256[:12]}...: it does not match the {sealer}'s seal)")
    return data


def arrow_reader(data: bytes) -> "pa.BufferReader":
    """Bytes read (and checked) here, as Arrow input in Arrow's own memory. Why the copy: a reader over Python
    bytes lends Arrow's worker threads a buffer whose release takes the GIL, and one released while the
    interpreter exits aborts the process ("terminate called without an active exception", exit -6; pyarrow's
    open issue apache/arrow#34314): 5 of 160 exits of a one-file read under load here, 0 of 100 with the copy."""
    import pyarrow as pa  # not at import: the commands that read no Parquet start without it

    buffer = pa.allocate_buffer(len(data))
    pa.FixedSizeBufferWriter(buffer).write(data)
    return pa.BufferReader(buffer)
