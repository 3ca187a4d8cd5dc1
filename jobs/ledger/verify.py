"""Re-count a sample of a run's partitions with another kernel or on another device, and compare.

A record run has no published count to check against, so the run must carry its own evidence (Q(25)
and Q(26) were each confirmed by a second computation; NQueens@Home failed on overflows nobody saw).
A verification is a run of its own in ``RUN/verify/<name>/``: a copy of the run's manifest with its
own run id, whose partition files are the run's (``../../pool/...``, checked by sha256 like any
partition), counted by the ordinary task (`permenum task`, locally or as a SLURM array) with the
kernel and device the verification names. Its results are then compared, partition by partition,
with the run's: the counts always, the nodes where both builds count the same search.

With ``reflect`` the verification's partitions are the sampled ones' mirror images (written in its own
``pool/``): a different search -- other masks, other words, the diagonals traded -- that must count the
same, which catches a kernel fault the same search would repeat on the same states.

The sample: ``ceil(F x P)`` (sample_size) of the run's P partitions with a result, drawn without replacement by
numpy's PCG64 from ``seed``. If k partitions of the run are wrong, such a sample of m catches at
least one with probability 1 - C(P-k, m) / C(P, m) (docs/DEVELOPMENT.md, "Trust without a published count").
"""

from __future__ import annotations

import contextlib
import math
import secrets
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from permenum.atomic import write_new_file
from permenum.errors import UserError
from permenum.jobs.counting.environment import TaskEnvironment
from permenum.jobs.counting.stream import does_not_parse
from permenum.layout import RunLayout
from permenum.poolgen.write import partition_bytes, read_partition
from permenum.problems import StateBatch, get_problem
from permenum.ranges import compact_ranges
from permenum.records import (Comparison, Counted, Manifest, PartitionEntry, ResultRecord, VerificationCheck, VerificationPlan,
                              load_manifest, load_verification_plan, write_manifest,
                              write_verification_check, write_verification_plan)
from permenum.result_index import scan_results
from permenum.sealed import arrow_reader

#: Kernel variants whose node counts are of one search (each state, its placements, its leaves): a
#: re-count on one of them compares nodes too. The others count nodes of their own searches.
SAME_SEARCH: tuple[frozenset[str], ...] = (frozenset({"skip", "skip-soa", "skip-all"}),)

#: `verify` exits with this when a re-count disagrees (1: a re-count failed or is unfinished; 2: bad input).
EXIT_DISAGREES = 3


def same_search(a: str, b: str) -> bool:
    return a == b or any(a in family and b in family for family in SAME_SEARCH)


#: The kernels a verification prefers, first to last: the readable reference, then (N-Queens) the search
#: without the dead-child filter, then the others.
PREFERRED = {"costas": ("dfs", "fc", "mid", "cf"), "nqueens": ("dfs", "skip-all", "skip", "skip-soa")}


def alternative_kernel(problem: str, symmetry: str, used: set[str]) -> str:
    """The kernel a verification uses unless told: the first preferred one that serves the symmetry mode
    (N-Queens dfs serves mirror and none only; Costas centre pools only mid and cf) and that none of the
    run's devices used, else the first that serves it."""
    from permenum.solver.registry import check_kernel

    def serves(kernel: str) -> bool:
        try:
            check_kernel(problem, kernel, symmetry)
        except UserError:
            return False
        return True

    preferred = PREFERRED[problem]
    serving = [k for k in preferred if serves(k)] or [preferred[0]]
    return next((k for k in serving if k not in used), serving[0])


def sample_size(done: int, fraction: float) -> int:
    """ceil(fraction x done), of the fraction as written (0.07 of 100 is 7, not float's 8)."""
    return math.ceil(Fraction(str(fraction)) * done)


