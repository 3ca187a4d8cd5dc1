"""The run directory: the one place that knows where every file of a run lives (cf. submitit's JobPaths)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from permenum.errors import UserError

# A result kept aside in results/duplicates/: a later attempt's (part-NNNNN.attempt-K.json) or a refused import's
# (part-NNNNN.imported-TAG.json); their solutions files end in .solutions.parquet and are not listed.
_KEPT_RESULT = re.compile(r"part-(\d{5,})\.(attempt|imported)-(.+)\.json")

# SLURM writes each array task's stdout+stderr to logs/<array job id>_<array task id>.out (%A_%a).
_SLURM_LOG = re.compile(r"^(\d+)_(\d+)\.out$")
# what follows part-NNNNN in the name of a partition's result, checkpoint and error record
_RESULT, _CHECKPOINT, _FAILURE = ".json", ".ckpt", ".error.json"


@dataclass(frozen=True)
class RunLayout:
    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).absolute())

    def confined(self, path: Path, what: str) -> Path:
        """``path`` once it resolves, links followed, inside this run directory; else one line refusing it.

        Why: a name read from a manifest or found in another site's copy (rsync -a keeps symlinks) may point
        anywhere, and whoever runs the command (root, on many clusters) would read or write there."""
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(self.root.resolve()):
            raise UserError(f"{path}: {what} leads outside {self.root} (to {resolved}): refused")
        return path

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
    def sbatch_script(self) -> Path:
        """The rendered array job script (`permenum submit` writes it; `sbatch` on it by hand works too)."""
        return self.slurm_dir / "array.sbatch"

    @property
    def candidate_sbatch_script(self) -> Path:
        """A newly rendered script while sbatch has not yet accepted it (it then replaces sbatch_script)."""
        return self.slurm_dir / "array.sbatch.new"

    @property
    def slurm_log_pattern(self) -> Path:
        """The `--output` pattern: SLURM fills in %A (array job id) and %a (array task index: the partition
        less the offset handed to the script, see permenum.slurm.submit)."""
        return self.logs_dir / "%A_%a.out"

    def slurm_logs(self) -> list[tuple[int, int, Path]]:
        """Every SLURM task log of this run as (array job id, array task index, path), oldest job first."""
        if not self.logs_dir.exists():
            return []
        found: list[tuple[int, int, Path]] = []
        for path in self.logs_dir.iterdir():
            m = _SLURM_LOG.match(path.name)
            if m:
                found.append((int(m.group(1)), int(m.group(2)), path))
        return sorted(found)

    @property
    def lock_file(self) -> Path:
        """Held by `pool`, `submit` and `resubmit` (permenum.lock)."""
        return self.root / ".permenum.lock"

    @property
    def submissions(self) -> Path:
        return self.root / "submissions.jsonl"

    @property
    def ledger(self) -> Path:
        """The ledger of a complete run (`permenum collect`)."""
        return self.root / "ledger.parquet"

    @property
    def rate_hints(self) -> Path:
        """Each device model's measured rate, where a task's first chunks start (jobs.counting.rate_hints)."""
        return self.root / "rates.json"

    @property
    def partial_ledger(self) -> Path:
        """The ledger of an unfinished run: its name says so, and no tool reads it for the total by mistake."""
        return self.root / "ledger.partial.parquet"

    @staticmethod
    def part_name(partition: int) -> str:
        return f"part-{partition:05d}"

    def partition_file(self, partition: int) -> Path:
        return self.pool_dir / f"{self.part_name(partition)}.parquet"

    def result_file(self, partition: int) -> Path:
        return self.results_dir / self.result_file_name(partition)

    def result_file_name(self, partition: int) -> str:
        """result_file's name alone (a scan of 20,000 joins it to the folder as a string: a Path each cost 0.7 s)."""
        return f"{self.part_name(partition)}{_RESULT}"

    @property
    def results_index(self) -> Path:
        """What the scans verified already, by the sha256 of each result file (permenum.result_index)."""
        return self.results_dir / "index.arrow"

    def with_result_file(self) -> set[int]:
        """The partitions whose result_file exists (one listing: see _listed)."""
        return self._listed(self.results_dir, _RESULT)

    def with_checkpoint_file(self) -> set[int]:
        return self._listed(self.checkpoints_dir, _CHECKPOINT)

    def with_failure_file(self) -> set[int]:
        return self._listed(self.logs_dir, _FAILURE)

    def _listed(self, folder: Path, suffix: str) -> set[int]:
        """The partitions with a file named ``part-NNNNN<suffix>`` in ``folder``, read from one listing of it:
        a Path and a stat for each of 20,000 partitions took 0.5-1 s a scan here (`status` made three)."""
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return set()
        found: set[int] = set()
        for name in names:
            digits = name[len("part-"):-len(suffix)]
            if name.endswith(suffix) and digits.isascii() and digits.isdigit() \
                    and f"{self.part_name(int(digits))}{suffix}" == name:
                found.add(int(digits))
        return found

    def duplicate_result_file(self, partition: int, attempt: int) -> Path:
        return self.results_dir / "duplicates" / f"{self.part_name(partition)}.attempt-{attempt}.json"

    def kept_results(self) -> list[tuple[int, str, Path]]:
        """The results kept aside in ``results/duplicates/`` (duplicate_result_file, refused_import_file), each
        as (partition, "attempt" or "imported", path); a name of neither shape (a stray file) is left out."""
        folder = self.results_dir / "duplicates"
        if not folder.is_dir():
            return []
        found = ((_KEPT_RESULT.fullmatch(p.name), p) for p in sorted(folder.iterdir()))
        return [(int(m[1]), m[2], p) for m, p in found if m is not None]

    def duplicated_partitions(self) -> set[int]:
        """Partitions with a later attempt's result kept aside."""
        return {partition for partition, kind, _ in self.kept_results() if kind == "attempt"}

    def duplicate_solutions_file(self, partition: int, attempt: int) -> Path:
        """A duplicate attempt's arrays (the accepted result's solutions file is never replaced)."""
        return self.results_dir / "duplicates" / f"{self.part_name(partition)}.attempt-{attempt}.solutions.parquet"

    def refused_import_file(self, partition: int, tag: str) -> Path:
        """An imported result with other numbers than the accepted one (`merge`), kept as evidence; ``tag``
        names the site and the file's digest, so two refused imports never share a name."""
        return self.results_dir / "duplicates" / f"{self.part_name(partition)}.imported-{tag}.json"

    def refused_import_solutions_file(self, partition: int, tag: str) -> Path:
        return self.results_dir / "duplicates" / f"{self.part_name(partition)}.imported-{tag}.solutions.parquet"

    def checkpoint_file(self, partition: int) -> Path:
        return self.checkpoints_dir / f"{self.part_name(partition)}{_CHECKPOINT}"

    def solutions_file(self, partition: int) -> Path:
        return self.solutions_dir / f"{self.part_name(partition)}.parquet"

    @property
    def claims_dir(self) -> Path:
        return self.root / "claims"

    def claim_file(self, partition: int) -> Path:
        """Held (flock) by the task counting the partition, so no other executor starts it (jobs.counting.claims)."""
        return self.claims_dir / f"{self.part_name(partition)}.claim"

    def failure_file(self, partition: int) -> Path:
        return self.logs_dir / f"{self.part_name(partition)}{_FAILURE}"

    def task_log(self, partition: int) -> Path:
        return self.logs_dir / f"{self.part_name(partition)}.log"

    # a search run (permenum search PROBLEM N RUN, --submit): its plan, one record per task, the first find

    @property
    def verifications_dir(self) -> Path:
        """Where `permenum verify` keeps its re-counts: each a run of its own (manifest, sampled partitions)."""
        return self.root / "verify"

    def verification(self, name: str) -> "RunLayout":
        return RunLayout(self.verifications_dir / name)

    @property
    def verification_plan(self) -> Path:
        """In a verification's own directory: what it re-counts, with what (records.VerificationPlan)."""
        return self.root / "verification.json"

    @property
    def verification_check(self) -> Path:
        """In a verification's own directory: the last comparison with the run's results."""
        return self.root / "check.json"

    @property
    def search_plan(self) -> Path:
        return self.root / "search.json"

    @property
    def search_found(self) -> Path:
        """The first task to find writes it (never replaced): the run's answer."""
        return self.root / "found.json"

    def search_task_file(self, task: int) -> Path:
        return self.results_dir / f"task-{task:05d}.json"

    def search_task_log(self, task: int) -> Path:
        return self.logs_dir / f"task-{task:05d}.log"
