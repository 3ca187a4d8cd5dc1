"""`permenum verify RUN`: re-count a sample of a run's partitions with another kernel or on another device.

Parse, call permenum.jobs.ledger.verify (and the local executor or SLURM submission that every run uses), print.
"""

from __future__ import annotations

import shlex
import sys
from functools import partial
from typing import TYPE_CHECKING

import click

from permenum.cli.common import err, existing_run, out, ranges, slurm_backend, slurm_errors
from permenum.cli.options import ONLY_RENAMED, SBATCH_RENAMED, WORKERS_HELP, Renaming, sbatch_options, task_options
from permenum.cli.runner import run_here
from permenum.errors import UserError, printable
from permenum.layout import RunLayout
from permenum.words import plural

if TYPE_CHECKING:
    from permenum.records import Comparison, Counted, VerificationPlan
    from permenum.task_options import TaskOptions


@click.command(cls=Renaming, renamed={**ONLY_RENAMED, **SBATCH_RENAMED}, short_help="Re-count a sample of a run, compare.")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--sample", type=float, default=None, help="Re-count this fraction of the partitions with a result "
              "(drawn from --seed).")
@click.option("--only", "listed", default=None, metavar="LIST", help="Re-count these partitions, e.g. 3,7,12-14.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the sample (default: a random one, recorded).")
@click.option("--id", "name", default=None, help="Go on with this verification (count what it has not yet).")
@click.option("--counted-at", "counted_at", default=None, metavar="SITE",
              help="Sample only the partitions this site counted (its SLURM cluster name, or host for a local run): "
                   "a site re-counting another's is an independent check.")
@click.option("--reflect", is_flag=True, help="Re-count each partition's mirror image (N-Queens mirror and none pools): "
              "another search that must count the same.")
@click.option("--check", is_flag=True, help="Count nothing: compare every verification of RUN with its results.")
@click.option("--workers", "-w", type=click.IntRange(min=1), default=None, help=WORKERS_HELP)
@click.option("--submit", "as_array", is_flag=True, help="Re-count as a SLURM array instead of here.")
@partial(sbatch_options, prefix="With --submit: ")
@partial(task_options, kernel_help="Kernel that re-counts (default: one the run's devices did not use: N-Queens dfs "
         "for mirror/none pools, else skip-all; Costas dfs or fc, mid for centre pools).")
def verify(run: str, sample: float | None, listed: str | None, seed: int | None, name: str | None,
           counted_at: str | None, reflect: bool, check: bool,
           workers: int | None, as_array: bool, throttle: int | None, gpus_per_task: int | None,
           time_limit: str | None, slurm_partition: str | None, account: str | None, sbatch_args: tuple[str, ...],
           device: str | None,
           kernel: str | None, count_nodes: bool, chunk_seconds: float) -> None:
    """Re-count a seeded sample of RUN's partitions (or the listed ones) with another kernel and/or on another
    device, compare them with RUN's results, and record the comparison in RUN/verify/<id>/.

    The kernel defaults to one other than the run's (the readable reference where it serves the symmetry
    mode, else the search without the dead-child filter). Exits 3 naming every partition that disagrees,
    1 when a re-count failed or is not done yet, 75 when it was stopped (`--id ID` goes on with it), 2 on
    bad input.
    """
    from permenum.jobs.ledger import verify as v

    layout = existing_run(run)
    new = {"--sample": sample, "--only": listed, "--seed": seed, "--kernel": kernel, "--device": device,
           "--reflect": reflect or None, "--count-nodes": count_nodes or None, "--counted-at": counted_at}
    given = [option for option, value in new.items() if value is not None]
    if (check or name) and given:
        raise UserError(f"{', '.join(given)} choose a new verification: not with {'--check' if check else '--id'}")
    if check:
        sys.exit(_check(layout, [v.find_verification(layout, name)] if name else v.verifications(layout)))
    if name:
        shadow = v.find_verification(layout, name)
    else:
        shadow = _new_verification(layout, sample, listed, seed, kernel, device, count_nodes, reflect, as_array,
                                   counted_at)
    from permenum.records import load_verification_plan
    from permenum.task_options import TaskOptions

    plan = load_verification_plan(shadow)
    options = TaskOptions(plan.device, plan.kernel, plan.count_nodes, chunk_seconds)
    out.print(f"verification {plan.name}: partitions {ranges(plan.partitions)} with kernel {plan.kernel}"
              + (f" on {plan.device}" if plan.device else "")
              + (f" (sample {plan.sample:g}, seed {plan.seed})" if plan.seed is not None else "")
              + (", each as its mirror image" if plan.reflected else ""), markup=False)
    todo = v.pending(shadow)
    if as_array:
        _submit(shadow, options, todo, throttle, gpus_per_task, time_limit, slurm_partition, account, sbatch_args)
        out.print(f"when it is done: `permenum verify {shlex.quote(run)} --check --id {plan.name}`", markup=False)
        return
    if todo:
        again = f"permenum verify {shlex.quote(run)} --id {plan.name}"
        code = run_here(shadow, workers, options, again=again)
        if code:
            sys.exit(code)
    sys.exit(_check(layout, [shadow]))


