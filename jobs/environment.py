"""Everything a task reads from its environment, in one place (cf. submitit's JobEnvironment)."""

from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass


def _env_int(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None


@dataclass(frozen=True)
class TaskEnvironment:
    host: str
    pid: int
    slurm_job_id: int | None
    slurm_array_job_id: int | None
    slurm_array_task_id: int | None
    slurm_restart_count: int | None

    @classmethod
    def read(cls) -> "TaskEnvironment":
        return cls(
            host=socket.gethostname(),
            pid=os.getpid(),
            slurm_job_id=_env_int("SLURM_JOB_ID"),
            slurm_array_job_id=_env_int("SLURM_ARRAY_JOB_ID"),
            slurm_array_task_id=_env_int("SLURM_ARRAY_TASK_ID"),
            slurm_restart_count=_env_int("SLURM_RESTART_COUNT"),
        )

    @property
    def under_slurm(self) -> bool:
        return self.slurm_job_id is not None

    def as_dict(self) -> dict[str, int | str | None]:
        return asdict(self)
