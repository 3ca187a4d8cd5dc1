"""``search/``: the plan of a `search` (find one solution by multi-walk local search) and its tasks' results."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from permenum.errors import UserError
from permenum.layout import RunLayout
from permenum.records.manifest import RUN_ID
from permenum.records.origin import Origin
from permenum.records.seal import parse_fields, read_record, write_record, now_utc, parse_count

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
        if not RUN_ID.fullmatch(str(d["run_id"])):
            raise ValueError(f"run_id {d['run_id']!r} is not a permenum run id")
        max_seconds = None if d.get("max_seconds") is None else float(d["max_seconds"])
        return cls(str(d["run_id"]), str(d["problem"]), int(d["n"]), int(d["seed"]), int(d["tasks"]),
                   None if d.get("walks") is None else int(d["walks"]), max_seconds,
                   None if d.get("device") is None else str(d["device"]), str(d.get("created", "")))


def write_search_plan(layout: RunLayout, plan: SearchPlan) -> None:
    write_record(layout.search_plan, plan.to_json(), replace=False)


def load_search_plan(layout: RunLayout) -> SearchPlan:
    path = layout.search_plan
    if not path.exists():
        raise UserError(f"{layout.root} is not a search run (no {path.name})")
    return parse_fields(path, "search plan", SearchPlan.from_json, read_record(path, "search plan", SEARCH_PLAN_FORMAT))


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
    write_record(path, result.to_json(), replace=replace)


def read_search_result(path: Path) -> SearchResult:
    return parse_fields(path, "search result", SearchResult.from_json, read_record(path, "search result", SEARCH_RESULT_FORMAT))
