"""One array task: load partition I, verify it, count every completion of its states, write the result.

The same function runs under SLURM (``permenum task``) and under the local executor; only who
launches it differs. The result file, not the scheduler, is the truth that the partition is done.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from permenum.jobs.environment import TaskEnvironment
from permenum.jobs.results import attempts_so_far, write_failure, write_result
from permenum.jobs.solutions import write_solutions
from permenum.layout import RunLayout
from permenum.poolgen.manifest import load_manifest
from permenum.poolgen.write import read_partition
from permenum.problems import StateBatch, get_problem
from permenum.problems.base import exact
from permenum.solver.devices import select_devices
from permenum.solver.opencl import device_context
from permenum.solver.registry import make_solver


def run_task(layout: RunLayout, partition: int, device: str | None = None, kernel: str | None = None,
             count_nodes: bool = False) -> dict[str, Any]:
    """Run one partition and write its result record; returns the record.

    A failure is recorded in ``logs/part-NNNNN.error.json`` (what, when, where) before it propagates,
    so `status` can tell a failed partition from one that never ran.
    """
    try:
        return _run_task(layout, partition, device, kernel, count_nodes)
    except Exception as exc:
        if layout.manifest.exists() and partition >= 0:
            write_failure(layout, partition, exc)
        raise


def _run_task(layout: RunLayout, partition: int, device: str | None, kernel: str | None,
              count_nodes: bool) -> dict[str, Any]:
    t_start = time.perf_counter()
    manifest = load_manifest(layout)
    problem = get_problem(manifest.problem)
    path = read_partition(layout, manifest, partition)
    batch = StateBatch.from_table(pq.read_table(path), problem.mask_names)
    t_loaded = time.perf_counter()
    refs = select_devices(device)
    dev = device_context(refs[0])
    solver = make_solver(problem.name, dev, manifest.n, int(manifest.data["generator"]["locked_depth"]), kernel,
                         manifest.symmetry, count_nodes)
    out = solver(batch)
    tally = problem.tally(batch, out.counts, out.solutions, manifest.symmetry)
    if out.solutions is not None:
        write_solutions(layout, partition, out.solutions)
    env = TaskEnvironment.read()
    record: dict[str, Any] = {
        "run_id": manifest.run_id,
        "problem": manifest.problem,
        "n": manifest.n,
        "partition": partition,
        "attempt": attempts_so_far(layout, partition) + 1,
        "pool_sha256": manifest.partition(partition)["sha256"],
        "states": len(batch),
        "solutions": {"weighted": exact(tally.weighted), "raw": tally.raw},
        "classes": exact(tally.classes),
        "nodes": None if out.nodes is None else int(np.sum(out.nodes, dtype=np.uint64)),
        "kernel": kernel or "default",
        "devices": [dev.ref.label],
        "seconds": {
            "load": t_loaded - t_start,
            "kernel": out.kernel_seconds,
            "total": time.perf_counter() - t_start,
        },
        "environment": env.as_dict(),
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    record["status"] = write_result(layout, record)
    return record
