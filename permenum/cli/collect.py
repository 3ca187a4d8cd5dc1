"""`permenum collect RUN` (the total, checked, and the ledger) and `permenum arrays RUN` (a Costas run's arrays)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from permenum.cli.common import err, existing_run
from permenum.cli.options import in_existing_folder
from permenum.cli.runner import print_collect, print_search_status


@click.command(name="collect", short_help="Total a run, check it, write its ledger.")
@click.argument("run", type=click.Path(file_okay=False))
def collect_cmd(run: str) -> None:
    """Rebuild RUN's ledger from its result files and check the total against the published count.

    Exits 0 for a complete run whose total is trusted; 1 for an unfinished run (it prints "partial: X from
    6/8 partitions" and writes ledger.partial.parquet), a mismatch or a disagreeing verification; 2 when
    RUN is not a run directory or a result is damaged; 74 when the ledger cannot be written (a read-only or
    full run directory: the totals print, the ledger does not). For a search run: which task found, after
    how long.
    """
    where = existing_run(run)
    if where.search_plan.exists():
        sys.exit(print_search_status(where))
    sys.exit(print_collect(where))


@click.command(short_help="List the Costas arrays of a finished run.")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--all", "expand", is_flag=True,
              help="Every member of every symmetry class (default: one line per class, its representative).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None, callback=in_existing_folder,
              help="Write to FILE (.parquet, else text: one array per line) instead of standard output.")
def arrays(run: str, expand: bool, out_file: str | None) -> None:
    """List the Costas arrays of a finished run (the row of each column, 0-based), each one verified."""
    import numpy as np

    from permenum.atomic import write_bytes_atomic
    from permenum.jobs.counting.solutions import collected_arrays, write_arrays

    found = collected_arrays(existing_run(run), expand)
    text = "".join(" ".join(map(str, a)) + "\n" for a in found)
    if out_file is None:
        sys.stdout.write(text)
    elif out_file.endswith(".parquet"):
        n = len(found[0]) if found else 0
        write_arrays(Path(out_file), np.array(found, np.uint8).reshape(len(found), n))
    else:
        write_bytes_atomic(Path(out_file), text.encode())
    err.print(f"{len(found)} Costas arrays{' (all members of each class)' if expand else ''}, each verified")
