"""How a task runs: the options `permenum task` takes, the same through `run`, `enumerate` and `submit`.

Standard library only, so the SLURM side renders them into the batch script without loading the
OpenCL side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from permenum.errors import UserError

#: Bound on one kernel launch, in seconds: a stop request is honoured within about one launch.
DEFAULT_CHUNK_SECONDS = 30.0


@dataclass(frozen=True)
class TaskOptions:
    device: str | None = None  # gpu | cpu | accelerator | all | PLATFORM:DEVICE, optionally /K sub-devices
    kernel: str | None = None  # the problem's kernel variant; None: the device's default
    count_nodes: bool = False  # the node-counting build (slower)
    chunk_seconds: float = DEFAULT_CHUNK_SECONDS  # bound on one launch; a checkpoint follows each
    max_seconds: float | None = None  # checkpoint and stop once an attempt has run this long
    #: Which of ``device``'s devices (positions in its list) the task uses; () all. The local executor's
    #: way of giving each worker devices of its own (jobs.local.worker_groups); never rendered for SLURM,
    #: which hands a task its GPUs itself.
    only: tuple[int, ...] = ()

    def validate(self) -> None:
        if not (math.isfinite(self.chunk_seconds) and self.chunk_seconds > 0):
            raise UserError(f"--chunk-seconds must be a positive number of seconds (got {self.chunk_seconds})")
        if self.max_seconds is not None and not (math.isfinite(self.max_seconds) and self.max_seconds >= 0):
            raise UserError(f"--max-seconds must be a number of seconds, 0 or more (got {self.max_seconds})")

    def cli_args(self) -> list[str]:
        """The options as `permenum task` arguments (unquoted); those at their default are left out."""
        args = ["--device", self.device] if self.device else []
        if self.kernel:
            args += ["--kernel", self.kernel]
        if self.count_nodes:
            args.append("--count-nodes")
        if self.chunk_seconds != DEFAULT_CHUNK_SECONDS:
            args += ["--chunk-seconds", repr(float(self.chunk_seconds))]
        if self.max_seconds is not None:
            args += ["--max-seconds", repr(float(self.max_seconds))]
        return args
