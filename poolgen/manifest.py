"""manifest.json: what a pool is. Written last and atomically; a run directory without it is not a pool."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from permenum.errors import UserError
from permenum.layout import RunLayout

FORMAT = "permenum-pool/2"  # 2: N-Queens absolute masks (cols, d1, d2, rows), dihedral mode


@dataclass(frozen=True)
class Manifest:
    """Read-only view of a validated manifest."""

    data: dict[str, Any]

    @property
    def run_id(self) -> str:
        return str(self.data["run_id"])

    @property
    def problem(self) -> str:
        return str(self.data["problem"])

    @property
    def n(self) -> int:
        return int(self.data["params"]["n"])

    @property
    def symmetry(self) -> str:
        return str(self.data["symmetry"])

    @property
    def num_partitions(self) -> int:
        return len(self.data["partitions"])

    @property
    def total_states(self) -> int:
        return int(self.data["totals"]["states"])

    def partition(self, index: int) -> dict[str, Any]:
        if not 0 <= index < self.num_partitions:
            raise UserError(f"partition {index} does not exist: this pool has partitions 0..{self.num_partitions - 1}")
        return dict(self.data["partitions"][index])

    def identity(self) -> dict[str, Any]:
        """The settings that make two pools the same pool."""
        return {
            "problem": self.problem,
            "params": self.data["params"],
            "symmetry": self.symmetry,
            "generator": {**{k: self.data["generator"][k] for k in ("target_states", "hard_factor", "seed")},
                          "balance": self.data["generator"].get("balance", "rows")},  # pools before cost balancing: rows
            "num_partitions": self.num_partitions,
        }


_REQUIRED = ("format", "run_id", "problem", "params", "symmetry", "generator", "partitions", "totals")


def load_manifest(layout: RunLayout) -> Manifest:
    path = layout.manifest
    if not path.exists():
        raise UserError(f"{layout.root} is not a pool: {path.name} is missing (run `permenum pool` first)")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: unreadable manifest ({exc})") from None
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise UserError(f"{path}: manifest lacks {', '.join(missing)}")
    if data["format"] != FORMAT:
        raise UserError(f"{path}: manifest format {data['format']!r}, this permenum reads {FORMAT!r}")
    for i, part in enumerate(data["partitions"]):
        if part.get("index") != i or not {"file", "rows", "sha256"} <= part.keys():
            raise UserError(f"{path}: partition entry {i} is malformed")
    return Manifest(data)
