"""``manifest.json``: the pool's contract with every task and the collector -- the run's identity, its
generator, and each partition's file, sha256 and state count (PartitionEntry)."""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.records.seal import parse_fields, read_record, write_record

MANIFEST_FORMAT = "permenum-pool/3"  # 3: sealed (the sha256 of its own content); 2: N-Queens absolute masks
RUN_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex: it is embedded in job names and the batch script
#: A partition's file as the pool writes it; a verification names the run's own as ``../../pool/...``
_PARTITION_FILE = re.compile(r"(?:\.\./\.\./)?pool/part-(\d{5,})\.parquet")
SHUFFLE = "fisher-yates (numpy PCG64 permutation)"  # how every pool so far was shuffled


@dataclass(frozen=True)
class PartitionEntry:
    """One partition of the pool, resolved once: its file, rows, checksum and estimated cost."""

    index: int
    file: str  # relative to the run directory
    rows: int
    weight: int
    sha256: str
    estimated_cost: float | None = None  # pools before cost estimates have none

    def path(self, layout: RunLayout) -> Path:
        """The file in ``layout``'s pool, or in its run's where ``layout`` is a verification (``../../``), never
        by a link out of it."""
        self.check_place(layout)
        home = RunLayout(layout.root.parent.parent) if self.file.startswith("../") else layout
        return home.confined(layout.root / self.file, f"partition {self.index}'s file")

    def check_place(self, layout: RunLayout) -> None:
        """Refuse a name of the run's own files (``../../pool/...``) in a manifest that is not a verification's."""
        if self.file.startswith("../") and layout.root.parent != RunLayout(layout.root.parent.parent).verifications_dir:
            raise UserError(f"{layout.manifest}: partition {self.index}'s file {self.file} is outside the run (only a "
                            "verification names its run's files): refused")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.estimated_cost is None:
            del out["estimated_cost"]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "PartitionEntry":
        cost, index, file = d.get("estimated_cost"), int(d["index"]), str(d["file"])
        name = _PARTITION_FILE.fullmatch(file)
        if name is None or int(name[1]) != index:  # a name is data, never a path to follow (jobs.ledger.merge writes it)
            raise ValueError(f"partition {index}'s file {file!r} is not pool/{RunLayout.part_name(index)}.parquet")
        return cls(index, file, int(d["rows"]), int(d.get("weight", 0)), str(d["sha256"]),
                   None if cost is None else float(cost))


@dataclass(frozen=True)
class Generator:
    """How the pool was made: the ladder's settings and outcome, the shuffle, the balance, the cost estimates."""

    target_states: int
    hard_factor: float
    seed: int
    locked_depth: int
    rungs: list[int] = field(default_factory=list)
    stop_reason: str = ""
    balance: str = "rows"  # pools before cost balancing were dealt by rows
    method: str = "ladder"
    shuffle: str = SHUFFLE
    cost_estimate: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.cost_estimate is None:
            del out["cost_estimate"]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Generator":
        return cls(int(d["target_states"]), float(d["hard_factor"]), int(d["seed"]), int(d["locked_depth"]),
                   [int(r) for r in d.get("rungs", [])], str(d.get("stop_reason", "")), str(d.get("balance", "rows")),
                   str(d.get("method", "ladder")), str(d.get("shuffle", "")) or SHUFFLE, d.get("cost_estimate"))