def sample_partitions(done: list[int], fraction: float, seed: int) -> list[int]:
    """sample_size of ``done``, drawn without replacement from ``seed`` (sorted)."""
    if not 0 < fraction <= 1:
        raise UserError(f"--sample must be a fraction in (0, 1] (got {fraction})")
    picked = np.random.default_rng(seed).choice(np.array(done, dtype=np.int64), size=sample_size(len(done), fraction),
                                                replace=False)
    return sorted(int(p) for p in picked)


def catch_probability(partitions: int, altered: int, sampled: int) -> float:
    """The chance a sample of ``sampled`` of ``partitions`` holds at least one of ``altered`` wrong ones."""
    return 1.0 - math.comb(partitions - altered, sampled) / math.comb(partitions, sampled)


@dataclass(frozen=True)
class Request:
    sample: float | None  # a fraction of the done partitions, or
    partitions: list[int] | None  # these
    kernel: str | None  # None: alternative_kernel
    device: str | None
    count_nodes: bool
    seed: int | None  # of the sample; None: a random one (recorded)
    reflect: bool = False  # re-count each partition's mirror image
    counted_at: str | None = None  # sample only partitions this site counted (records.Origin.site)


def create_verification(layout: RunLayout, request: Request) -> RunLayout:
    """Choose the partitions and the kernel, and lay the verification out as a run of its own."""
    from permenum.solver.registry import check_kernel

    manifest = load_manifest(layout)
    scan = scan_results(layout, manifest)
    done: Mapping[int, ResultRecord] = scan.done
    if request.counted_at is not None:
        where = scan.rows.select(["partition", "site"]).to_pydict()  # the sites from the rows, the site's records read
        sites = sorted(set(where["site"]))
        here = {p for p, site in zip(where["partition"], where["site"]) if site == request.counted_at}
        done = {p: scan.done[p] for p in sorted(here)}
        if not done:
            raise UserError(f"no result of {layout.root} was counted at {request.counted_at!r} (sites: "
                            f"{', '.join(sites) or 'none'})")
    if not done:
        raise UserError(f"{layout.root} has no results to verify yet")
    seed = None
    if request.partitions is not None:
        if not request.partitions:
            raise UserError("--only lists no partition")
        unknown = [p for p in request.partitions if p not in done]
        if unknown:
            where = f" counted at {request.counted_at}" if request.counted_at is not None else ""
            raise UserError(f"partitions {compact_ranges(unknown)} have no result{where} in {layout.root}: nothing "
                            "to re-count")
        partitions = sorted(set(request.partitions))
    else:
        seed = request.seed if request.seed is not None else secrets.randbits(63)
        partitions = sample_partitions(sorted(done), request.sample or 0.0, seed)
    used = {d.kernel for p in partitions for d in done[p].counted_by()}
    kernel = request.kernel or alternative_kernel(manifest.problem, manifest.symmetry, used)
    check_kernel(manifest.problem, kernel, manifest.symmetry)
    elsewhere = request.counted_at is not None and request.counted_at != TaskEnvironment.read().origin.site
    if kernel in used and request.device is None and not request.reflect and not elsewhere:
        raise UserError(f"kernel {kernel} counted these partitions: re-counting with it on the same devices would repeat "
                        "the same search; give another --kernel, a --device, or --reflect")
    problem = get_problem(manifest.problem)
    if request.reflect and manifest.symmetry not in problem.reflected_modes:
        raise UserError(f"--reflect: {manifest.problem} pools of symmetry {manifest.symmetry} have no mirror-image states "
                        "(N-Queens mirror or none pools have)")
    name = f"v-{uuid.uuid4().hex[:12]}"
    shadow = layout.verification(name)
    made_dir = not layout.verifications_dir.exists()
    shadow.root.mkdir(parents=True)
    try:
        entries = [replace(e, file=f"../../{e.file}") for e in manifest.partitions]  # the run's files, checked as ever
        if request.reflect:
            for p in partitions:
                entries[p] = _write_reflected(layout, shadow, manifest, p)
        write_manifest(shadow, replace(manifest, run_id=uuid.uuid4().hex, partitions=tuple(entries)))
        write_verification_plan(shadow, VerificationPlan(name, manifest.run_id, partitions, kernel, request.device,
                                                         request.count_nodes, seed, request.sample,
                                                         TaskEnvironment.read().origin, reflected=request.reflect))
    except BaseException:
        _discard(layout, shadow, made_dir)
        raise
    return shadow


