"""The run's records, typed, each with one reader and one writer: the manifest and its partition
entries, the result record, the failure record.

Why one module: these files are the contracts between the pool generator, the tasks, the scheduler's
status and the collector (pool -> task -> result -> ledger). Everything else handles them as objects
with named fields; only this module knows their JSON keys. Each file is sealed with the sha256 of
its own content (``_write_sealed`` / ``_read_sealed``), so a damaged or edited file is refused in one
line instead of counted. The run directory's paths are RunLayout's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from permenum.atomic import quarantine, write_json_atomic
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.sealed import read_sealed

MANIFEST_FORMAT = "permenum-pool/3"  # 3: sealed (the sha256 of its own content); 2: N-Queens absolute masks
RESULT_FORMAT = "permenum-result/3"  # 3: whole counts (Costas classes counted once); 2: sealed
FAILURE_FORMAT = "permenum-failure/1"
_RUN_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex: it is embedded in job names and the batch script
#: A partition's file as the pool writes it; a verification names the run's own as ``../../pool/...``
_PARTITION_FILE = re.compile(r"(?:\.\./\.\./)?pool/part-(\d{5,})\.parquet")
SHUFFLE = "fisher-yates (numpy PCG64 permutation)"  # how every pool so far was shuffled


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def parse_count(value: Any) -> int:
    """A count as written: a JSON integer of any size (never a float, a string or a negative)."""
    if type(value) is not int or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def _parse(path: Path, what: str, build: Any, data: Any) -> Any:
    """``build(data)``; a missing field or one of the wrong type is a one-line UserError naming the file."""
    try:
        return build(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"{path}: malformed {what} ({type(exc).__name__}: {exc})") from None


def _read_json(path: Path, what: str, data: bytes | None = None) -> Any:
    try:
        return json.loads(path.read_bytes() if data is None else data)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: unreadable {what} ({exc})") from None


#: A record's canonical JSON, as json.dumps(sort_keys=True, separators=(",", ":")) writes it; one encoder for
#: all (json.dumps makes one a call: 10% of reading a result).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def _digest(content: dict[str, Any]) -> str:
    """sha256 of a record's canonical JSON (sorted keys, no spaces): what its seal certifies."""
    return hashlib.sha256(_CANONICAL.encode(content).encode()).hexdigest()


def _write_sealed(path: Path, content: dict[str, Any], *, replace: bool = True) -> None:
    """Write a record with the sha256 of its own content beside it (key ``sha256``), atomically."""
    write_json_atomic(path, {**content, "sha256": _digest(content)}, replace=replace)


def _read_sealed(path: Path, what: str, fmt: str, raw: bytes | None = None) -> dict[str, Any]:
    """A record's content, once its seal matches and its format is ``fmt``; else one line saying what is wrong.

    Why: a flipped ``n``, ``symmetry`` or count in a file the run trusts would otherwise give a wrong
    total without a word (checkpoints carry the same kind of checksum)."""
    data = _read_json(path, what, raw)
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a permenum {what}")
    seal = data.pop("sha256", None)
    if seal is None:
        raise UserError(f"{path}: {what} of format {data.get('format')!r} has no checksum; this permenum reads "
                        f"{fmt!r} (written by an older permenum, or damaged)")
    if seal != _digest(data):
        raise UserError(f"{path}: {what} is damaged (its content does not match its sha256)")
    if data.get("format") != fmt:
        raise UserError(f"{path}: {what} format {data.get('format')!r}, this permenum reads {fmt!r}")
    return data


# --------------------------------------------------------------------------- manifest


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
        if name is None or int(name[1]) != index:  # a name is data, never a path to follow (jobs.merge writes it)
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
        if not _RUN_ID.fullmatch(str(d["run_id"])):
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
    _write_sealed(layout.manifest, manifest.to_json())


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
    manifest = _parse(path, "manifest", Manifest.from_json, _read_sealed(path, "manifest", MANIFEST_FORMAT, data))
    with _MANIFESTS_LOCK:  # the local executor's tasks run on threads
        _MANIFESTS.pop(key, None)
        _MANIFESTS[key] = (data, manifest)
        while len(_MANIFESTS) > _MANIFESTS_KEPT:
            del _MANIFESTS[next(iter(_MANIFESTS))]
    return manifest


