"""Shuffle the pool, split it into partitions, write zstd Parquet files and then the manifest.

The same settings give byte-identical partitions: the shuffle is a seeded Fisher-Yates
(numpy's ``Generator.permutation`` on PCG64) and the Parquet writer options are fixed.
"""

from __future__ import annotations

import datetime as dt
import shutil
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from permenum import __version__
from permenum.atomic import sha256_file, write_atomic, write_json_atomic
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.poolgen.generate import climb
from permenum.poolgen.manifest import FORMAT, Manifest, load_manifest
from permenum.problems import get_problem

DEFAULT_TARGET = 1 << 16
DEFAULT_FACTOR = 4.0


@dataclass(frozen=True)
class PoolSettings:
    problem: str
    n: int
    partitions: int = 1
    target_states: int = DEFAULT_TARGET
    hard_factor: float = DEFAULT_FACTOR
    seed: int = 0
    symmetry: str | None = None

    def validate(self) -> None:
        problem = get_problem(self.problem)
        problem.check_n(self.n)
        problem.check_symmetry(self.resolved_symmetry)
        if self.partitions < 1:
            raise UserError(f"--partitions must be at least 1 (got {self.partitions})")
        if self.target_states < 1:
            raise UserError(f"--target-states must be at least 1 (got {self.target_states})")
        if self.hard_factor < 1:
            raise UserError(f"the hard-limit factor must be at least 1 (got {self.hard_factor})")
        if self.seed < 0:
            raise UserError(f"--seed must be non-negative (got {self.seed})")

    @property
    def resolved_symmetry(self) -> str:
        return self.symmetry or get_problem(self.problem).default_symmetry


def _check_target_dir(layout: RunLayout, settings: PoolSettings) -> Manifest | None:
    """Return the existing manifest if it is this very pool; refuse any other non-empty directory."""
    root = layout.root
    if root.exists() and not root.is_dir():
        raise UserError(f"{root} exists and is not a directory")
    if layout.manifest.exists():
        existing = load_manifest(layout)
        wanted = {
            "problem": settings.problem,
            "params": {"n": settings.n},
            "symmetry": settings.resolved_symmetry,
            "generator": {"target_states": settings.target_states, "hard_factor": settings.hard_factor, "seed": settings.seed},
            "num_partitions": settings.partitions,
        }
        if existing.identity() != wanted:
            raise UserError(
                f"{root} already holds a different pool ({existing.problem} n={existing.n}, "
                f"{existing.num_partitions} partitions, run {existing.run_id}); choose another directory"
            )
        return existing
    if root.exists():
        leftovers = [p.name for p in root.iterdir() if p.name != "pool"]
        if leftovers:
            raise UserError(f"{root} is not empty and holds no pool ({', '.join(sorted(leftovers)[:3])} ...); choose another directory")
    return None


def write_pool(layout: RunLayout, settings: PoolSettings) -> tuple[Manifest, bool]:
    """Generate and write the pool; returns (manifest, created). An identical existing pool is kept."""
    settings.validate()
    existing = _check_target_dir(layout, settings)
    if existing is not None:
        return existing, False
    problem = get_problem(settings.problem)
    symmetry = settings.resolved_symmetry
    ladder = climb(problem, settings.n, settings.target_states, settings.hard_factor, symmetry)
    states = ladder.states
    rows = len(states)
    if settings.partitions > max(rows, 1):
        raise UserError(
            f"{settings.partitions} partitions but the pool has only {rows} states at depth {ladder.depth}; "
            f"use --partitions {max(rows, 1)} or fewer, or a larger --target-states"
        )
    order = np.random.default_rng(settings.seed).permutation(rows)
    states = states.take(order)
    if layout.pool_dir.exists():  # an interrupted earlier attempt: no manifest was written, so no pool
        shutil.rmtree(layout.pool_dir)
    layout.pool_dir.mkdir(parents=True)
    parts: list[dict[str, Any]] = []
    for index, idx in enumerate(np.array_split(np.arange(rows), settings.partitions)):
        path = layout.partition_file(index)
        table = states.take(idx).to_table()
        write_atomic(path, lambda tmp, t=table: pq.write_table(t, tmp, compression="zstd", compression_level=3))
        parts.append(
            {
                "index": index,
                "file": str(path.relative_to(layout.root)),
                "rows": int(len(idx)),
                "weight": int(states.weight[idx].astype(np.int64).sum()),
                "sha256": sha256_file(path),
                "estimated_cost": float(len(idx)),
            }
        )
    manifest = {
        "format": FORMAT,
        "run_id": uuid.uuid4().hex,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "permenum_version": __version__,
        "problem": settings.problem,
        "params": {"n": settings.n},
        "symmetry": symmetry,
        "generator": {
            "method": "ladder",
            "target_states": settings.target_states,
            "hard_factor": settings.hard_factor,
            "seed": settings.seed,
            "locked_depth": ladder.depth,
            "rungs": ladder.rungs,
            "stop_reason": ladder.stop_reason,
            "shuffle": "fisher-yates (numpy PCG64 permutation)",
        },
        "partitions": parts,
        "totals": {"states": rows, "weight": int(states.weight.astype(np.int64).sum())},
    }
    write_json_atomic(layout.manifest, manifest)
    return Manifest(manifest), True


def read_partition(layout: RunLayout, manifest: Manifest, index: int) -> Path:
    """The partition's file after checking it exists and its sha256 matches the manifest."""
    entry = manifest.partition(index)
    path = layout.root / entry["file"]
    if not path.exists():
        raise UserError(f"partition {index}: {path} is missing")
    digest = sha256_file(path)
    if digest != entry["sha256"]:
        raise UserError(f"partition {index}: {path} is corrupted (sha256 {digest[:12]}..., manifest says {entry['sha256'][:12]}...)")
    return path