def _new_verification(layout: RunLayout, sample: float | None, listed: str | None, seed: int | None,
                      kernel: str | None, device: str | None, count_nodes: bool, reflect: bool,
                      as_array: bool, counted_at: str | None) -> RunLayout:
    """The options checked (the device too, when the re-count runs here), then the verification laid out."""
    from permenum.jobs.ledger.verify import Request, create_verification
    from permenum.ranges import expand_ranges

    if (sample is None) == (listed is None):
        raise UserError("give --sample F or --only LIST (or --id ID to go on with a verification, --check to "
                        "compare)")
    if listed is not None and seed is not None:
        raise UserError("--seed draws a sample: not with --only")
    try:
        partitions = expand_ranges(listed) if listed is not None else None
    except ValueError as exc:
        raise UserError(f"--only: {exc}") from None
    if not as_array:  # the device must exist here before anything is written (a node's is checked there)
        from permenum.solver.devices import select_devices

        select_devices(device)
    return create_verification(layout, Request(sample, partitions, kernel, device, count_nodes, seed, reflect,
                                               counted_at))


def _submit(shadow: RunLayout, options: "TaskOptions", todo: list[int], throttle: int | None,
            gpus_per_task: int | None, time_limit: str | None, slurm_partition: str | None, account: str | None,
            sbatch_args: tuple[str, ...]) -> None:
    from permenum.slurm import submit as sub
    from permenum.slurm.script import SbatchOptions

    if not todo:
        out.print("nothing to submit: every partition of the verification is re-counted")
        return
    sbatch = SbatchOptions(throttle, gpus_per_task, time_limit, slurm_partition, account, tuple(sbatch_args),
                           task=options)
    with slurm_errors():
        backend, note = slurm_backend()
        outcome, _ = sub.submit(shadow, backend, sbatch, backend_note=note)
    out.print(outcome.message, markup=False)


def _check(layout: RunLayout, shadows: list[RunLayout]) -> int:
    """Compare (and record) each verification; EXIT_DISAGREES when a partition disagrees."""
    from permenum.jobs.ledger.verify import EXIT_DISAGREES, RunResults, record_check

    if not shadows:
        raise UserError(f"{layout.root} has no verifications yet (`permenum verify {layout.root} --sample F`)")
    run = RunResults.read(layout)
    bad: list[int] = []
    unfinished = False
    for shadow in shadows:
        try:
            plan, comparisons = record_check(run, shadow)
        except UserError as exc:  # one damaged verification does not hide the others
            err.print(f"verification {printable(shadow.root.name)} unreadable: {exc}", markup=False)
            unfinished = True
            continue
        _print_check(plan, comparisons)
        bad += [c.partition for c in comparisons if c.verdict == "DISAGREES"]
        unfinished = unfinished or any(c.verdict == "pending" for c in comparisons)
    if bad:
        err.print(f"[red]DISAGREE:[/red] partitions {ranges(bad)}: their re-count differs from the run's result")
        return EXIT_DISAGREES
    return 1 if unfinished else 0


def _print_check(plan: "VerificationPlan", comparisons: "list[Comparison]") -> None:
    agree = [c.partition for c in comparisons if c.verdict == "agrees"]
    waiting = [c.partition for c in comparisons if c.verdict == "pending"]
    repeated = [c.partition for c in comparisons if c.verdict == "agrees" and not c.independent]
    nodes = sum(c.nodes_compared for c in comparisons)
    on = f" on {printable(plan.device)}" if plan.device else ""
    if len(waiting) == len(comparisons):  # "0/3 partitions agree" read as a failure
        out.print(f"verification {printable(plan.name)} ({printable(plan.kernel)}{on}): 0 of "
                  f"{plural(len(comparisons), 'partition')} re-counted yet", markup=False)
        return
    out.print(f"verification {printable(plan.name)} ({printable(plan.kernel)}{on}): "
              f"{len(agree)}/{len(comparisons)} partitions agree"
              + (f" (nodes compared on {nodes})" if nodes else "")
              + (f"; {ranges(repeated)} by the same kernel on the same model and host: not independent"
                 if repeated else "")
              + (f"; not re-counted yet: {ranges(waiting)}" if waiting else ""), markup=False)
    for c in comparisons:
        if c.verdict == "DISAGREES" and c.recount is not None:
            err.print(f"partition {c.partition} DISAGREES on {', '.join(c.differs)}: run "
                      f"{_counted(c.reference, c.differs)}, re-count {_counted(c.recount, c.differs)}", markup=False)


def _counted(c: "Counted", differs: list[str]) -> str:
    """One side of a disagreement: the counts that differ (states and the partition file are named only: a
    comparison keeps no values of theirs), then what counted them, where."""
    kept = {"solutions": c.solutions, "raw": c.raw, "classes": c.classes, "nodes": c.nodes}
    counts = ", ".join(f"{kept[name]} {name}" for name in differs if name in kept)
    who = printable(f"{', '.join(c.kernels)}, {', '.join(c.models)}, {c.host} at {c.site}")
    return f"{counts} ({who})" if counts else f"({who})"
