"""The ``permenum`` command. Thin: parse, call the package, print; every UserError is one line and exit 2."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from permenum.cli_options import task_options
from permenum.errors import UserError
from permenum.layout import RunLayout

if TYPE_CHECKING:
    from permenum.jobs.collect import Collected
    from permenum.jobs.environment import StopRequest
    from permenum.task_options import TaskOptions

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_USAGE = 2
EXIT_INCOMPLETE = 1
EXIT_OS = 74  # EX_IOERR: the operating system refused (disk full, read-only, permissions); nothing was damaged


def _layout(run: str) -> RunLayout:
    return RunLayout(Path(run))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="permenum")
def cli() -> None:
    """Exact, distributed enumeration of N-Queens solutions and Costas arrays."""


def pool_options(f):  # type: ignore[no-untyped-def]
    from permenum.poolgen.write import DEFAULT_TARGET, STATES_PER_PARTITION

    f = click.option("--seed", type=int, default=0, show_default=True, help="Seed of the Fisher-Yates shuffle.")(f)
    f = click.option("--target-states", "-S", type=int, default=None,
                     help=f"Soft target pool size for ladder climbing (default: the larger of {DEFAULT_TARGET} "
                          f"and {STATES_PER_PARTITION} x partitions).")(f)
    f = click.option("--symmetry", type=str, default=None, help="Symmetry reduction (default: the problem's).")(f)
    f = click.option("--balance", type=click.Choice(["cost", "rows"]), default="cost", show_default=True,
                     help="Partitions of equal estimated cost (Knuth probes) or of equal row count.")(f)
    return f


@cli.command()
@click.argument("problem")
@click.option("--n", "n", type=int, required=True, help="Board size / order.")
@click.option("--out", "run", type=click.Path(file_okay=False), required=True, help="Run directory to create.")
@click.option("--partitions", "-P", type=int, default=1, show_default=True)
@pool_options
def pool(problem: str, n: int, run: str, partitions: int, target_states: int | None, seed: int, symmetry: str | None,
         balance: str) -> None:
    """Generate the state pool of PROBLEM and write it as Parquet partitions plus manifest.json."""
    from permenum.poolgen.write import PoolSettings, write_pool

    manifest, created = write_pool(_layout(run), PoolSettings(problem, n, partitions, target_states, seed=seed, symmetry=symmetry,
                                                              balance=balance))
    g = manifest.generator
    verb = "wrote" if created else "kept the identical existing"
    out.print(f"{verb} pool {manifest.run_id}: {manifest.problem} n={manifest.n}, {manifest.total_states} states at "
              f"depth {g.locked_depth} ({g.stop_reason}), {manifest.num_partitions} partitions in {run}")


def _task_options(device: str | None, kernel: str | None, count_nodes: bool, chunk_seconds: float,
                  max_seconds: float | None = None) -> "TaskOptions":
    from permenum.task_options import TaskOptions

    options = TaskOptions(device, kernel, count_nodes, chunk_seconds, max_seconds)
    options.validate()
    return options


def _open_device(device: str | None) -> None:
    from permenum.solver.devices import select_devices
    from permenum.solver.opencl import device_context

    device_context(select_devices(device)[0])


@cli.command()
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--partition", "-i", type=int, required=True)
@task_options
@click.option("--max-seconds", type=float, default=None,
              help="Checkpoint and stop (exit 75) once this attempt has run this long (at least one chunk).")
@click.option("--force", is_flag=True, help="Count a partition that already has a result again (kept as a duplicate).")
@click.pass_obj
def task(stop: "StopRequest | None", run: str, partition: int, device: str | None, kernel: str | None, count_nodes: bool,
         chunk_seconds: float, max_seconds: float | None, force: bool) -> None:
    """Run one partition (what each SLURM array task executes) and write its result file.

    On SIGUSR1/SIGTERM the task finishes its chunk, checkpoints and exits 75: after a time limit's
    warning or a preemption it requeues itself, after a user's scancel it stops for good (README
    "Checkpoints, signals and requeue"); a restart resumes. A partition that is done already is not
    counted again unless --force.
    """
    from permenum.jobs.environment import TaskEnvironment
    from permenum.jobs.task import EXIT_INTERRUPTED, TaskInterrupted, run_task

    if partition < 0:
        raise UserError(f"--partition must be non-negative (got {partition})")
    options = _task_options(device, kernel, count_nodes, chunk_seconds, max_seconds)
    if not force and _already_done(_layout(run), partition):
        return
    if stop is None:  # invoked without main() (click's test runner): no early handler was installed
        from permenum.jobs.environment import StopRequest

        stop = StopRequest(err.print)
    stop.around_device_start(lambda: _open_device(device))
    try:
        done = run_task(_layout(run), partition, options, stop.event)
    except TaskInterrupted as exc:
        err.print(f"{exc}; {TaskEnvironment.read().after_interrupt(stop.signum)}", markup=False)
        sys.exit(EXIT_INTERRUPTED)
    r = done.record
    out.print(f"partition {partition}: {r.weighted} solutions from {r.states} states in "
              f"{r.seconds.total:.2f} s (kernel {r.seconds.kernel:.2f} s) on {'; '.join(d.label for d in r.devices)} "
              f"[{done.status}, attempt {r.attempt}, resumed from state {r.resumed_from}]", markup=False)


def _already_done(layout: RunLayout, partition: int) -> bool:
    """A partition with a sound result is not counted again (no work done twice): say so, exit 0."""
    from permenum.records import load_manifest, sound_result

    try:
        record = sound_result(layout, load_manifest(layout), partition)
    except UserError:
        return False  # no such partition (the task says so) or a damaged result (the task replaces it)
    if record is not None:
        out.print(f"partition {partition} is done already: {record.weighted} solutions, attempt {record.attempt} "
                  f"({layout.result_file(partition)}); nothing to do (--force counts it again)", markup=False)
    return record is not None


def _run_local(run: str, workers: int, options: "TaskOptions", again: str = "") -> int:
    """Run the partitions here; ``again`` is the command that resumes (default `permenum run RUN`)."""
    from permenum.jobs.environment import StopRequest
    from permenum.jobs.local import run_local
    from permenum.jobs.task import EXIT_INTERRUPTED

    stop = StopRequest(lambda line: err.print(line))
    stop.around_device_start(lambda: _open_device(options.device))
    summary = run_local(_layout(run), workers, options, console=err, stop=stop.event)
    if summary.skipped:
        err.print(f"{len(summary.skipped)} partitions already had results")
    if summary.interrupted or summary.not_started:
        from permenum.ranges import compact_ranges

        stopped = f"partitions {compact_ranges(summary.interrupted)} checkpointed" if summary.interrupted else ""
        waiting = f"{compact_ranges(summary.not_started)} not started" if summary.not_started else ""
        err.print(f"interrupted: {'; '.join(x for x in (stopped, waiting) if x)}; run `{again or f'permenum run {run}'}` again to resume")
        return EXIT_INTERRUPTED
    for i, why in sorted(summary.failed.items()):
        err.print(f"[red]partition {i} failed:[/red] {why}")
    return EXIT_INCOMPLETE if summary.failed else 0


@cli.command(name="run")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--workers", "-w", type=click.IntRange(min=1), default=1, show_default=True)
@task_options
def run_cmd(run: str, workers: int, device: str | None, kernel: str | None, count_nodes: bool,
            chunk_seconds: float) -> None:
    """Run every partition without a result on this machine (the local executor).

    Ctrl-C stops every task after its current chunk, with a checkpoint; running again resumes.
    """
    sys.exit(_run_local(run, workers, _task_options(device, kernel, count_nodes, chunk_seconds)))


def _print_verified(run: str, collected: "Collected") -> bool:
    """The verified fraction, where the run has verifications (`permenum verify`); False when one disagrees."""
    from permenum.cli_verify import verified_line
    from permenum.jobs.verify import RunResults, verified

    v = verified(_layout(run), RunResults(collected.manifest, {r.partition: r for r in collected.records}))
    if v.checks or v.unreadable:
        (err if v.disagreeing else out).print(verified_line(v), markup=False)
    return not v.disagreeing


def _print_collect(run: str, show_ledger: bool = True) -> int:
    from permenum.jobs.collect import collect, spread
    from permenum.ranges import compact_ranges

    c = collect(_layout(run))
    m = c.manifest
    lo, med, hi = spread(c.seconds)
    classes = "" if c.classes is None or c.missing else f", {c.classes} classes"
    out.print(f"{m.problem} n={m.n}: total {c.total}{classes} from {len(c.records)}/{m.num_partitions} partitions "
              f"({m.total_states} states, symmetry {m.symmetry})")
    if c.seconds:
        kernel = sum(r.seconds.kernel for r in c.records)
        out.print(f"time per partition: min {lo:.3f} s, median {med:.3f} s, max {hi:.3f} s; kernel time {kernel:.3f} s")
    if c.ledger_error:
        err.print(f"note: ledger not written: {c.ledger_error}", markup=False)
    elif show_ledger:
        out.print(f"ledger: {_layout(run).ledger}")
    if _layout(run).verification_plan.exists():  # a verification: its sample's total means nothing alone
        out.print(f"a verification: `permenum verify {_layout(run).root.parent.parent} --check --id "
                  f"{_layout(run).root.name}` compares it with the run", markup=False)
        return EXIT_INCOMPLETE if c.missing else 0
    trusted = _print_verified(run, c)
    if c.missing:
        err.print(f"[red]incomplete:[/red] {len(c.missing)} partitions have no result: {compact_ranges(c.missing)}")
        return EXIT_INCOMPLETE
    from permenum.jobs.evidence import run_evidence

    evidence = run_evidence(_layout(run), m.problem, m.n, c.total, c.classes)
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
    return 0 if trusted else EXIT_INCOMPLETE


@cli.command(name="collect")
@click.argument("run", type=click.Path(file_okay=False))
def collect_cmd(run: str) -> None:
    """Rebuild ledger.parquet from the result files and check the total against the published count
    (a search run: which task found, after how long, what every task tried)."""
    layout = _layout(run)
    if layout.search_plan.exists():
        from permenum.cli_search import print_search_status

        sys.exit(print_search_status(layout))
    sys.exit(_print_collect(run))


@cli.command()
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--all", "expand", is_flag=True, help="Every member of every symmetry class (default: one line per class, its representative).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help="Write to FILE (.parquet, else text: one array per line) instead of standard output.")
def arrays(run: str, expand: bool, out_file: str | None) -> None:
    """List the Costas arrays of a finished run (row of each column, 0-based), each one verified."""
    import numpy as np

    from permenum.atomic import write_bytes_atomic
    from permenum.jobs.solutions import collected_arrays, write_arrays

    found = collected_arrays(_layout(run), expand)
    text = "".join(" ".join(map(str, a)) + "\n" for a in found)
    if out_file is None:
        sys.stdout.write(text)
    elif out_file.endswith(".parquet"):
        n = len(found[0]) if found else 0
        write_arrays(Path(out_file), np.array(found, np.uint8).reshape(len(found), n))
    else:
        write_bytes_atomic(Path(out_file), text.encode())
    err.print(f"{len(found)} Costas arrays{' (all members of each class)' if expand else ''}, each verified")


@cli.command()
@click.argument("problem")
@click.argument("n", type=int)
@click.option("--run-dir", type=click.Path(file_okay=False), default=None, help="Keep the run here (default: a temporary directory).")
@click.option("--partitions", "-P", type=int, default=None,
              help="Partitions (default: one per worker, fewer when the pool has fewer states).")
@click.option("--workers", "-w", type=click.IntRange(min=1), default=1, show_default=True)
@task_options
@pool_options
def enumerate(problem: str, n: int, run_dir: str | None, partitions: int | None, workers: int, device: str | None,
              kernel: str | None, count_nodes: bool, chunk_seconds: float, target_states: int | None, seed: int,
              symmetry: str | None, balance: str) -> None:
    """pool + run + collect of PROBLEM N on this machine; prints the total and checks it."""
    import time

    from permenum.poolgen.write import PoolSettings, write_pool

    t0 = time.perf_counter()
    options = _task_options(device, kernel, count_nodes, chunk_seconds)
    tmp = None if run_dir else tempfile.mkdtemp(prefix=f"permenum-{problem}-{n}-")
    run = run_dir or str(Path(tmp) / "run")  # type: ignore[arg-type]
    try:
        from concurrent.futures import ThreadPoolExecutor

        from permenum.solver.opencl import open_devices

        setup = ThreadPoolExecutor(1, thread_name_prefix="devices")
        devices = setup.submit(open_devices, device)  # while the pool is built; an unknown device fails before the run
        setup.shutdown(wait=False)
        # a coarse pool (the pool's default target): each task refines its chunks to its device's grain
        # (jobs.refine); one partition per worker: a partition pays its setup (verify, kernel builds) and
        # on a GPU ends in a launch tail, and chunks, not partitions, bound what a Ctrl-C loses
        settings = PoolSettings(problem, n, partitions, target_states, seed=seed, symmetry=symmetry, balance=balance,
                                auto_partitions=workers)
        settings.validate()
        if kernel:  # before the pool is built: an unknown kernel would fail every partition after it
            from permenum.solver.registry import check_kernel

            check_kernel(problem, kernel, settings.resolved_symmetry)
        write_pool(_layout(run), settings)
        devices.result()
        rc = _run_local(run, workers, options)
        if rc == 0:
            rc = _print_collect(run, show_ledger=tmp is None)  # a temporary run is deleted below
        out.print(f"whole command: {time.perf_counter() - t0:.2f} s")
        sys.exit(rc)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


from permenum.cli_slurm import register  # noqa: E402  (submit, status, resubmit, cluster)

register(cli)

from permenum.cli_report import register as _register_report  # noqa: E402  (report)

_register_report(cli)

from permenum.cli_estimate import register as _register_estimate  # noqa: E402  (estimate)

_register_estimate(cli)

from permenum.cli_search import register as _register_search  # noqa: E402  (search, search-task)

_register_search(cli)

from permenum.cli_verify import register as _register_verify  # noqa: E402  (verify)

_register_verify(cli)


def main() -> None:
    from permenum.jobs.environment import StopRequest

    stop = StopRequest(lambda line: err.print(line))
    if len(sys.argv) > 1 and sys.argv[1] in ("task", "search-task"):
        stop.install(release=True)  # before click parses: a signal while the task starts asks it to stop
    try:
        cli.main(standalone_mode=False, obj=stop)
    except UserError as exc:
        err.print(f"error: {exc}", soft_wrap=True, markup=False)
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except OSError as exc:  # disk full, read-only, permissions: what the system said, on one line
        where = f": {exc.filename}" if exc.filename else ""
        err.print(f"error: {exc.strerror or exc}{where}", soft_wrap=True, markup=False)
        sys.exit(EXIT_OS)


if __name__ == "__main__":
    main()  # `python -m permenum.cli`; the installed command (and `python -m permenum`) enters through permenum.launch
