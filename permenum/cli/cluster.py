"""`permenum cluster up|down|status`: a private single-node SLURM cluster on this machine, for tests and demos."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import cast

import click

from permenum.cli.common import err, out, slurm_errors

#: `permenum cluster` keeps its daemons' state here unless --state-dir or $PERMENUM_CLUSTER_DIR says otherwise.
DEFAULT_CLUSTER_DIR = Path("~/.permenum/cluster")


def _state_dir(state_dir: str | None) -> Path:
    chosen = state_dir or os.environ.get("PERMENUM_CLUSTER_DIR") or str(DEFAULT_CLUSTER_DIR)
    return Path(chosen).expanduser().absolute()


_state_dir_option = click.option(
    "--state-dir", default=None, type=click.Path(file_okay=False),
    help=f"Where the cluster's config, logs and state live (default: $PERMENUM_CLUSTER_DIR or {DEFAULT_CLUSTER_DIR}).")


@click.group(short_help="A private single-node SLURM cluster (root).")
def cluster() -> None:
    """A private single-node SLURM cluster on this machine (munged, slurmctld, slurmd; needs root)."""


@cluster.command(name="up", short_help="Start the daemons; print the SLURM_CONF to export.")
@_state_dir_option
@click.option("--cpus", type=click.IntRange(min=1), default=None, help="CPUs the node offers (default: all of this machine's).")
@click.option("--max-array-size", type=click.IntRange(min=1), default=1001, show_default=True,
              help="SLURM's MaxArraySize (array indices must be below it).")
def cluster_up(state_dir: str | None, cpus: int | None, max_array_size: int) -> None:
    """Start the daemons (installing slurm-wlm and munge if missing) and print the SLURM_CONF to export."""
    from permenum.slurm import cluster as c

    with slurm_errors():
        c.ensure_installed()
        info = c.up(_state_dir(state_dir), cpus, max_array_size)
    err.print(f"cluster up in {info.state_dir}; point SLURM's commands at it with:", markup=False)
    out.print(f"export SLURM_CONF={shlex.quote(str(info.conf_path))}", markup=False)


@cluster.command(name="down", short_help="Stop the daemons this state dir started.")
@_state_dir_option
def cluster_down(state_dir: str | None) -> None:
    """Stop the daemons this state dir started (by their recorded pids; nothing else is touched)."""
    from permenum.slurm import cluster as c

    with slurm_errors():
        c.down(_state_dir(state_dir))
    out.print(f"cluster in {_state_dir(state_dir)} is down", markup=False)


@cluster.command(name="status")
@_state_dir_option
def cluster_status(state_dir: str | None) -> None:
    """Which daemons are alive, and sinfo's view."""
    from permenum.slurm import cluster as c

    st = c.status(_state_dir(state_dir))
    alive = cast(dict[str, bool], st["alive"])
    out.print(f"{st['state_dir']}: " + ", ".join(f"{d} {'up' if up else 'down'}" for d, up in alive.items()),
              markup=False)
    if st["sinfo"]:
        out.print(str(st["sinfo"]).rstrip(), markup=False)
    if all(alive.values()):
        err.print("(`permenum cluster up` is idempotent: run it again to print the SLURM_CONF line)", markup=False)
