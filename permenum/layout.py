"""The run directory: the one place that knows where every file of a run lives (cf. submitit's JobPaths)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunLayout:
    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).absolute())

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def pool_dir(self) -> Path:
        return self.root / "pool"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def slurm_dir(self) -> Path:
        return self.root / "slurm"

    @property
    def submissions(self) -> Path:
        return self.root / "submissions.jsonl"

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.parquet"

    @staticmethod
    def part_name(partition: int) -> str:
        return f"part-{partition:05d}"

    def partition_file(self, partition: int) -> Path:
        return self.pool_dir / f"{self.part_name(partition)}.parquet"

    def result_file(self, partition: int) -> Path:
        return self.results_dir / f"{self.part_name(partition)}.json"

    def duplicate_result_file(self, partition: int, attempt: int) -> Path:
        return self.results_dir / "duplicates" / f"{self.part_name(partition)}.attempt-{attempt}.json"

    def checkpoint_file(self, partition: int) -> Path:
        return self.checkpoints_dir / f"{self.part_name(partition)}.ckpt"

    def solutions_file(self, partition: int) -> Path:
        return self.solutions_dir / f"{self.part_name(partition)}.parquet"

    def failure_file(self, partition: int) -> Path:
        return self.logs_dir / f"{self.part_name(partition)}.error.json"

    def task_log(self, partition: int) -> Path:
        return self.logs_dir / f"{self.part_name(partition)}.log"
