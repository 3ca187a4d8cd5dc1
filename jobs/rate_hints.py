"""The rates a run's tasks measured on each device model, kept in the run directory (RUN/rates.json), so
that a task in a process of its own (a SLURM array element, one `permenum task`) starts at its
predecessors' rate instead of probing the device with small first chunks again.

A rate is estimated work (the pool's cost estimates, one unit across a pool's partitions) per
kernel-second. It only sizes a task's first chunks, never a count, so a damaged or missing file costs
nothing but that start: it is read leniently (anything unexpected is ignored) and written last-writer-wins
(two tasks ending together may keep either's figure; both are measurements of the same device).
"""

from __future__ import annotations

import json
import math

from permenum.atomic import write_json_atomic
from permenum.layout import RunLayout

#: More keys than a run can have (device models x kernels x node counting): a file past it is not ours.
_MAX_KEYS = 256


def rate_key(model: str, kernel: str | None, count_nodes: bool) -> str:
    """What a rate depends on besides the run: the device model, the kernel asked for, node counting."""
    return f"{model}|{kernel or 'default'}|{'nodes' if count_nodes else 'counts'}"


def read_rate_hints(layout: RunLayout) -> dict[str, float]:
    """The rates recorded so far by key; {} where there is no file or it is not one we wrote."""
    try:
        data = json.loads(layout.rate_hints.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or len(data) > _MAX_KEYS:
        return {}
    return {k: float(v) for k, v in data.items()
            if isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v) and v > 0}


def record_rate_hints(layout: RunLayout, measured: dict[str, float]) -> None:
    """Add this task's measured rates to the file (an OSError is the caller's to report)."""
    if not measured:
        return
    hints = read_rate_hints(layout)
    if all(hints.get(k) == v for k, v in measured.items()):
        return
    write_json_atomic(layout.rate_hints, {**hints, **measured})
