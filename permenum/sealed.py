"""Reading a file the run trusts only through its seal: the sha256 its owner recorded for it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from permenum.errors import UserError


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
