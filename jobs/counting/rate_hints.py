"""The rates a run's tasks measured on each device model, kept in the run directory (RUN/rates.json), so
that a task in a process of its own (a SLURM array element, one `permenum task`) starts at its
predecessors' rate instead of probing the device with small first chunks again.

A rate is estimated work (the pool's cost estimates, one unit across a pool's partitions) per
kernel-second. It only sizes a task's first chunks, never a count, so a damaged or missing file costs
nothing but that start: it is read leniently (anything unexpected is ignored), written only when a rate
moved by more than REWRITE_ABOVE, and last-writer-wins without a lock: two tasks ending together may
lose one's update, which the next task of that device then writes again.
"""

from __future__ import annotations

import json
import math

from permenum.atomic import write_json_atomic
from permenum.layout import RunLayout

#: More keys than a run can have (device models x kernels x node counting): a file past it is not ours.
_MAX_KEYS = 256
#: A rate is written again only when it moved by more than this fraction (a run of 20,000 partitions does
#: not rewrite the file after each).
REWRITE_ABOVE = 0.1


def rate_key(model: str, kernel: str | None, count_nodes: bool) -> str:
    """What a rate depends on besides the run: the device model, the kernel asked for, node counting."""
    return f"{model}|{kernel or 'default'}|{'nodes' if count_nodes else 'counts'}"


def read_rate_hints(layout: RunLayout) -> dict[str, float]:
    """The rates recorded so far by key; {} where there is no file or it is not one we wrote."""
    try:
        data = json.loads(layout.rate_hints.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or len(data) > _MAX_KEYS:
        return {}
    return {k: rate for k, v in data.items() if isinstance(k, str) and (rate := _rate(v)) is not None}


def _rate(value: object) -> float | None:
    """A positive finite number, else None (a bool, a string, an integer past a float's range)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        rate = float(value)
    except OverflowError:
        return None
    return rate if math.isfinite(rate) and rate > 0 else None


def record_rate_hints(layout: RunLayout, measured: dict[str, float]) -> None:
    """Add this task's measured rates to the file (an OSError is the caller's to report)."""
    if not measured:
        return
    hints = read_rate_hints(layout)
    if all(k in hints and abs(v - hints[k]) <= REWRITE_ABOVE * hints[k] for k, v in measured.items()):
        return
    write_json_atomic(layout.rate_hints, {**hints, **measured}, durable=False)  # a hint: not worth its fsyncs