# --------------------------------------------------------------------------- where a record was made


@dataclass(frozen=True)
class Origin:
    """The process that wrote a record: host, pid, permenum's version and, under SLURM, its job and array ids."""

    host: str
    pid: int
    slurm_job_id: int | None = None
    slurm_array_job_id: int | None = None
    slurm_array_task_id: int | None = None
    slurm_restart_count: int | None = None
    version: str = ""  # permenum's
    cluster: str | None = None  # SLURM's ClusterName under SLURM

    @property
    def site(self) -> str:
        """Where a record was made, as a campaign of several sites tells them apart: the SLURM cluster's
        name, else the host (the local executor)."""
        return self.cluster or self.host

    @property
    def slurm_task(self) -> str | None:
        """``<array job>_<task>`` when it ran as an array task."""
        if self.slurm_array_job_id is None or self.slurm_array_task_id is None:
            return None
        return f"{self.slurm_array_job_id}_{self.slurm_array_task_id}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Origin":
        def opt(key: str) -> int | None:
            return None if d.get(key) is None else int(d[key])

        return cls(str(d.get("host", "")), int(d.get("pid", 0)), opt("slurm_job_id"), opt("slurm_array_job_id"),
                   opt("slurm_array_task_id"), opt("slurm_restart_count"), str(d.get("version", "")),
                   None if d.get("cluster") is None else str(d["cluster"]))


# --------------------------------------------------------------------------- result record


@dataclass(frozen=True)
class DeviceUse:
    """One device's part in a task: its states, its set-up (context and build) and busy seconds."""

    label: str
    states: int
    setup_seconds: float
    busy_seconds: float
    kernel: str = ""  # the variant it ran
    model: str = ""  # the device's name (solver.devices.DeviceRef.model)
    platform: str = ""  # OpenCL platform and version
    driver: str = ""
    builds: tuple[str, ...] = ()  # solver.opencl.build_id of every program it ran (source and options)
    launches: int = 0  # chunks and slices it counted (a slice of a refined chunk adds no whole states)
    identity: str = ""  # which physical device: PCI bus id or uuid:... (solver.devices.device_identity); "" for none or older results

    @property
    def counted(self) -> bool:
        return self.states > 0 or self.launches > 0

    def provenance(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "model": self.model, "platform": self.platform, "driver": self.driver,
                "builds": list(self.builds), "launches": self.launches, "identity": self.identity}

    @classmethod
    def from_json(cls, label: str, d: dict[str, Any]) -> "DeviceUse":
        """One device of a result's JSON (its entries are keyed by label, each dict holding one field)."""
        seconds, made = d.get("device_seconds", {}).get(label, {}), d.get("device_provenance", {}).get(label, {})
        kernel = d.get("device_kernels", {}).get(label, d.get("kernel", ""))  # older results: the record's one
        return cls(label, int(d.get("device_states", {}).get(label, 0)), float(seconds.get("setup", 0.0)),
                   float(seconds.get("busy", 0.0)), str(kernel), str(made.get("model", "")),
                   str(made.get("platform", "")), str(made.get("driver", "")), tuple(str(b) for b in made.get("builds", ())),
                   int(made.get("launches", 0)), str(made.get("identity", "")))


