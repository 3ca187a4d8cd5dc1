"""`permenum same-pool RUN OTHER` and `permenum merge RUN OTHER...`: one pool counted at several sites."""

from __future__ import annotations

import shlex
import sys

import click

from permenum.cli.common import EXIT_INCOMPLETE, err, existing_run, other_manifest, out, ranges
from permenum.errors import printable

#: Refused imports named one line each, up to this many (the rest counted).
SHOWN_REFUSALS = 5


@click.command(name="same-pool", short_help="Check that another copy holds this very pool.")
@click.argument("run", type=click.Path(file_okay=False))
@click.argument("other", type=click.Path())
def same_pool(run: str, other: str) -> None:
    """Say "same pool" when OTHER (another site's run directory, or its manifest.json) holds RUN's very pool
    and run, every partition file of RUN matching its sha256; else name the first difference and exit 1."""
    from permenum.poolgen.write import read_partition
    from permenum.records import load_manifest

    layout = existing_run(run)
    mine, theirs = load_manifest(layout), other_manifest(other)
    for entry in mine.partitions:
        read_partition(layout, entry)  # a damaged or missing file here is one line, exit 2
    difference = mine.first_difference(theirs)
    if difference is not None:
        err.print(f"not the same pool: {printable(difference)}", markup=False)
        sys.exit(EXIT_INCOMPLETE)
    if mine.run_id != theirs.run_id:
        err.print(f"the same pool, but two runs ({mine.run_id} here, {theirs.run_id} there): their results cannot be "
                  "merged; build this copy with `permenum pool ... --same-as OTHER` in an empty directory, or copy "
                  "the other run directory", markup=False)
        sys.exit(EXIT_INCOMPLETE)
    out.print(f"same pool: run {mine.run_id}, {mine.problem} n={mine.n}, {mine.num_partitions} partitions, pool "
              f"sha256 {mine.pool_sha256[:16]}...; every partition file here matches", markup=False)


@click.command(short_help="Import the results another copy of the run counted.")
@click.argument("run", type=click.Path(file_okay=False))
@click.argument("others", nargs=-1, required=True, type=click.Path(file_okay=False))
def merge(run: str, others: tuple[str, ...]) -> None:
    """Import into RUN the results (Costas: and solution files) and verifications of OTHERS, copies of the same
    run counted at other sites and copied here (rsync, scp). Each result is checked (its seal, its run, its
    partition's sha256, its solutions) before it lands; a partition with a result here keeps it, and one
    with other numbers is refused in one line. Importing twice changes nothing. Exits 1 when anything was
    refused."""
    from permenum.jobs.ledger.merge import merge as merge_copy

    layout = existing_run(run)
    refused_any = False
    for other in others:
        merged = merge_copy(layout, existing_run(other))
        parts = [f"imported {len(merged.imported)} results" + (f" ({ranges(merged.imported)})" if merged.imported else ""),
                 f"{len(merged.already)} here already"]
        if merged.counting_here:
            parts.append(f"{ranges(merged.counting_here)} left to the task counting them here")
        for name, recounts in merged.verifications.items():
            if recounts:
                parts.append(f"verification {printable(name)}: {len(recounts)} re-counts imported")
        out.print(f"{other}: " + "; ".join(parts), markup=False)
        _print_refusals("refused", {str(p): why for p, why in sorted(merged.refused.items())},
                        ranges(sorted(merged.refused)[SHOWN_REFUSALS:]))
        names = sorted(merged.refused_verifications)
        _print_refusals("refused verification", {k: merged.refused_verifications[k] for k in names},
                        printable("; ".join(names[SHOWN_REFUSALS:])))
        refused_any = refused_any or bool(merged.refused) or bool(merged.refused_verifications)
    out.print(f"next: `permenum collect {shlex.quote(run)}` totals every site's results", markup=False)
    if refused_any:
        sys.exit(EXIT_INCOMPLETE)


def _print_refusals(what: str, refused: dict[str, str], rest: str) -> None:
    """One line each, up to SHOWN_REFUSALS (names and reasons may quote the other copy: printable); then one
    naming the ``rest``."""
    for name, why in list(refused.items())[:SHOWN_REFUSALS]:
        err.print(f"{what} {printable(name)}: {printable(why)}", markup=False)
    if len(refused) > SHOWN_REFUSALS:
        err.print(f"{what}: {len(refused) - SHOWN_REFUSALS} more ({rest})", markup=False)
