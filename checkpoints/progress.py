"""How far unfinished partitions got (from their checkpoints) and a rough ETA for the whole run."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from permenum.checkpoints.store import CheckpointError, load_checkpoint
from permenum.layout import RunLayout
from permenum.records import Manifest, partition_scope
from permenum.result_index import ResultScan


@dataclass(frozen=True)
class RunProgress:
    #: partition -> (states done, states in the partition), for unfinished partitions with a checkpoint
    partial: dict[int, tuple[int, int]]
    states_done: int
    states_total: int
    #: seconds to finish at the rate seen so far (states per wall-clock second since the first start)
    eta_seconds: float | None


def _parse(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp)


def run_progress(layout: RunLayout, manifest: Manifest, scan: ResultScan) -> RunProgress:
    """The run's progress, ``scan`` being its sound results (result_index.scan_results: its caller's scan)."""
    now = dt.datetime.now(dt.timezone.utc)
    partial: dict[int, tuple[int, int]] = {}
    done_states = 0
    first = scan.first_start()
    starts: list[dt.datetime] = [first] if first is not None else []
    done = scan.done
    checkpointed = layout.with_checkpoint_file()
    entries = [manifest.partition(i) for i in partition_scope(layout, manifest)]  # a verification: its sample
    for entry in entries:
        i, rows = entry.index, entry.rows
        if i in done:
            done_states += rows
            continue
        if i not in checkpointed:
            continue
        try:
            ckpt = load_checkpoint(layout.checkpoint_file(i), manifest.run_id, i, entry.sha256)
        except CheckpointError:
            continue  # the task will report and discard it
        partial[i] = (ckpt.states_done, rows)
        done_states += ckpt.states_done
        starts.append(_parse(ckpt.written) - dt.timedelta(seconds=ckpt.elapsed))
    total = sum(e.rows for e in entries)
    eta = None
    if starts and done_states:
        elapsed = (now - min(starts)).total_seconds()
        if elapsed > 0:
            eta = (total - done_states) / (done_states / elapsed)
    return RunProgress(partial, done_states, total, eta)
