"""Where a record was made (the process, its host and, under SLURM, its job): results and failures carry it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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
