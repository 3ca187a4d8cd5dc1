"""What several commands do alike, above common and options and below the commands: run partitions on this
machine (`run`, `enumerate`, `verify`), print a collected run (`collect`, `enumerate`), print a search run
(`collect`, `status`, `search`)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.markup import escape

from permenum.cli.common import EXIT_INCOMPLETE, EXIT_OS, err, existing_run, out, ranges, slurm_backend, slurm_errors
from permenum.errors import printable
from permenum.layout import RunLayout
from permenum.words import plural

if TYPE_CHECKING:
    from permenum.jobs.ledger.collect import Collected
    from permenum.jobs.local import LocalRunSummary
    from permenum.jobs.ledger.verify import Verified
    from permenum.task_options import TaskOptions


#: `collect` names each site on one line up to this many.
SHOWN_SITES = 8
#: The module of the local executor's workers, which the fork server imports ahead (children.start_early).
WORKERS = "permenum.jobs.local"


def task_options(device: str | None, kernel: str | None, count_nodes: bool, chunk_seconds: float,
                 max_seconds: float | None = None) -> "TaskOptions":
    """The task options, checked before anything runs."""
    from permenum.task_options import TaskOptions

    options = TaskOptions(device, kernel, count_nodes, chunk_seconds, max_seconds)
    options.validate()
    return options


def open_device(device: str | None) -> None:
    """Open the chosen device where it is alone (an unknown one is refused here, before any work)."""
    from permenum.solver.opencl import open_if_alone

    open_if_alone(device)


def run_here(layout: RunLayout, workers: int | None, options: "TaskOptions", again: str = "",
             prepare: Callable[[], None] = lambda: None, shards: list[int] | None = None) -> int:
    """Run the partitions without a result (of ``shards``; None: all) on this machine (``workers`` None: one
    worker per device group, every GPU used once); ``again`` is the command that resumes (default
    `permenum run RUN`); ``prepare`` runs while the workers start (jobs.local.run_local). A partition
    whose writes the system refused (a full disk, a quota) raises its OSError: one line, exit 74 (app.main)."""
    from permenum.jobs.counting.children import start_early
    from permenum.jobs.counting.environment import StopRequest
    from permenum.jobs.local import pending_partitions, run_local
    from permenum.jobs.counting.task import EXIT_INTERRUPTED

    start_early([WORKERS])  # the workers' and devices' processes import while this one counts the devices
    again = again or f"permenum run {shlex.quote(str(layout.root))}"
    stop = StopRequest(lambda line: err.print(line))
    stop.around_device_start(lambda: open_device(options.device))
    summary = run_local(layout, workers, options, console=err, stop=stop.event, prepare=prepare, shards=shards)
    if summary.skipped:
        err.print(f"{plural(len(summary.skipped), 'partition')} already had results")
    if summary.interrupted or summary.not_started:
        stopped = f"{plural(len(summary.interrupted), 'partition', False)} {ranges(summary.interrupted)} checkpointed" if summary.interrupted else ""
        waiting = f"{ranges(summary.not_started)} not started" if summary.not_started else ""
        err.print(f"interrupted: {'; '.join(x for x in (stopped, waiting) if x)}; run `{again}` again to resume",
                  markup=False)
        return EXIT_INTERRUPTED
    report_failures(summary)
    if summary.failed:  # a failed partition has no result, so running again counts it again
        out.print(f"next: `permenum status {shlex.quote(str(layout.root))}` says why, then `{again}` again to retry "
                  "the failed partitions", markup=False)
        return EXIT_INCOMPLETE
    # left to another executor: done only if it has finished them by now (one more scan, only then)
    return EXIT_INCOMPLETE if summary.claimed and set(summary.claimed) & set(pending_partitions(layout)) else 0


def report_failures(summary: "LocalRunSummary") -> None:
    """Each failed partition in a line; a partition whose writes the system refused raises its OSError (a full
    disk fails every partition alike: one line, exit 74, as `task` does: app.main)."""
    for i, why in sorted(summary.failed.items()):
        err.print(f"[red]partition {i} failed:[/red] {escape(why)}")
    if summary.refused:
        first, which = summary.refused[min(summary.refused)], sorted(summary.refused)
        named = f"{plural(len(which), 'partition', False)} {ranges(which)}"
        raise OSError(first.errno, f"{first.strerror}; {named} not counted", first.filename)


def verified_line(v: "Verified") -> str:
    """One line for `collect` and `report`: the verified fraction of the run, and any disagreement."""
    line = (f"verified: {len(v.agreeing)}/{v.partitions} partitions ({100 * v.fraction:.1f}%) re-counted "
            f"independently in agreement ({len(v.checks)} verification{'s' if len(v.checks) != 1 else ''})")
    if v.pending:
        line += f"; {len(v.pending)} not re-counted yet"
    for name, why in sorted(v.unreadable.items()):
        line += f"; verification {printable(name)} unreadable: {why}"
    if v.disagreeing:
        line += f"; DISAGREE: partitions {ranges(v.disagreeing)}"
    return line


def conflicts_line(layout: RunLayout) -> str | None:
    """For `collect`, `status` and `report`: the partitions with a count refused for other numbers than their
    result (kept in results/duplicates/), and what settles it; None where there are none."""
    from permenum.records import kept_conflicts

    kept = kept_conflicts(layout)
    if not kept:
        return None
    which = ranges(sorted(kept))
    files = sum(len(paths) for paths in kept.values())
    return (f"{plural(len(kept), 'partition', False)} {which} also {'has' if len(kept) == 1 else 'have'} "
            f"{plural(files, 'count')} refused for other numbers than the result, kept in "
            f"{printable(layout.results_dir / 'duplicates')}: one side is wrong; re-count "
            f"(`permenum verify {printable(layout.root)} --only {which}`): a re-count that agrees with the "
            "result settles it")


def _print_verified(layout: RunLayout, collected: "Collected") -> bool:
    """The verified fraction, where the run has verifications (`permenum verify`); False when one disagrees."""
    v = collected.verified
    assert v is not None, "collect compares the verifications"
    if v.checks or v.unreadable:
        (err if v.disagreeing else out).print(verified_line(v), markup=False)
    return not v.disagreeing


def print_collect(layout: RunLayout, show_ledger: bool = True) -> int:
    """Collect the run and print its total and its checks: 0 only for a complete run whose total is trusted.

    An unfinished run prints no total line: "partial: X from 6/8 partitions" (and exits 1), so that a
    partial sum is never read as the count. A ledger the system would not take (a read-only or full run
    directory) is an error line and EXIT_OS, whatever the checks said: the totals still print (they come
    from the results), but a script that trusts 0 must not read an old ledger, or none."""
    from permenum.jobs.ledger.collect import collect

    c = collect(layout)
    rc = _print_collected(layout, c, show_ledger)
    if c.ledger_error:
        err.print(f"error: ledger not written: {c.ledger_error}", markup=False)
        return EXIT_OS
    return rc


def _print_collected(layout: RunLayout, c: "Collected", show_ledger: bool) -> int:
    """print_collect's lines but the ledger's error, and its exit code were the ledger written."""
    from permenum.jobs.ledger.collect import spread

    m = c.manifest
    lo, med, hi = spread(c.seconds)
    scope = f"{len(c.counted)}/{m.num_partitions} partitions ({m.total_states} states, symmetry {m.symmetry})"
    if c.missing:
        out.print(f"{m.problem} n={m.n}: [yellow]partial:[/yellow] {c.total} from {scope}")
    else:
        classes = "" if c.classes is None else f", {c.classes} classes"
        out.print(f"{m.problem} n={m.n}: total {c.total}{classes} from {scope}")
    if c.seconds:
        out.print(f"time per partition: min {lo:.3f} s, median {med:.3f} s, max {hi:.3f} s; kernel time "
                  f"{c.kernel_seconds:.3f} s")
    sites = c.sites()
    if len(sites) > SHOWN_SITES:  # results from before sites were named carry each node's host
        checked = sum(n for _, n in sites.values())
        out.print(f"sites: {len(sites)} (the ledger's site column names them); {checked} partitions verified by "
                  "another site", markup=False)
    elif len(sites) > 1 or any(checked for _, checked in sites.values()):
        out.print("sites: " + "; ".join(f"{printable(site)} counted {counted}, {checked} of them verified by another "
                                         "site" for site, (counted, checked) in sorted(sites.items())), markup=False)
    if show_ledger and not c.ledger_error:
        out.print(f"ledger: {c.ledger_path}{' (partial)' if c.missing else ''}", markup=False)
    if layout.verification_plan.exists():  # a verification: its sample's total means nothing alone
        out.print(f"a verification: `permenum verify {layout.root.parent.parent} --check --id "
                  f"{layout.root.name}` compares it with the run", markup=False)
        return EXIT_INCOMPLETE if c.missing else 0
    trusted = _print_verified(layout, c)
    if c.missing:
        _print_conflicts(layout)
        err.print(f"[red]incomplete:[/red] {plural(len(c.missing), 'partition')} {'has' if len(c.missing) == 1 else 'have'} no result: {ranges(c.missing)}; "
                  f"`permenum status {layout.root}` says why")
        return EXIT_INCOMPLETE
    from permenum.jobs.ledger.evidence import run_evidence

    evidence = run_evidence(layout, m.problem, m.n, c.total, c.classes)
    if evidence is not None:
        (out if evidence.sound else err).print(f"evidence: {evidence.describe()}", markup=False)
        trusted = trusted and evidence.sound
    if c.known_total is None:
        out.print(f"no published count for {m.problem} n={m.n} to compare with")
    elif c.matches:
        extra = f" and {c.known_classes} classes" if c.classes is not None and c.known_classes is not None else ""
        out.print(f"[green]matches the published count[/green] {c.known_total}{extra}")
    else:
        err.print(f"[red]MISMATCH:[/red] total {c.total} (classes {c.classes}) differs from the published count "
                  f"{c.known_total} (classes {c.known_classes})")
        trusted = False
    _print_conflicts(layout)
    return 0 if trusted else EXIT_INCOMPLETE


def _print_conflicts(layout: RunLayout) -> None:
    """After the checks: a result that cannot be true is refused in one line above any of this."""
    conflicts = conflicts_line(layout)
    if conflicts:
        err.print(f"conflict: {conflicts}", markup=False, soft_wrap=True)


def print_search_status(layout: RunLayout, ask_scheduler: bool = False) -> int:
    """What `status` and `collect` say about a search run: each task's end, who found, after how long,
    how many walk-iterations all tasks tried; with ``ask_scheduler``, the tasks SLURM still holds."""
    from permenum.jobs.search import summarize

    s = summarize(layout)
    p = s.plan
    if ask_scheduler:
        from permenum.slurm.search import queue

        with slurm_errors():
            held = queue(slurm_backend()[0], p)
        for state in sorted({t.state for t in held}):
            out.print(f"{state.lower()}: tasks {ranges(sorted(t.index for t in held if t.state == state))}",
                      markup=False)
    out.print(f"search {p.problem} n={p.n}, seed {p.seed}: {len(s.ended)}/{p.tasks} tasks ended; "
              f"{s.walk_iterations} walk-iterations in all", markup=False)
    for t, r in sorted(s.ended.items()):
        out.print(f"  task {t}: {printable(r.status)}, {r.walks} walks x {r.iterations} iterations, lowest cost "
                  f"{r.best}, {r.seconds:.2f} s on {printable(r.device)}", markup=False)
    for t, why in sorted(s.damaged.items()):
        err.print(f"  task {t}: damaged record: {why}", markup=False)
    if s.found is None:
        out.print("no solution found yet", markup=False)
        return EXIT_INCOMPLETE
    f = s.found
    out.print(f"found by task {f.task}, walk {f.walk} (seed {f.walk_seed}), after {f.iterations} iterations and "
              f"{f.seconds:.2f} s; checked; {layout.search_found}", markup=False)
    return 0


__all__ = ["conflicts_line", "existing_run", "verified_line", "open_device", "print_collect", "print_search_status", "run_here", "task_options"]
