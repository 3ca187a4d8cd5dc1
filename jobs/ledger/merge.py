"""`permenum merge RUN OTHER`: bring home the results another copy of the run counted at another site.

A campaign of several sites shares one pool but no file system: each site holds a copy of the run
directory (copied, or rebuilt with `pool --same-as`), counts its range of partitions, and the user's copy
tool (rsync, scp) brings the other copies' directories home. Nothing of theirs is trusted unread: the
copy must be of this very run (run id and every partition's sha256), each result its seal, its run, its
pool version and, for Costas, its solutions file (sha256 and arrays) before a byte lands here. Results
are written once, as a task writes them: a partition counted here already keeps its result (the same
numbers: nothing to do; other numbers: refused in one line, the import kept beside it in
``results/duplicates/`` as evidence); a partition a live task here is counting is left to it. So an
import twice changes nothing. The other copy's verifications come too: a site re-counting another's
partitions is how the sites check each other (`verify --counted-at SITE`).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from permenum.atomic import fsync_dir, quarantine, write_bytes_atomic, write_new_file
from permenum.errors import UserError
from permenum.jobs.counting.claims import PartitionClaimed, claim
from permenum.jobs.counting.solutions import check_arrays, parse_solutions, set_aside_solutions
from permenum.jobs.ledger.verify import verifications
from permenum.layout import RunLayout
from permenum.lock import run_lock
from permenum.poolgen.write import read_partition
from permenum.problems import get_problem
from permenum.records import (Manifest, ResultRecord, load_manifest, load_verification_plan, partition_scope,
                              read_result, sound_result)
from permenum.sealed import read_sealed


@dataclass
class Merged:
    """What one import did, per partition of the run (verifications apart)."""

    imported: list[int] = field(default_factory=list)
    already: list[int] = field(default_factory=list)  # the same numbers here already
    counting_here: list[int] = field(default_factory=list)  # a live task here holds it: left to it
    refused: dict[int, str] = field(default_factory=dict)  # damaged, foreign or in conflict: why, one line
    verifications: dict[str, list[int]] = field(default_factory=dict)  # name -> re-counts imported
    #: a verification refused whole ("v-..."), or one of its re-counts ("v-..., partition 3"): why, one line
    refused_verifications: dict[str, str] = field(default_factory=dict)


def merge(layout: RunLayout, other: RunLayout) -> Merged:
    """Import ``other``'s results (and verifications) into ``layout``, each checked; see the module."""
    if other.root.resolve() == layout.root.resolve():
        raise UserError(f"{other.root} is this run itself: give another copy's directory")
    for path in (other.manifest, other.verification_plan):  # a copy of a verification names its sample there
        other.confined(path, f"its {path.name}")
    manifest, theirs = load_manifest(layout), load_manifest(other)
    check_same_run(manifest, theirs, other)
    merged = Merged()
    with run_lock(layout, "merge"):
        _merge_results(layout, manifest, other, merged)
        for source in verifications(other):
            try:
                other.confined(source.root, "a verification")
                merged.verifications[source.root.name] = _merge_verification(layout, manifest, source,
                                                                              merged.refused_verifications)
            except (UserError, OSError) as exc:  # the others, and every result already imported, stand
                merged.refused_verifications[source.root.name] = str(exc)
    return merged


def check_same_run(manifest: Manifest, theirs: Manifest, where: RunLayout) -> None:
    """Refuse, in one line, a copy that is not of this run: another run, or this run id over another pool."""
    difference = manifest.first_difference(theirs)
    if theirs.run_id != manifest.run_id:
        pool = f"another pool ({difference})" if difference else "the same pool, built again"
        raise UserError(f"{where.root} is run {theirs.run_id}, not this run {manifest.run_id}: {pool}; a site "
                        "rebuilds its copy with `permenum pool ... --same-as` (or copies the run directory)")
    if difference is not None:
        raise UserError(f"{where.root} claims this run's id over another pool ({difference}): not imported")


#: Results imported at once: each file is fsynced before it lands (7 ms on this machine's disk, more on a
#: cluster's shared one), which threads overlap; the folders once at the end (600 imports one by one, each
#: with its file's and its folder's fsync: 20 a second).
IMPORT_THREADS = 16


def _merge_results(layout: RunLayout, manifest: Manifest, other: RunLayout, merged: Merged) -> None:
    offered = other.with_result_file()
    partitions = [p for p in partition_scope(other, manifest) if p in offered]
    try:
        with ThreadPoolExecutor(IMPORT_THREADS, thread_name_prefix="import") as pool:
            outcomes = list(pool.map(partial(_import, layout, manifest, other), partitions))
    finally:  # what landed is durable before it is reported, or before a failed import's error is
        for folder in (layout.results_dir, layout.solutions_dir):
            if folder.exists():
                fsync_dir(folder)
    for partition, outcome in zip(partitions, outcomes):
        if outcome == "imported":
            merged.imported.append(partition)
        elif outcome == "already":
            merged.already.append(partition)
        elif outcome == "counting here":
            merged.counting_here.append(partition)
        else:
            merged.refused[partition] = outcome


def _import(layout: RunLayout, manifest: Manifest, other: RunLayout, partition: int) -> str:
    """One result of ``other``, checked, then landed here: what _land says, or why it was refused."""
    source = other.result_file(partition)
    try:
        raw = other.confined(source, "a result").read_bytes()
        record = read_result(source, raw)
        record.check_belongs(manifest, partition, source)
        arrays = _solutions_bytes(other, manifest, record)
    except (UserError, OSError) as exc:
        return str(exc)
    return _land(layout, manifest, record, raw, arrays)


