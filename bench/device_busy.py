"""Per-device busy seconds and end times of a finished run directory (bench/gpu_multi.sh prints them).

    python bench/device_busy.py RUN --since EPOCH_SECONDS --label NAME

Busy seconds are the devices' own (inside the solver: host preparation, transfers, kernels) summed over
the run's results; a device's end is when the last result it worked on was written, in seconds since
``--since`` (the command's start). For a one-partition task the task log's "ended ... into the attempt"
gives each device's last chunk instead. One line a device, then the spread: busy max/min and end max-min.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from collections import defaultdict
from pathlib import Path

from permenum.layout import RunLayout
from permenum.records import load_manifest
from permenum.result_index import scan_results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--since", type=float, required=True)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    layout = RunLayout(Path(args.run))
    manifest = load_manifest(layout)
    busy: dict[str, float] = defaultdict(float)
    end: dict[str, float] = defaultdict(float)
    parts: dict[str, int] = defaultdict(int)
    kernel = 0.0
    for i, record in scan_results(layout, manifest).done.items():
        written = layout.result_file(i).stat().st_mtime - args.since
        kernel += record.seconds.kernel
        for d in record.devices:
            if not d.counted:
                continue
            busy[d.label] += d.busy_seconds
            end[d.label] = max(end[d.label], written)
            parts[d.label] += 1
    if manifest.num_partitions == 1:  # one task: each device's last chunk, from the task log
        log = layout.task_log(0).read_text() if layout.task_log(0).exists() else ""
        ends: dict[str, float] = {}
        for line in log.splitlines():
            m = re.search(r"pid \d+: (.+?): states .* ended ([0-9.]+) s into the attempt", line)
            if m and m.group(1) in busy:
                ends[m.group(1)] = max(ends.get(m.group(1), 0.0), float(m.group(2)))
        end.update(ends)
    for label in sorted(busy):
        print(f"  {args.label} {label}: {parts[label]} partitions, busy {busy[label]:.2f} s, ended {end[label]:.2f} s")
    if manifest.num_partitions <= 8:
        timeline(layout, manifest.num_partitions, args.since, args.label)
    if busy:
        print(f"  {args.label} busy max/min {max(busy.values()) / max(min(busy.values()), 1e-9):.3f}, ends spread "
              f"{max(end.values()) - min(end.values()):.2f} s, kernel {kernel:.2f} s over {len(busy)} devices")


def timeline(layout: RunLayout, partitions: int, since: float, label: str) -> None:
    """Each partition's start, first chunk's end and done, in seconds since ``since``, from its task log's
    stamps: what a command spends before its devices count (process starts, imports, contexts, loads)."""
    for i in range(partitions):
        path = layout.task_log(i)
        if not path.exists():
            continue
        stamps = [(dt.datetime.fromisoformat(line.split(" ", 1)[0]).timestamp() - since, line)
                  for line in path.read_text().splitlines() if line[:4].isdigit()]
        first = next((t for t, line in stamps if "attempt" in line and "states, starting at" in line), None)
        chunk = next((t for t, line in stamps if "into the attempt" in line), None)
        done = next((t for t, line in stamps if "done:" in line), None)
        fmt = lambda t: "-" if t is None else f"{t:.2f}"  # noqa: E731
        print(f"  {label} partition {i}: loaded {fmt(first)} s, first chunk ended {fmt(chunk)} s, done {fmt(done)} s")


if __name__ == "__main__":
    main()
