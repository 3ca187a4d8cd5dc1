"""Sets of partition indices as text: ``3,7,12-14`` (the form sbatch --array takes and status prints)."""

from __future__ import annotations

import re


def compact_ranges(indices: list[int]) -> str:
    """``[3, 7, 12, 13, 14]`` -> ``"3,7,12-14"``."""
    parts: list[str] = []
    ordered = sorted(set(indices))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def expand_ranges(spec: str) -> list[int]:
    """``"3,7,12-14%2"`` -> ``[3, 7, 12, 13, 14]``; also SLURM's ``"[0-15:4]"`` steps. Inverse of compact_ranges."""
    spec = spec.strip().strip("[]").split("%")[0]
    out: set[int] = set()
    for part in filter(None, spec.split(",")):
        m = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part.strip())
        if not m:
            raise ValueError(f"not an array index list: {spec!r}")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        out.update(range(lo, hi + 1, int(m.group(3) or 1)))
    return sorted(out)