@dataclass(frozen=True)
class Manifest:
    """What a pool is (``manifest.json``): written last and atomically; a run directory without it is not a pool."""

    run_id: str
    problem: str
    n: int
    symmetry: str
    generator: Generator
    partitions: tuple[PartitionEntry, ...]
    total_states: int
    total_weight: int
    created: str = ""
    host: str = ""
    permenum_version: str = ""

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)

    @property
    def locked_depth(self) -> int:
        return self.generator.locked_depth

    @property
    def pool_sha256(self) -> str:
        """The whole pool's content in one digest: sha256 over its partitions' sha256, in order."""
        return hashlib.sha256("\n".join(p.sha256 for p in self.partitions).encode()).hexdigest()

    def partition(self, index: int) -> PartitionEntry:
        if not 0 <= index < self.num_partitions:
            raise UserError(f"partition {index} does not exist: this pool has partitions 0..{self.num_partitions - 1}")
        return self.partitions[index]

    def identity(self) -> dict[str, Any]:
        """The settings that make two pools the same pool."""
        g = self.generator
        return {"problem": self.problem, "params": {"n": self.n}, "symmetry": self.symmetry,
                "generator": {"target_states": g.target_states, "hard_factor": g.hard_factor, "seed": g.seed,
                              "balance": g.balance},
                "num_partitions": self.num_partitions}

    def first_difference(self, other: "Manifest") -> str | None:
        """What first tells this pool from ``other`` ("here" is this one), or None for the same pool: the
        settings, then each partition's rows, weight and sha256 (its bytes). The run id is not compared:
        two builds of one pool are two runs until `pool --same-as` makes the second a copy of the first."""
        def content(m: Manifest) -> dict[str, Any]:
            return {"pool states": m.total_states, **{f"partition {p.index}": {"rows": p.rows, "weight": p.weight,
                                                                               "sha256": p.sha256} for p in m.partitions}}

        return identity_difference(self.identity(), other.identity()) or identity_difference(content(self),
                                                                                              content(other))

    def to_json(self) -> dict[str, Any]:
        return {"format": MANIFEST_FORMAT, "run_id": self.run_id, "created": self.created, "host": self.host,
                "permenum_version": self.permenum_version, "problem": self.problem, "params": {"n": self.n},
                "symmetry": self.symmetry, "generator": self.generator.to_json(),
                "partitions": [p.to_json() for p in self.partitions],
                "totals": {"states": self.total_states, "weight": self.total_weight}}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Manifest":
        parts = tuple(PartitionEntry.from_json(p) for p in d["partitions"])
        for i, part in enumerate(parts):
            if part.index != i:
                raise ValueError(f"partition entry {i} says it is partition {part.index}")
        if not RUN_ID.fullmatch(str(d["run_id"])):
            raise ValueError(f"run_id {d['run_id']!r} is not 32 hex digits")
        return cls(str(d["run_id"]), str(d["problem"]), int(d["params"]["n"]), str(d["symmetry"]),
                   Generator.from_json(d["generator"]), parts, int(d["totals"]["states"]),
                   int(d["totals"].get("weight", 0)), str(d.get("created", "")), str(d.get("host", "")),
                   str(d.get("permenum_version", "")))


def identity_difference(here: dict[str, Any], there: dict[str, Any], prefix: str = "") -> str | None:
    """The first setting in which two pools' identities (Manifest.identity) differ, as "generator seed: 1
    here, 0 there"; None when they agree."""
    for key, value in here.items():
        other = there.get(key)
        if isinstance(value, dict) and isinstance(other, dict):
            found = identity_difference(value, other, f"{prefix}{key} ")
            if found is not None:
                return found
        elif value != other:
            return f"{prefix}{key}: {value} here, {other} there"
    return None


def write_manifest(layout: RunLayout, manifest: Manifest) -> None:
    write_record(layout.manifest, manifest.to_json())


def not_a_run(layout: RunLayout) -> str:
    """The one wording, in every command, for a directory that holds no run."""
    return f"{layout.root} is not a run directory: it has no {layout.manifest.name} (`permenum pool` writes one)"


def load_manifest(layout: RunLayout) -> Manifest:
    if not layout.manifest.exists():
        raise UserError(not_a_run(layout))
    manifest = read_manifest(layout.manifest)
    for entry in manifest.partitions:
        entry.check_place(layout)
    return manifest


#: The manifests this process parsed, by path: the bytes each was verified from and what they hold.
_MANIFESTS: dict[Path, tuple[bytes, Manifest]] = {}
#: Paths kept (a process reads its run's, a verification's, another site's; tests read hundreds).
_MANIFESTS_KEPT = 8
_MANIFESTS_LOCK = threading.Lock()


def read_manifest(path: Path) -> Manifest:
    """A manifest file wherever it lies (another site's copy, say), verified like the run's own.

    Its bytes are read on every call and parsed and verified only when they differ from those of the last
    call for this path: at 20,000 partitions the manifest is 4.4 MB, verifying and parsing it takes 0.28 s
    here against 2 ms to read and compare it, and a task read it four times (`run`: 20,000 tasks). What
    is served is always what the file holds now (its content is compared, not its timestamps, which an edit
    in place within the file system's tick would leave alone); a Manifest is frozen, so callers share it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: unreadable manifest ({exc})") from None
    key = path.absolute()
    known = _MANIFESTS.get(key)
    if known is not None and known[0] == data:
        return known[1]
    manifest = parse_fields(path, "manifest", Manifest.from_json, read_record(path, "manifest", MANIFEST_FORMAT, data))
    with _MANIFESTS_LOCK:  # the local executor's tasks run on threads
        _MANIFESTS.pop(key, None)
        _MANIFESTS[key] = (data, manifest)
        while len(_MANIFESTS) > _MANIFESTS_KEPT:
            del _MANIFESTS[next(iter(_MANIFESTS))]
    return manifest
