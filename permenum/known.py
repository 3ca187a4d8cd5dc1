"""Published counts (OEIS A000170, A002562, A008404, A001441), the oracle every total is checked against."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, int]]:
    text = resources.files("permenum").joinpath("data/known_counts.json").read_text()
    return {k: v for k, v in json.loads(text).items() if isinstance(v, dict)}


def known(series: str, n: int) -> int | None:
    """The published value of ``series`` (e.g. ``nqueens_total``) at ``n``, or None where unknown."""
    value = _table()[series].get(str(n))
    return None if value is None else int(value)
