"""A partition's own log (``logs/part-NNNNN.log``), the same under SLURM and the local executor.

Lines also go to stderr, which SLURM captures in ``logs/%A_%a.out``.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path


class TaskLog:
    def __init__(self, path: Path, partition: int, echo: bool | None = None):
        self.path, self.partition = path, partition
        self.echo = bool(os.environ.get("SLURM_JOB_ID")) if echo is None else echo
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, message: str) -> None:
        line = f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='milliseconds')} partition {self.partition} pid {os.getpid()}: {message}\n"
        with open(self.path, "a") as fh:
            fh.write(line)
        if self.echo:
            sys.stderr.write(line)
            sys.stderr.flush()