def _discard(layout: RunLayout, shadow: RunLayout, made_dir: bool) -> None:
    """A verification that failed while being laid out leaves no planless ``verify/v-*``: its directory goes
    (a fresh uuid's: only this call wrote in it), and ``verify/`` if this call made it and it is empty. The
    error being raised is the one to show, not a failure to remove."""
    shutil.rmtree(shadow.root, ignore_errors=True)
    if made_dir:
        with contextlib.suppress(OSError):
            layout.verifications_dir.rmdir()


def _write_reflected(layout: RunLayout, shadow: RunLayout, manifest: Manifest, partition: int) -> PartitionEntry:
    """Partition ``partition``'s mirror image in the verification's own pool (its entry: its own sha256)."""
    entry, problem = manifest.partition(partition), get_problem(manifest.problem)
    stored = read_partition(layout, entry)  # checked against its sha256: what fails below is the file's content
    try:
        table = pq.read_table(arrow_reader(stored))
        states, cost = StateBatch.from_table(table, problem.mask_names), table.column("est_cost").to_numpy()
    except (pa.ArrowException, OSError, ValueError, LookupError) as exc:
        raise does_not_parse(f"partition {partition}", exc) from exc
    image = problem.reflected(manifest.n, states, manifest.symmetry)
    assert image is not None, "create_verification checked the mode"
    data, made = partition_bytes(shadow, partition, image, cost)
    shadow.pool_dir.mkdir(parents=True, exist_ok=True)
    write_new_file(shadow.partition_file(partition), data)
    return made


def verifications(layout: RunLayout) -> list[RunLayout]:
    """Every verification of the run (a directory without its plan yet, one being created, is left out)."""
    if not layout.verifications_dir.is_dir():
        return []
    found = (layout.verification(p.name) for p in sorted(layout.verifications_dir.iterdir())
             if not p.name.startswith("."))  # a verification being imported (jobs.ledger.merge) is not one yet
    return [v for v in found if v.verification_plan.exists()]


def find_verification(layout: RunLayout, name: str) -> RunLayout:
    shadow = layout.verification(name)
    if not shadow.verification_plan.exists():
        raise UserError(f"{layout.root} has no verification {name!r} (see {layout.verifications_dir})")
    return shadow


def pending(shadow: RunLayout) -> list[int]:
    """The verification's partitions not re-counted yet."""
    plan = load_verification_plan(shadow)
    done = scan_results(shadow, load_manifest(shadow)).done
    return [p for p in plan.partitions if p not in done]


def compare(reference: ResultRecord, recount: ResultRecord | None, reflected: bool = False) -> Comparison:
    """One partition: the run's result beside the re-count (None: not re-counted yet) of the same
    partition file, or of its mirror image."""
    ref = Counted.of(reference)
    if recount is None:
        return Comparison(reference.partition, "pending", [], False, False, ref, None)
    new = Counted.of(recount)
    pairs: dict[str, tuple[object, object]] = {
        "solutions": (reference.weighted, recount.weighted), "raw": (reference.raw, recount.raw),
        "states": (reference.states, recount.states)}
    if not reflected:
        pairs["partition file"] = (reference.pool_sha256, recount.pool_sha256)
    if reference.classes is not None and recount.classes is not None:
        pairs["classes"] = (reference.classes, recount.classes)
    nodes = (reference.nodes is not None and recount.nodes is not None
             and all(same_search(a, b) for a in ref.kernels for b in new.kernels))
    if nodes:
        pairs["nodes"] = (reference.nodes, recount.nodes)
    differs = [name for name, (a, b) in pairs.items() if a != b]
    # no kernel on a model the run used, or another machine: a re-count elsewhere repeats no fault of the first's
    independent = reflected or not set(ref.searches) & set(new.searches) or (ref.host, ref.site) != (new.host, new.site)
    return Comparison(reference.partition, "DISAGREES" if differs else "agrees", differs, nodes, independent, ref, new)