@dataclass(frozen=True)
class AttemptDevices:
    """An attempt's part in a result: where it ran and the devices that counted (carried by checkpoints)."""

    attempt: int
    host: str
    version: str
    devices: tuple[DeviceUse, ...]

    def to_json(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "host": self.host, "version": self.version,
                "devices": [{**asdict(d), "builds": list(d.builds)} for d in self.devices]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AttemptDevices":
        devices = tuple(DeviceUse(str(u["label"]), int(u["states"]), float(u["setup_seconds"]), float(u["busy_seconds"]),
                                  str(u.get("kernel", "")), str(u.get("model", "")), str(u.get("platform", "")),
                                  str(u.get("driver", "")), tuple(str(b) for b in u.get("builds", ())),
                                  int(u.get("launches", 0)), str(u.get("identity", "")))
                        for u in d["devices"])
        return cls(int(d["attempt"]), str(d["host"]), str(d.get("version", "")), devices)


@dataclass(frozen=True)
class Seconds:
    load: float  # the partition read and verified
    kernel: float  # summed over chunks and devices
    total: float  # over every attempt
    this_attempt: float


@dataclass(frozen=True)
class SolutionsSeal:
    """A result's hold on its solutions file (Costas): the file's sha256 and its number of arrays, so that a
    damaged, swapped, cut or padded file is refused in one line (jobs.solutions reads it)."""

    sha256: str
    rows: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SolutionsSeal":
        if not re.fullmatch(r"[0-9a-f]{64}", str(d["sha256"])):
            raise ValueError(f"solutions sha256 {d['sha256']!r} is not 64 hex digits")
        return cls(str(d["sha256"]), parse_count(d["rows"]))


@dataclass(frozen=True)
class ResultRecord:
    """``results/part-NNNNN.json``: a partition's exact counts, written once by its task, never edited."""

    run_id: str
    problem: str
    n: int
    partition: int
    attempt: int
    pool_sha256: str
    states: int
    resumed_from: int
    states_this_attempt: int
    chunks: int
    checkpoint_rejected: str | None
    weighted: int  # every solution the states stand for (a symmetry class counted where its representative is)
    raw: int  # solutions as searched
    classes: int | None
    nodes: int | None  # when the node-counting build ran
    kernel: str  # the kernel variant that ran
    devices: tuple[DeviceUse, ...]
    seconds: Seconds
    origin: Origin
    finished: str = field(default_factory=now_utc)
    earlier: tuple[AttemptDevices, ...] = ()  # the attempts this one resumed from, and what counted there
    #: the solutions file written beside it (problems that report solutions); results before seals have none
    solutions_file: SolutionsSeal | None = None

    def counted_by(self) -> tuple[DeviceUse, ...]:
        """The devices that counted the partition's states, in this attempt and the earlier ones it resumed
        from (this attempt's all, if none counted anything)."""
        ran = tuple(d for d in self.devices if d.counted) + tuple(d for a in self.earlier for d in a.devices if d.counted)
        return ran or self.devices

    def same_numbers(self, other: "ResultRecord") -> bool:
        """Whether two attempts at one partition agree on everything that is counted."""
        return (self.weighted, self.raw, self.states, self.pool_sha256, self.run_id, self.partition) == (
            other.weighted, other.raw, other.states, other.pool_sha256, other.run_id, other.partition)

    @property
    def measured_cost(self) -> float:
        """What the pool's cost estimate predicts: nodes where counted, else kernel seconds."""
        return float(self.nodes if self.nodes is not None else self.seconds.kernel)

    def check_belongs(self, manifest: Manifest, partition: int, path: Path) -> None:
        """Refuse a result from another run or another pool (files must never be mixed), and one whose numbers
        cannot all be true: states other than its partition's rows, counts the symmetry rule cannot give."""
        from permenum.problems import get_problem  # numpy's import: not at the start of every command

        if self.run_id != manifest.run_id:
            raise UserError(f"{path}: result belongs to run {self.run_id}, this pool is run {manifest.run_id}")
        entry = manifest.partition(partition)
        if self.partition != partition or self.pool_sha256 != entry.sha256:
            raise UserError(f"{path}: result is for another partition or another version of partition {partition}")
        if (self.problem, self.n) != (manifest.problem, manifest.n) or self.states != entry.rows:
            raise UserError(f"{path}: result of {self.problem} {self.n} over {self.states} states, partition "
                            f"{partition} is {manifest.problem} {manifest.n} with {entry.rows}: it does not add up")
        why = get_problem(manifest.problem).counts_disagree(manifest.symmetry, self.weighted, self.raw, self.classes)
        if why is not None:
            raise UserError(f"{path}: result's counts do not add up ({why})")

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RESULT_FORMAT, "run_id": self.run_id, "problem": self.problem, "n": self.n,
            "partition": self.partition, "attempt": self.attempt, "pool_sha256": self.pool_sha256,
            "states": self.states, "resumed_from": self.resumed_from, "states_this_attempt": self.states_this_attempt,
            "chunks": self.chunks, "checkpoint_rejected": self.checkpoint_rejected,
            "solutions": {"weighted": self.weighted, "raw": self.raw}, "classes": self.classes,
            "nodes": self.nodes, "kernel": self.kernel,
            "devices": [d.label for d in self.devices],
            "device_states": {d.label: d.states for d in self.devices},
            "device_seconds": {d.label: {"setup": d.setup_seconds, "busy": d.busy_seconds} for d in self.devices},
            "device_kernels": {d.label: d.kernel for d in self.devices},
            "device_provenance": {d.label: d.provenance() for d in self.devices},
            "seconds": {"load": self.seconds.load, "kernel": self.seconds.kernel, "total": self.seconds.total,
                        "this_attempt": self.seconds.this_attempt},
            "environment": self.origin.to_json(), "finished": self.finished,
            "earlier_attempts": [a.to_json() for a in self.earlier],
            **({"solutions_file": self.solutions_file.to_json()} if self.solutions_file else {}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ResultRecord":
        devices = tuple(DeviceUse.from_json(str(label), d) for label in d["devices"])
        s = d["seconds"]
        return cls(str(d["run_id"]), str(d["problem"]), int(d["n"]), int(d["partition"]), int(d["attempt"]),
                   str(d["pool_sha256"]), int(d["states"]), int(d.get("resumed_from", 0)),
                   int(d.get("states_this_attempt", 0)), int(d.get("chunks", 0)), d.get("checkpoint_rejected"),
                   parse_count(d["solutions"]["weighted"]), parse_count(d["solutions"]["raw"]),
                   None if d.get("classes") is None else parse_count(d["classes"]),
                   None if d.get("nodes") is None else parse_count(d["nodes"]), str(d.get("kernel", "")), devices,
                   Seconds(float(s["load"]), float(s["kernel"]), float(s["total"]), float(s.get("this_attempt", 0.0))),
                   Origin.from_json(d.get("environment") or {}), str(d.get("finished", "")),
                   tuple(AttemptDevices.from_json(a) for a in d.get("earlier_attempts", ())),
                   None if d.get("solutions_file") is None else SolutionsSeal.from_json(d["solutions_file"]))


class ResultConflict(RuntimeError):
    """Two attempts at one partition produced different numbers: never silently pick one."""


def read_result(path: Path, raw: bytes | None = None) -> ResultRecord:
    """The result in ``path`` (or in ``raw``, bytes read from it once: what is checked is what is copied)."""
    return _parse(path, "result", ResultRecord.from_json, _read_sealed(path, "result", RESULT_FORMAT, raw))


def write_result(layout: RunLayout, record: ResultRecord) -> str:
    """Write the record once; returns "accepted", or "duplicate" when a result with the same numbers is
    there already (this one is kept in ``results/duplicates/``); raises ResultConflict on other numbers."""
    path = layout.result_file(record.partition)
    try:
        _write_sealed(path, record.to_json(), replace=False)
        return "accepted"
    except FileExistsError:
        pass
    try:
        first = read_result(path)
        foreign = (first.run_id, first.partition, first.pool_sha256) != (record.run_id, record.partition, record.pool_sha256)
        _check_solutions_seal(layout, first)
    except UserError:
        foreign = True
    if foreign:  # damaged (or its solutions file), or another run's or pool's: moved aside, never deleted
        try:
            quarantine(path)
        except FileNotFoundError:
            pass  # another attempt moved it first
        return write_result(layout, record)
    same = first.same_numbers(record)
    dup_path = layout.duplicate_result_file(record.partition, record.attempt)
    _write_sealed(dup_path, {**record.to_json(), "duplicate_of_attempt": first.attempt, "conflict": not same})
    if not same:
        raise ResultConflict(
            f"partition {record.partition}: attempt {record.attempt} found {record.weighted} solutions "
            f"({record.raw} raw) but the accepted attempt {first.attempt} found {first.weighted} "
            f"({first.raw} raw); kept both ({dup_path})")
    return "duplicate"


def sound_result(layout: RunLayout, manifest: Manifest, partition: int) -> ResultRecord | None:
    """The partition's verified result, None when it has none; UserError when its result is damaged, or the
    solutions file it seals is (missing, cut, swapped: the result is then no evidence, and is counted again)."""
    if not layout.result_file(partition).exists():
        return None
    return verified_result(layout, manifest, partition)


def verified_result(layout: RunLayout, manifest: Manifest, partition: int, raw: bytes | None = None) -> ResultRecord:
    """The partition's result verified in full (``raw``: its file's bytes, read once): its seal, that it belongs
    to this run and partition and adds up, and the solutions file it seals; UserError naming what is wrong."""
    path = layout.result_file(partition)
    record = read_result(path, raw)
    record.check_belongs(manifest, partition, path)
    _check_solutions_seal(layout, record)
    return record


def _check_solutions_seal(layout: RunLayout, record: ResultRecord) -> None:
    """UserError where the solutions file ``record`` seals is missing or is not the one it sealed."""
    if record.solutions_file is not None:
        check_solutions_file(layout, record.partition, record.solutions_file.sha256)


def check_solutions_file(layout: RunLayout, partition: int, sha256: str) -> None:
    """UserError where the partition's solutions file is missing or its sha256 is not ``sha256`` (its result's seal)."""
    read_sealed(layout.solutions_file(partition), sha256, f"partition {partition}: ", "result")


def attempts_so_far(layout: RunLayout, partition: int) -> int:
    """Finished attempts at this partition (accepted or duplicate), to number the next one."""
    dups = [p for p, kind, _ in layout.kept_results() if p == partition and kind == "attempt"]
    return int(layout.result_file(partition).exists()) + len(dups)


def kept_conflicts(layout: RunLayout) -> dict[int, list[Path]]:
    """Counts refused for other numbers than their partition's accepted result and kept in ``results/duplicates/``
    as evidence (an attempt here, write_result; an import, `merge`): partition -> their files. One file or the
    other is wrong, and only a re-count tells which; an unreadable kept file is listed too."""
    kept: dict[int, list[Path]] = {}
    for partition, kind, path in layout.kept_results():
        try:  # a refused import is a conflict by its name; an attempt's duplicate says whether it is one
            conflict = kind == "imported" or _read_sealed(path, "kept result", RESULT_FORMAT).get("conflict") is True
        except UserError:
            conflict = True
        if conflict:
            kept.setdefault(partition, []).append(path)
    return kept


# --------------------------------------------------------------------------- failure record


@dataclass(frozen=True)
class FailureRecord:
    """``logs/part-NNNNN.error.json``: why a task failed. Never a result: the partition stays not-done."""

    partition: int
    error: str
    origin: Origin
    time: str = field(default_factory=now_utc)

    def describe(self) -> str:
        job = f" (job {self.origin.slurm_task})" if self.origin.slurm_task else ""
        return f"{self.error}{job}, {self.time}"

    def to_json(self) -> dict[str, Any]:
        return {"format": FAILURE_FORMAT, "partition": self.partition, "error": self.error,
                "environment": self.origin.to_json(), "time": self.time}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "FailureRecord":
        return cls(int(d["partition"]), str(d["error"]), Origin.from_json(d.get("environment") or {}), str(d.get("time", "?")))


def write_failure(layout: RunLayout, partition: int, exc: BaseException, origin: Origin) -> None:
    _write_sealed(layout.failure_file(partition), FailureRecord(partition, f"{type(exc).__name__}: {exc}", origin).to_json())


def read_failure(layout: RunLayout, partition: int) -> FailureRecord | None:
    """The partition's failure record, or None; raises UserError when it is there but unreadable."""
    path = layout.failure_file(partition)
    if not path.exists():
        return None
    return _parse(path, "error record", FailureRecord.from_json, _read_sealed(path, "error record", FAILURE_FORMAT))


# --------------------------------------------------------------------------- search (find one)

SEARCH_PLAN_FORMAT = "permenum-search/1"
SEARCH_RESULT_FORMAT = "permenum-search-result/1"
#: Task t's walks take the seeds seed + t * SEED_STRIDE + w: disjoint for any number of walks per task.
SEED_STRIDE = 1 << 32


@dataclass(frozen=True)
class SearchPlan:
    """``search.json``: a multi-walk search run as K tasks (an array on SLURM, workers locally)."""

    run_id: str
    problem: str
    n: int
    seed: int
    tasks: int
    walks: int | None  # per task; None: what fills the task's device
    max_seconds: float | None
    device: str | None
    created: str = field(default_factory=now_utc)

    def task_seed(self, task: int) -> int:
        return (self.seed + task * SEED_STRIDE) % (1 << 64)

    def to_json(self) -> dict[str, Any]:
        return {"format": SEARCH_PLAN_FORMAT, **asdict(self)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SearchPlan":
        if not _RUN_ID.fullmatch(str(d["run_id"])):
            raise ValueError(f"run_id {d['run_id']!r} is not a permenum run id")
        max_seconds = None if d.get("max_seconds") is None else float(d["max_seconds"])
        return cls(str(d["run_id"]), str(d["problem"]), int(d["n"]), int(d["seed"]), int(d["tasks"]),
                   None if d.get("walks") is None else int(d["walks"]), max_seconds,
                   None if d.get("device") is None else str(d["device"]), str(d.get("created", "")))


def write_search_plan(layout: RunLayout, plan: SearchPlan) -> None:
    _write_sealed(layout.search_plan, plan.to_json(), replace=False)


def load_search_plan(layout: RunLayout) -> SearchPlan:
    path = layout.search_plan
    if not path.exists():
        raise UserError(f"{layout.root} is not a search run (no {path.name})")
    return _parse(path, "search plan", SearchPlan.from_json, _read_sealed(path, "search plan", SEARCH_PLAN_FORMAT))


@dataclass(frozen=True)
class SearchResult:
    """What one search (a task, or a search without a run) did: the solution when found (checked by the
    problem's own code before this is written), else how far it got. Also the ``--out`` file."""

    problem: str
    n: int
    seed: int  # the search's (task t's walk w had seed + t * SEED_STRIDE + w)
    task: int
    status: str  # found | time limit | stopped | cancelled
    solution: list[int] | None
    walk: int | None  # the walk that found it, its seed, and its iterations until it did
    walk_seed: int | None
    walks: int
    iterations: int  # the finding walk's, else every walk's so far (they advance in lock step)
    best: int  # the lowest cost any walk reached (Costas: weighted repeats; N-Queens: queens in conflict)
    seconds: float  # the whole task: device start, build, walks, check
    kernel_seconds: float
    device: str
    origin: Origin
    run_id: str | None = None
    finished: str = field(default_factory=now_utc)

    @property
    def found(self) -> bool:
        return self.solution is not None

    def to_json(self) -> dict[str, Any]:
        return {"format": SEARCH_RESULT_FORMAT, **{k: v for k, v in asdict(self).items() if k != "origin"},
                "environment": self.origin.to_json()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SearchResult":
        def opt(key: str) -> int | None:
            return None if d.get(key) is None else int(d[key])

        solution = None if d.get("solution") is None else [int(x) for x in d["solution"]]
        return cls(str(d["problem"]), int(d["n"]), int(d["seed"]), int(d["task"]), str(d["status"]), solution,
                   opt("walk"), opt("walk_seed"), int(d["walks"]), parse_count(d["iterations"]), int(d["best"]),
                   float(d["seconds"]), float(d["kernel_seconds"]), str(d["device"]),
                   Origin.from_json(d.get("environment") or {}), d.get("run_id"), str(d.get("finished", "")))


def write_search_result(path: Path, result: SearchResult, *, replace: bool = True) -> None:
    """``replace=False``: FileExistsError when there is one already (the first finder's `found.json` stays)."""
    _write_sealed(path, result.to_json(), replace=replace)


def read_search_result(path: Path) -> SearchResult:
    return _parse(path, "search result", SearchResult.from_json, _read_sealed(path, "search result", SEARCH_RESULT_FORMAT))


# --------------------------------------------------------------------------- verification

VERIFICATION_FORMAT = "permenum-verification/1"
VERIFICATION_CHECK_FORMAT = "permenum-verification-check/2"  # 2: kernels, searches, independent


@dataclass(frozen=True)
class VerificationPlan:
    """``verify/<name>/verification.json``: which partitions of a run are re-counted, with what, chosen how."""

    name: str
    run_id: str
    partitions: list[int]
    kernel: str  # the variant that re-counts (the run's was another, or on another device)
    device: str | None
    count_nodes: bool
    seed: int | None  # of the sample (None: the partitions were listed)
    sample: float | None  # the fraction asked for
    origin: Origin
    created: str = field(default_factory=now_utc)
    reflected: bool = False  # each partition's mirror image re-counted (problems.Problem.reflected)

    def to_json(self) -> dict[str, Any]:
        return {"format": VERIFICATION_FORMAT, **{k: v for k, v in asdict(self).items() if k != "origin"},
                "environment": self.origin.to_json()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "VerificationPlan":
        if not _RUN_ID.fullmatch(str(d["run_id"])):
            raise ValueError(f"run_id {d['run_id']!r} is not a permenum run id")
        return cls(str(d["name"]), str(d["run_id"]), [int(p) for p in d["partitions"]], str(d["kernel"]),
                   None if d.get("device") is None else str(d["device"]), bool(d["count_nodes"]),
                   None if d.get("seed") is None else int(d["seed"]),
                   None if d.get("sample") is None else float(d["sample"]),
                   Origin.from_json(d.get("environment") or {}), str(d.get("created", "")), bool(d.get("reflected", False)))


def partition_scope(layout: RunLayout, manifest: Manifest) -> list[int]:
    """The partitions a run directory counts: its pool's, or a verification's sample (``verify/<id>/`` holds
    the run's manifest, so that its tasks are ordinary tasks, but only the sample is its work)."""
    if layout.verification_plan.exists():
        return load_verification_plan(layout).partitions
    return list(range(manifest.num_partitions))


def check_verification_options(layout: RunLayout, kernel: str | None, device: str | None) -> None:
    """A verification's partitions are counted with its own kernel and device (`permenum verify` passes
    them), never with others: `permenum run` or `submit` on its directory without them would count the
    run's own search again and call it a verification."""
    if not layout.verification_plan.exists():
        return
    plan = load_verification_plan(layout)
    if kernel != plan.kernel or (plan.device is not None and device != plan.device):
        raise UserError(f"{layout.root} is a verification (kernel {plan.kernel}"
                        f"{', device ' + plan.device if plan.device else ''}): count it with `permenum verify "
                        f"{layout.root.parent.parent} --id {plan.name}`")


def write_verification_plan(layout: RunLayout, plan: VerificationPlan) -> None:
    _write_sealed(layout.verification_plan, plan.to_json(), replace=False)


def load_verification_plan(layout: RunLayout) -> VerificationPlan:
    path = layout.verification_plan
    return _parse(path, "verification", VerificationPlan.from_json,
                  _read_sealed(path, "verification", VERIFICATION_FORMAT))


@dataclass(frozen=True)
class Counted:
    """What a comparison keeps of a result: its counts, and what counted them, where and when."""

    attempt: int
    kernels: list[str]
    searches: list[tuple[str, str]]  # (kernel, device model) of every device that counted: what independence compares
    devices: list[str]
    models: list[str]
    builds: list[str]
    solutions: int
    raw: int
    classes: int | None
    nodes: int | None
    host: str
    finished: str
    site: str = ""  # records.Origin.site

    @classmethod
    def of(cls, r: ResultRecord) -> "Counted":
        ran = r.counted_by()
        return cls(r.attempt, sorted({d.kernel for d in ran}), sorted({(d.kernel, d.model) for d in ran}),
                   [d.label for d in ran],
                   sorted({d.model for d in ran if d.model}), sorted({b for d in ran for b in d.builds}), r.weighted,
                   r.raw, r.classes, r.nodes, r.origin.host, r.finished, r.origin.site)


@dataclass(frozen=True)
class Comparison:
    """One partition of a verification: the run's result beside the re-count, and what differed."""

    partition: int
    verdict: str  # agrees | DISAGREES | pending (no re-count yet)
    differs: list[str]  # the fields that differ (solutions, raw, classes, states, nodes)
    nodes_compared: bool  # both counted nodes of the same search
    independent: bool  # another kernel, device model, host or site, or the mirror image: not the same search again
    reference: Counted  # the run's result
    recount: Counted | None


@dataclass(frozen=True)
class VerificationCheck:
    """``verify/<name>/check.json``: the last comparison of a verification with the run (who, when, where)."""

    name: str
    run_id: str
    comparisons: list[Comparison]
    origin: Origin
    checked: str = field(default_factory=now_utc)

    def to_json(self) -> dict[str, Any]:
        return {"format": VERIFICATION_CHECK_FORMAT, "name": self.name, "run_id": self.run_id,
                "comparisons": [asdict(c) for c in self.comparisons], "environment": self.origin.to_json(),
                "checked": self.checked}


def write_verification_check(layout: RunLayout, check: VerificationCheck) -> None:
    """The comparison as last made (each `verify` replaces it; the re-counted results stay as they are)."""
    _write_sealed(layout.verification_check, check.to_json())
