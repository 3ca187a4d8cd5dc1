"""What every command shares, at the bottom of the command layer: the consoles, the exit codes, the one
way to name a run directory, and SLURM's errors as one line. Imports nothing else of permenum.cli."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from permenum.errors import UserError
from permenum.layout import RunLayout

if TYPE_CHECKING:
    from permenum.records import Manifest
    from permenum.slurm.backend import Backend

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_USAGE = 2
EXIT_INCOMPLETE = 1  # a partition failed or has no result yet, a count disagrees, or nothing was found
EXIT_OS = 74  # EX_IOERR: the operating system refused (disk full, read-only, permissions); nothing was damaged


def layout(run: str | Path) -> RunLayout:
    """The run directory RUN, which a command may create (pool, enumerate, search)."""
    return RunLayout(Path(run))


def existing_run(run: str | Path) -> RunLayout:
    """The run directory RUN of a command that reads one: one wording (records.not_a_run) when it is none."""
    from permenum.records import not_a_run

    found = RunLayout(Path(run))
    if not (found.manifest.exists() or found.search_plan.exists()):
        raise UserError(not_a_run(found))
    return found


def other_manifest(path: str | Path) -> "Manifest":
    """Another copy's manifest, named by its run directory or its manifest file (copied from another site)."""
    from permenum.records import load_manifest, read_manifest

    where = Path(path)
    if where.is_dir():
        return load_manifest(RunLayout(where))
    if not where.exists():
        raise UserError(f"{where} does not exist (give a run directory or its manifest.json)")
    return read_manifest(where)


def shard_set(spec: str | None, manifest: "Manifest") -> list[int] | None:
    """``--only 0-49,60``: the partitions a command is limited to (None: not given), each one of the
    pool's; ``all``: every partition (widening what a site's earlier `submit --only` gave it)."""
    from permenum.ranges import expand_ranges

    if spec is None:
        return None
    if spec.strip().lower() == "all":
        return list(range(manifest.num_partitions))
    try:
        chosen = expand_ranges(spec)
    except ValueError as exc:
        raise UserError(f"--only: {exc}") from None
    if not chosen:
        raise UserError("--only lists no partition")
    beyond = [p for p in chosen if p >= manifest.num_partitions]
    if beyond:
        raise UserError(f"--only: partition {beyond[0]} does not exist: this pool has partitions "
                        f"0-{manifest.num_partitions - 1}")
    return chosen


def ranges(partitions: list[int]) -> str:
    """Partitions as `0-3,7`: how every command names a list of them."""
    from permenum.ranges import compact_ranges

    return compact_ranges(partitions)


@contextmanager
def slurm_errors() -> Iterator[None]:
    """A failing SLURM command or cluster start as one UserError line naming the command, its exit code and
    SLURM's complaint."""
    from permenum.slurm.cluster import ClusterError
    from permenum.slurm.commands import SlurmCommandError

    try:
        yield
    except SlurmCommandError as exc:
        hint = "" if os.environ.get("SLURM_CONF") else " (SLURM_CONF is not set: `permenum cluster up` prints it)"
        raise UserError(exc.summary() + hint) from None
    except ClusterError as exc:
        raise UserError(" | ".join(line for line in str(exc).splitlines() if line.strip())) from None


def slurm_backend() -> "tuple[Backend, str]":
    from permenum.slurm.backend import select_backend

    return select_backend()