@dataclass(frozen=True)
class Verified:
    """Every verification of a run compared with its results: which partitions agree, which do not."""

    partitions: int  # of the run
    checks: list[tuple[VerificationPlan, list[Comparison]]]
    unreadable: dict[str, str]  # verification -> why it could not be read (not trusted, not counted)

    def _with(self, verdict: str) -> set[int]:
        return {c.partition for _, cs in self.checks for c in cs if c.verdict == verdict}

    @property
    def agreeing(self) -> set[int]:
        """Partitions an independent re-count agreed with, and none disagreed with."""
        agreed = {c.partition for _, cs in self.checks for c in cs if c.verdict == "agrees" and c.independent}
        return agreed - self._with("DISAGREES")

    @property
    def disagreeing(self) -> list[int]:
        return sorted(self._with("DISAGREES"))

    @property
    def pending(self) -> list[int]:
        return sorted(self._with("pending") - self.agreeing - self._with("DISAGREES"))

    def agreeing_sites(self) -> dict[int, list[str]]:
        """Each agreeing partition's sites whose independent re-count agreed (the ledger's verified_by)."""
        agreeing, sites = self.agreeing, {}
        for _, comparisons in self.checks:
            for c in comparisons:
                if c.partition in agreeing and c.independent and c.recount is not None:
                    sites.setdefault(c.partition, set()).add(c.recount.site)
        return {p: sorted(s) for p, s in sites.items()}

    @property
    def fraction(self) -> float:
        return len(self.agreeing) / self.partitions if self.partitions else 0.0


@dataclass(frozen=True)
class RunResults:
    """The run's manifest and sound results, read once for all its verifications (a record run has
    thousands of result files; each verification compares with the same ones)."""

    manifest: Manifest
    done: Mapping[int, ResultRecord]  # each read from its file when a comparison asks for it

    @classmethod
    def read(cls, layout: RunLayout) -> "RunResults":
        manifest = load_manifest(layout)
        return cls(manifest, scan_results(layout, manifest).done)


def check_verification(run: RunResults, shadow: RunLayout) -> tuple[VerificationPlan, list[Comparison]]:
    """Compare one verification's re-counts with the run's results as they are now (no writes)."""
    plan = load_verification_plan(shadow)
    if plan.run_id != run.manifest.run_id:
        raise UserError(f"{shadow.root}: a verification of run {plan.run_id}, not of {run.manifest.run_id}")
    recounts = scan_results(shadow, load_manifest(shadow)).done
    return plan, [compare(run.done[p], recounts.get(p), plan.reflected) for p in plan.partitions if p in run.done]


def verified(layout: RunLayout, run: RunResults | None = None) -> Verified:
    """Every verification of the run checked against its results (what `collect` and `report` print; ``run``:
    the results they have read already); a damaged or foreign one is named, not trusted, and does not stop
    the others."""
    run = run or RunResults.read(layout)
    checks, unreadable = [], {}
    for shadow in verifications(layout):
        try:
            checks.append(check_verification(run, shadow))
        except UserError as exc:
            unreadable[shadow.root.name] = str(exc)
    return Verified(run.manifest.num_partitions, checks, unreadable)


def record_check(run: RunResults, shadow: RunLayout) -> tuple[VerificationPlan, list[Comparison]]:
    """Compare, and record the comparison in the verification (who compared, where, when)."""
    plan, comparisons = check_verification(run, shadow)
    write_verification_check(shadow, VerificationCheck(plan.name, plan.run_id, comparisons,
                                                       TaskEnvironment.read().origin))
    return plan, comparisons