def _solutions_bytes(other: RunLayout, manifest: Manifest, record: ResultRecord) -> bytes | None:
    """The result's solutions file, read once, held to its seal, its arrays counted against the result (what
    is checked is what is copied); None for a problem that stores none."""
    if not get_problem(manifest.problem).reports_solutions:
        return None
    path = other.confined(other.solutions_file(record.partition), "a solutions file")
    data = read_sealed(path, record.solutions_file.sha256 if record.solutions_file else None, "", "result")
    check_arrays(path, parse_solutions(path, data, record.n, record.solutions_file), record, manifest.symmetry)
    return data


def _land(layout: RunLayout, manifest: Manifest, record: ResultRecord, raw: bytes, arrays: bytes | None) -> str:
    """Write one checked result here unless the partition has one; "imported", "already", "counting here",
    or why it was refused."""
    partition = record.partition
    here = _sound_here(layout, manifest, partition)
    if here is not None:
        return _compare(layout, here, record, raw, arrays)
    try:
        with claim(layout, partition, again=True, manifest=manifest):
            here = _sound_here(layout, manifest, partition)
            if here is not None:
                return _compare(layout, here, record, raw, arrays)
            set_aside_solutions(layout, partition)  # a damaged result's, or an orphan: evidence, kept
            if arrays is not None:  # before the result that seals it, as a task writes them
                layout.solutions_dir.mkdir(exist_ok=True)
                write_bytes_atomic(layout.solutions_file(partition), arrays, sync_dir=False)
            layout.results_dir.mkdir(exist_ok=True)
            target = layout.result_file(partition)
            if target.exists():  # damaged (a sound one was read above): moved aside, never deleted
                quarantine(target)
            write_bytes_atomic(target, raw, replace=False, sync_dir=False)
            return "imported"
    except PartitionClaimed:
        return "counting here"


def _sound_here(layout: RunLayout, manifest: Manifest, partition: int) -> ResultRecord | None:
    try:
        return sound_result(layout, manifest, partition)
    except UserError:
        return None  # damaged here: the import replaces it (moved aside)


def _compare(layout: RunLayout, here: ResultRecord, record: ResultRecord, raw: bytes, arrays: bytes | None) -> str:
    """"already" for the same numbers; else the import is kept as evidence, under a name of its own (its
    site and digest: a second site's conflict never overwrites the first's), and refused."""
    if here.same_numbers(record):
        return "already"
    tag = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', record.origin.site)}-{hashlib.sha256(raw).hexdigest()[:12]}"
    evidence = layout.refused_import_file(record.partition, tag)
    evidence.parent.mkdir(parents=True, exist_ok=True)
    for path, data in ((layout.refused_import_solutions_file(record.partition, tag), arrays), (evidence, raw)):
        if data is not None and not path.exists():  # imported before: kept already
            write_bytes_atomic(path, data)
    return (f"partition {record.partition}: the import found {record.weighted} solutions ({record.raw} raw) on "
            f"{record.origin.site}, this run's result {here.weighted} ({here.raw} raw) on {here.origin.site}: "
            f"kept this run's, the import beside it ({evidence})")


def _merge_verification(layout: RunLayout, manifest: Manifest, source: RunLayout, refused: dict[str, str]) -> list[int]:
    """One verification of the other copy, laid out here if new; the re-counts it imported."""
    try:
        target = _verification_here(layout, manifest, source)
    except (UserError, OSError) as exc:
        raise UserError(f"verification {source.root.name} of {source.root.parent.parent}: {exc}") from None
    merged = Merged()
    _merge_results(target, load_manifest(target), source, merged)
    refused.update({f"{source.root.name}, partition {p}": why for p, why in merged.refused.items()})
    return merged.imported


def _verification_here(layout: RunLayout, manifest: Manifest, source: RunLayout) -> RunLayout:
    """This run's copy of another site's verification: its manifest, plan and (reflected) partition files,
    copied into a staging directory, checked there (what is checked is what lands), then renamed into
    place; an existing copy must be of the same verification."""
    for path in (source.manifest, source.verification_plan):
        source.confined(path, "a verification file")
    target = layout.verification(source.root.name)
    if target.verification_plan.exists():
        if load_verification_plan(target).to_json() != load_verification_plan(source).to_json() or \
                load_manifest(target).run_id != load_manifest(source).run_id:
            raise UserError(f"{target.root} holds another verification of that name")
        return target
    staging = RunLayout(layout.verifications_dir / f".{source.root.name}.importing")  # dot: verifications() skips it
    shutil.rmtree(staging.root, ignore_errors=True)
    try:
        staging.pool_dir.mkdir(parents=True)
        for path in (source.manifest, source.verification_plan):
            write_new_file(staging.root / path.name, path.read_bytes())
        plan, recounts = load_verification_plan(staging), load_manifest(staging)
        if plan.run_id != manifest.run_id:
            raise UserError(f"a verification of run {plan.run_id}, not of this run {manifest.run_id}")
        if plan.name != source.root.name:
            raise UserError(f"the directory of verification {plan.name!r} is named {source.root.name!r}")
        for entry in recounts.partitions:
            if not entry.file.startswith("../"):  # its own (a mirror image): the run's are checked as ever
                write_new_file(staging.partition_file(entry.index), read_partition(source, entry))
        staging.root.rename(target.root)
    finally:
        shutil.rmtree(staging.root, ignore_errors=True)  # refused or failed: nothing of it is left
    return target
