"""`permenum cluster up|down|status`: a private single-node SLURM cluster on this machine, for tests and demos."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from permenum.cli.common import err, out, slurm_errors

if TYPE_CHECKING:
    from permenum.slurm.cluster import Gpus

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
@click.option("--node-gpus", "gpus", type=click.Choice(["auto", "none"]), default="auto", show_default=True,
              help="Declare the node's GPUs (/dev/nvidiaN, or nvidia-smi -L) as gres/gpu, or none.")
@click.option("--gpu-confinement", type=click.Choice(["auto", "cgroup", "none"]), default="auto", show_default=True,
              help="Confine each job to its GPUs with cgroup v2 (auto: where cgroup v2 is usable); "
                   "without it a job still sees every GPU and SLURM's CUDA_VISIBLE_DEVICES says which are its.")
@click.option("--prefix", type=click.Path(file_okay=False, exists=True), default=None, envvar="PERMENUM_SLURM_PREFIX",
              help="Run SLURM and munge from this folder, where Debian's packages were unpacked with dpkg -x "
                   "(default: $PERMENUM_SLURM_PREFIX, else the system's, installed if missing).")
def cluster_up(state_dir: str | None, cpus: int | None, max_array_size: int, gpus: str, gpu_confinement: str,
               prefix: str | None) -> None:
    """Start the daemons (installing slurm-wlm and munge if missing) and print the SLURM_CONF to export."""
    from permenum.slurm import cluster as c

    install = c.Install(Path(prefix).absolute() if prefix else None)
    confine = {"auto": None, "cgroup": True, "none": False}[gpu_confinement]
    with slurm_errors():
        c.ensure_installed(install)
        node_gpus = c.Gpus() if gpus == "none" else c.detect_gpus(confine)
        info = c.up(_state_dir(state_dir), cpus, max_array_size, node_gpus, install)
    err.print(f"cluster up in {info.state_dir}; {_gpus_line(c.configured_gpus(info.state_dir))}; "
              "point SLURM's commands at it with:", markup=False)
    exports = {k: v for k, v in info.env.items() if k != "SLURM_CONF"}
    out.print(f"export SLURM_CONF={shlex.quote(str(info.conf_path))}"
              + "".join(f" {k}={shlex.quote(v)}" for k, v in sorted(exports.items())), markup=False)


def _gpus_line(gpus: "Gpus") -> str:
    if not gpus.files:
        return "no GPUs declared"
    how = "confined by cgroups" if gpus.confine else "not confined: CUDA_VISIBLE_DEVICES says a job's"
    return f"GPUs gres/gpu:{len(gpus.files)} ({', '.join(gpus.files)}; {how})"


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
    out.print(_gpus_line(cast("Gpus", st["gpus"])), markup=False)
    if st["sinfo"]:
        out.print(str(st["sinfo"]).rstrip(), markup=False)
    if all(alive.values()):
        err.print("(`permenum cluster up` is idempotent: run it again to print the SLURM_CONF line)", markup=False)
