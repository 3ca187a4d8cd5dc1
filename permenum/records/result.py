"""``results/part-NNNNN.json``: one partition's counts, seconds and devices (ResultRecord), written once by
the attempt that counted it and read by the collector; and the kept duplicates and conflicts beside it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from permenum.atomic import quarantine
from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.sealed import read_sealed
from permenum.records.manifest import Manifest
from permenum.records.origin import Origin
from permenum.records.seal import parse_fields, read_record, write_record, now_utc, parse_count

RESULT_FORMAT = "permenum-result/3"  # 3: whole counts (Costas classes counted once); 2: sealed


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
    damaged, swapped, cut or padded file is refused in one line (jobs.counting.solutions reads it)."""

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
    return parse_fields(path, "result", ResultRecord.from_json, read_record(path, "result", RESULT_FORMAT, raw))


def write_result(layout: RunLayout, record: ResultRecord) -> str:
    """Write the record once; returns "accepted", or "duplicate" when a result with the same numbers is
    there already (this one is kept in ``results/duplicates/``); raises ResultConflict on other numbers."""
    path = layout.result_file(record.partition)
    try:
        write_record(path, record.to_json(), replace=False)
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
    write_record(dup_path, {**record.to_json(), "duplicate_of_attempt": first.attempt, "conflict": not same})
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
            conflict = kind == "imported" or read_record(path, "kept result", RESULT_FORMAT).get("conflict") is True
        except UserError:
            conflict = True
        if conflict:
            kept.setdefault(partition, []).append(path)
    return kept
