"""``verify/<name>/``: a verification's plan (which partitions are re-counted, with what) and its checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.records.manifest import Manifest, RUN_ID
from permenum.records.origin import Origin
from permenum.records.result import ResultRecord
from permenum.records.seal import parse_fields, read_record, write_record, now_utc

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
        if not RUN_ID.fullmatch(str(d["run_id"])):
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
    write_record(layout.verification_plan, plan.to_json(), replace=False)


def load_verification_plan(layout: RunLayout) -> VerificationPlan:
    path = layout.verification_plan
    return parse_fields(path, "verification", VerificationPlan.from_json,
                        read_record(path, "verification", VERIFICATION_FORMAT))


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
    write_record(layout.verification_check, check.to_json())
