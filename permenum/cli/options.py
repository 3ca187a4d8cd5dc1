"""Click options shared by several commands, and the renamed spellings they still accept.

Naming rule: in an option's name, "partition" is always a SLURM partition (a queue), as in sbatch's
``--partition``; the pool's pieces, called partitions in the files and the output, are picked with
``--shard``/``--shards``. The old spellings (``task --partition I``, ``pool --partitions P``,
``verify --partitions LIST``, ``pool --n N``) still work for one release and print a note.

Choices are listed here rather than read from the registries so that `permenum --help` does not import
numpy and the kernels; tests/test_cli_shape.py checks them against the registries.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from permenum.cli.common import err
from permenum.errors import UserError
from permenum.task_options import DEFAULT_CHUNK_SECONDS

F = TypeVar("F", bound=Callable[..., Any])

#: The problems (permenum.problems.PROBLEMS), their symmetry modes and kernels (solver.registry.KERNELS).
PROBLEMS = ("nqueens", "costas")
SYMMETRIES = {"nqueens": ("edges", "dihedral", "mirror", "none"), "costas": ("canonical", "none")}
KERNELS = {"nqueens": ("skip", "skip-soa", "skip-all", "dfs", "dsl"), "costas": ("fc", "dfs")}

PROBLEM = click.Choice(PROBLEMS)
SYMMETRY = click.Choice(sorted({m for modes in SYMMETRIES.values() for m in modes}))
KERNEL = click.Choice(sorted({k for ks in KERNELS.values() for k in ks}))
SYMMETRY_HELP = ("Symmetry reduction: nqueens edges (default), dihedral, mirror or none; costas canonical (default) "
                 "or none.")
KERNEL_HELP = ("Kernel variant: nqueens skip (default on a GPU), skip-soa (default on a CPU), skip-all, dfs, dsl; "
               "costas fc (default), dfs.")
WORKERS_HELP = ("Workers: each counts one partition at a time on its devices (default: one worker per device group, "
                "every GPU used once).")
DEVICE_HELP = "gpu | cpu | accelerator | all | PLATFORM:DEVICE[/K] (default: the GPUs, else a CPU)."


def in_existing_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file the user names for output (``--plot``, ``--out``) goes into a folder that exists: a mistyped
    one is refused in one line before any work, not made (atomic.write_atomic makes a run's own folders)."""
    if value is not None and not Path(value).parent.is_dir():
        raise UserError(f"{param.opts[0]} {value}: the folder {Path(value).parent} does not exist")
    return value


class Renaming(click.Command):
    """A command that still takes the old spelling of a renamed option (``renamed`` old -> new) and says so
    once on stderr. Tokens that are values of an option (``--sbatch-arg --partition=x``) are left alone."""

    def __init__(self, *args: Any, renamed: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.renamed = renamed or {}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {o for p in self.params if isinstance(p, click.Option) and not p.is_flag and not p.count
                       for o in p.opts}
        rewritten: list[str] = []
        skip = False
        for i, token in enumerate(args):
            if token == "--":
                rewritten += args[i:]
                break
            name, eq, value = token.partition("=")
            if not skip and name in self.renamed:
                new = self.renamed[name]
                err.print(f"note: {name} is now {new} ({name} will go in a later release)", markup=False)
                token = new + eq + value
                name = new
            rewritten.append(token)
            skip = not skip and not eq and name in takes_value
        return super().parse_args(ctx, rewritten)


def size_argument(f: F) -> F:
    """N, the board size or array order, as the second argument; ``--n N`` is its old spelling."""
    f = click.option("--n", "n_option", type=int, default=None, hidden=True)(f)
    return click.argument("n", type=int, required=False)(f)


def resolve_size(n: int | None, n_option: int | None) -> int:
    """The size given as the argument or (old spelling, with a note) as --n."""
    if n_option is not None:
        if n is not None:
            raise UserError(f"the size is given twice ({n} and --n {n_option}): give it once, as the argument")
        err.print("note: --n N is now the argument N (`permenum pool nqueens 17 ...`); --n will go in a later release",
                  markup=False)
        return n_option
    if n is None:
        raise click.UsageError("Missing argument 'N' (the board size or array order).")
    return n


def task_options(f: F, kernel_help: str = KERNEL_HELP) -> F:
    """The options of `permenum task`, shared by every command that runs tasks (`run`, `enumerate`, `submit`,
    `verify` with its own words for --kernel)."""
    f = click.option("--chunk-seconds", type=float, default=DEFAULT_CHUNK_SECONDS, show_default=True,
                     help="Bound on one kernel launch in seconds; a checkpoint is written after each.")(f)
    f = click.option("--count-nodes", is_flag=True, help="Also count the search nodes visited (a slower build).")(f)
    f = click.option("--kernel", "-k", type=KERNEL, default=None, help=kernel_help)(f)
    f = click.option("--device", "-d", default=None, help=DEVICE_HELP)(f)
    return f


def pool_options(f: F) -> F:
    """How `pool` and `enumerate` build a pool, besides the size and the number of shards."""
    from permenum.poolgen.sizes import DEFAULT_TARGET, STATES_PER_PARTITION

    f = click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of the shuffle that deals states to partitions (same seed, same pool).")(f)
    f = click.option("--target-states", "-S", type=int, default=None,
                     help=f"Soft target pool size in states (default: the larger of {DEFAULT_TARGET:,} and "
                          f"{STATES_PER_PARTITION:,} a partition).")(f)
    f = click.option("--symmetry", type=SYMMETRY, default=None, help=SYMMETRY_HELP)(f)
    f = click.option("--balance", type=click.Choice(["cost", "rows"]), default="cost", show_default=True,
                     help="Partitions of equal estimated cost (Knuth probes) or of equal row count.")(f)
    return f


def shards_option(what: str) -> Callable[[F], F]:
    """``--shards LIST``: the partitions a command is limited to (a site's share of a campaign)."""
    return click.option("--shards", "shards", default=None, metavar="LIST",
                        help=f"{what}: a list of partitions, e.g. 0-49 or 3,7,12-14 (a site's share of the pool), or all.")


def sbatch_options(f: F, prefix: str = "") -> F:
    """What a command that submits an array passes to sbatch (``prefix``: "With --submit: ")."""
    f = click.option("--sbatch-arg", "sbatch_args", multiple=True, metavar="OPTION",
                     help=f"{prefix}Extra sbatch option, repeatable: --sbatch-arg=--mem=4G.")(f)
    f = click.option("--account", "-A", default=None, help=f"{prefix}SLURM account to charge (sbatch --account).")(f)
    f = click.option("--partition", "-p", "slurm_partition", default=None,
                     help=f"{prefix}SLURM partition (queue) to submit to (sbatch --partition).")(f)
    f = click.option("--time", "-t", "time_limit", default=None,
                     help=f"{prefix}Time limit per task, e.g. 01:30:00 (sbatch --time).")(f)
    f = click.option("--gpus-per-task", "-G", type=int, default=None,
                     help=f"{prefix}GPUs per task (sbatch --gres=gpu:G).")(f)
    f = click.option("--throttle", "-T", type=int, default=None,
                     help=f"{prefix}At most T array tasks at once (sbatch --array=...%T).")(f)
    return f
