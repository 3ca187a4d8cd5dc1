"""`permenum pool PROBLEM N RUN --num-partitions COUNT`: the state pool, as Parquet partitions and manifest.json."""

from __future__ import annotations

import click

from permenum.cli.common import layout, other_manifest, out
from permenum.cli.options import (COUNT_RENAMED, PROBLEM, Argument, Renaming, num_partitions_option, pool_options,
                                  size_argument)
from permenum.words import plural


@click.command(cls=Renaming, renamed={**COUNT_RENAMED, "--n": "N", "--out": "RUN"},
               short_help="Write the state pool of PROBLEM N.")
@click.argument("problem", type=PROBLEM)
@size_argument
@click.argument("run", type=click.Path(file_okay=False), cls=Argument)
@num_partitions_option("How many partitions to cut the pool into: one array task each.", default=1)
@pool_options
@click.option("--same-as", "same_as", type=click.Path(), default=None, metavar="OTHER",
              help="Another site's run directory or its manifest.json: build its very pool here (refused, naming the "
                   "first difference, if it is not), as a copy of that run.")
def pool(problem: str, n: int, run: str, partitions: int, target_states: int | None,
         seed: int, symmetry: str | None, balance: str, same_as: str | None) -> None:
    """Generate the state pool of PROBLEM (nqueens | costas) of size N and write it to the run directory RUN as
    Parquet partitions plus manifest.json. Writing the same pool again keeps the existing one."""
    from permenum.poolgen.write import PoolSettings, write_pool

    like = other_manifest(same_as) if same_as else None
    manifest, created = write_pool(layout(run), PoolSettings(problem, n, partitions, target_states, seed=seed,
                                                             symmetry=symmetry, balance=balance), like)
    g = manifest.generator
    if like is not None:
        out.print(f"same pool as {same_as}: run {manifest.run_id}, {plural(manifest.num_partitions, 'partition')}, every "
                  "partition's sha256 equal", markup=False)
    verb = "wrote" if created else "kept the identical existing"
    out.print(f"{verb} pool {manifest.run_id}: {manifest.problem} n={manifest.n}, {plural(manifest.total_states, 'state')} at "
              f"depth {g.locked_depth} ({g.stop_reason}), {plural(manifest.num_partitions, 'partition')} in {run}", markup=False)
    out.print(f"next: `permenum run {run}` here, or `permenum submit {run}` to a SLURM cluster", markup=False)
