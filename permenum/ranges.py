"""Sets of partition indices as text: ``3,7,12-14`` (the form sbatch --array takes and status prints)."""

from __future__ import annotations

import re


def compact_ranges(indices: list[int]) -> str:
    """``[3, 7, 12, 13, 14]`` -> ``"3,7,12-14"``."""
    return ",".join(_text(run) for run in _runs(indices))


#: Ranges a one-line message shows (brief_ranges): a line stays readable, the full list is status's.
SHOWN_RANGES = 12


def brief_ranges(indices: list[int], most: int = SHOWN_RANGES) -> str:
    """compact_ranges cut after ``most`` ranges, then how many are left out: ``"0,3,6,...,33 and 6655 more (6667
    in all)"``. For one-line messages, where a scattered set (every third of 20,000 partitions) would run on."""
    runs = _runs(indices)
    if len(runs) <= most:
        return ",".join(map(_text, runs))
    left = sum(hi - lo + 1 for lo, hi in runs[most:])
    return (f"{','.join(map(_text, runs[:most]))} and {left} more "
            f"({left + sum(hi - lo + 1 for lo, hi in runs[:most])} in all)")


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """The sorted, distinct indices as (first, last) runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _text(run: tuple[int, int]) -> str:
    lo, hi = run
    return str(lo) if lo == hi else f"{lo}-{hi}"


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
