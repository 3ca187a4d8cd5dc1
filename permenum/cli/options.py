"""Click options shared by several commands, the table of every option's name, and the renamed spellings the
commands still accept.

One name for each thing (the reasons are in docs/DEVELOPMENT.md, "Names"): the run directory is the
argument RUN of every command; a pool is cut into ``--num-partitions`` partitions; ``--only LIST`` limits a
command to some of them; ``-i/--index`` is the one partition (or search task) a process executes. SLURM's
names keep SLURM's meaning: ``-p/--partition`` is a SLURM partition (a queue), ``-t/--time``, ``-A/--account``,
``-G/--gpus-per-task``. Spellings of earlier releases still work and print a one-line note (RENAMED).

Choices are listed here rather than read from the registries so that `permenum --help` does not import
numpy and the kernels; tests/test_cli_shape.py checks them against the registries, and every command's
options against NAMES.
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
SYMMETRIES = {"nqueens": ("edges", "dihedral", "mirror", "none"), "costas": ("canonical", "centre", "none")}
KERNELS = {"nqueens": ("skip", "skip-soa", "skip-all", "dfs", "dsl"), "costas": ("fc", "dfs", "cf", "mid")}

PROBLEM = click.Choice(PROBLEMS)
SYMMETRY = click.Choice(sorted({m for modes in SYMMETRIES.values() for m in modes}))
KERNEL = click.Choice(sorted({k for ks in KERNELS.values() for k in ks}))
SYMMETRY_HELP = ("Symmetry reduction: nqueens edges (default), dihedral, mirror or none; costas canonical (default), "
                 "centre (the cf kernel's centre-first search) or none.")
KERNEL_HELP = ("Kernel variant: nqueens skip (default on a GPU), skip-soa (default on a CPU), skip-all, dfs, dsl; "
               "costas fc (default), dfs, cf (centre-first: pools of symmetry centre, its default there), mid (centre pools' "
               "plain search, for verify).")
WORKERS_HELP = ("Workers: each counts one partition at a time on its devices (default: one worker per device group, "
                "every GPU used once).")
DEVICE_HELP = "gpu | cpu | accelerator | all | PLATFORM:DEVICE[/K] (default: the GPUs, else a CPU)."


def in_existing_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file the user names for output (``--plot``, ``--out``) goes into a folder that exists: a mistyped
    one is refused in one line before any work, not made (atomic.write_atomic makes a run's own folders)."""
    if value is not None and not Path(value).parent.is_dir():
        raise UserError(f"{param.opts[0]} {value}: the folder {Path(value).parent} does not exist")
    return value


#: Every option of every command: its long name, its short flag (or None), and the one thing it means in every
#: command that has it. tests/test_cli_shape.py walks each command against this table; no two short flags
#: differ by case only (``-p``, the SLURM queue, once had a ``-P``, the number of partitions).
NAMES: dict[str, tuple[str | None, str]] = {
    # the run's partitions
    "--num-partitions": (None, "how many partitions to cut the pool into"),
    "--only": (None, "the partitions the command is limited to, a list (0-49, 3,7,12-14, all)"),
    "--index": ("-i", "the one partition (task) or search task (search-task) to execute: its array task index"),
    # SLURM's own names, in SLURM's meaning, passed to sbatch
    "--partition": ("-p", "SLURM partition (queue): sbatch --partition"),
    "--time": ("-t", "time limit per array task: sbatch --time"),
    "--account": ("-A", "SLURM account: sbatch --account"),
    "--gpus-per-task": ("-G", "GPUs per array task: sbatch --gres=gpu:G"),
    "--throttle": (None, "array tasks at once: sbatch --array=...%T"),
    "--sbatch-arg": (None, "an extra sbatch option"),
    "--signal-seconds": (None, "seconds before the time limit of sbatch --signal=B:USR1@S"),
    "--submit": (None, "run as a SLURM array instead of here"),
    "--dry-run": (None, "say what would be submitted; submit nothing"),
    "--include-missing": (None, "resubmit partitions that never ran too"),
    # devices and counting
    "--device": ("-d", "the OpenCL device(s) to count on"),
    "--kernel": ("-k", "the kernel variant that counts"),
    "--workers": ("-w", "workers, each counting one partition at a time (processes here; array tasks with submit)"),
    "--count-nodes": (None, "also count the search nodes visited"),
    "--chunk-seconds": (None, "bound on one kernel launch, a checkpoint after each"),
    "--max-seconds": (None, "stop once this attempt has run this long"),
    "--force": (None, "do what would be refused as done or in flight"),
    # the pool
    "--target-states": ("-S", "soft target pool size in states"),
    "--symmetry": (None, "symmetry reduction mode"),
    "--balance": (None, "balance partitions by cost or by rows"),
    "--seed": (None, "seed of the command's randomness (pool shuffle, sample, walks)"),
    "--same-as": (None, "another copy's run or manifest whose pool to build"),
    # verify
    "--sample": (None, "fraction of the partitions to re-count"),
    "--id": (None, "the verification to go on with"),
    "--counted-at": (None, "the site whose partitions to sample"),
    "--reflect": (None, "re-count each partition's mirror image"),
    "--check": (None, "compare verifications, count nothing"),
    # search
    "--walks": (None, "walks per search task"),
    "--tasks": (None, "how many search tasks"),
    # estimate
    "--gpus": (None, "GPUs in all, the wall time is given on that many (SLURM's --gpus: a job's total)"),
    "--sample-seconds": (None, "kernel seconds of the timed sample"),
    "--max-fraction": (None, "largest share of the work the sample counts"),
    "--project": (None, "project the sizes above N"),
    "--no-project": (None, "do not project the sizes above N"),
    # output
    "--json": (None, "print JSON"),
    "--out": (None, "a file to write the command's output to"),
    "--plot": (None, "a PNG file to draw"),
    "--by-model": (None, "throughput per device model"),
    "--all": (None, "every member of every symmetry class"),
    # cluster
    "--state-dir": (None, "the private cluster's state directory"),
    "--cpus": (None, "CPUs the private cluster's node offers"),
    "--max-array-size": (None, "the private cluster's MaxArraySize"),
    "--node-gpus": (None, "whether the private cluster's node offers its GPUs as gres/gpu"),
    "--gpu-confinement": (None, "how the private cluster confines a job to its GPUs"),
    "--prefix": (None, "where SLURM and munge were unpacked (dpkg -x)"),
}


class Argument(click.Argument):
    """An argument that an old option (``pool --out RUN``, ``--n N``) may give instead: click takes it as
    optional, its usage shows it as required (``PROBLEM N RUN``), and Renaming refuses its absence."""

    def __init__(self, param_decls: list[str], required: bool = True, **kwargs: Any) -> None:
        self.needed = required
        kwargs.setdefault("metavar", param_decls[0].upper() if required else f"[{param_decls[0].upper()}]")
        super().__init__(param_decls, required=False, **kwargs)


class Renaming(click.Command):
    """A command that still takes the old spellings of renamed options (``renamed`` old -> new: an option, or
    an argument's name in capitals, RUN, N) and says so once on stderr. Tokens that are values of an option
    (``--sbatch-arg --partition=x``) are left alone."""

    def __init__(self, *args: Any, renamed: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.renamed = renamed or {}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {o for p in self.params if isinstance(p, click.Option) and not p.is_flag and not p.count
                       for o in p.opts}
        arguments = [p for p in self.params if isinstance(p, click.Argument)]
        names = [(p.metavar or p.name or "").upper().strip("[]") for p in arguments]  # RUN, N
        rewritten: list[str] = []  # the tokens, renamed, in their order
        options: list[str] = []
        positional: list[str] = []
        moved: dict[int, tuple[str, str]] = {}  # argument index -> (old option, value)
        given = iter(enumerate(args))
        for i, token in given:
            if token == "--":
                positional += args[i + 1:]
                rewritten += args[i:]
                break
            name, eq, value = token.partition("=")
            if name in self.renamed:
                new = self.renamed[name]
                if new in names:  # an option that became an argument: its value goes to the argument's place
                    err.print(f"note: {name} {new} is now the argument {new} ({name} will go in a later release)",
                              markup=False)
                    if not eq:
                        value = next(given, (i, ""))[1]
                    moved[names.index(new)] = (name, value)
                    continue
                err.print(f"note: {name} is now {new} ({name} will go in a later release)", markup=False)
                token, name = new + eq + value, new
            if name.startswith("-") and len(name) > 1:
                options.append(token)
                rewritten.append(token)
                if not eq and name in takes_value and i + 1 < len(args):
                    options.append(next(given)[1])
                    rewritten.append(options[-1])
            else:
                positional.append(token)
                rewritten.append(token)
        if not moved:
            return super().parse_args(ctx, rewritten)
        if len(positional) + len(moved) > len(arguments):
            index, (old, value) = min(moved.items())
            raise UserError(f"{names[index]} is given twice (as the argument and as {old} {value}): give it once, as "
                            "the argument")
        for index, (_, value) in sorted(moved.items()):
            positional.insert(index, value)
        return super().parse_args(ctx, options + ["--", *positional])

    def invoke(self, ctx: click.Context) -> Any:
        for p in self.params:
            if isinstance(p, Argument) and p.needed and ctx.params.get(p.name or "") is None:
                raise click.MissingParameter(ctx=ctx, param=p)
        return super().invoke(ctx)


def size_argument(f: F) -> F:
    """N, the board size or array order, as the second argument (``--n N`` its old spelling: Renaming)."""
    return click.argument("n", type=int, cls=Argument)(f)


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
    """How `pool` and `enumerate` build a pool, besides the size and the number of partitions."""
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


def only_option(what: str) -> Callable[[F], F]:
    """``--only LIST``: the partitions a command is limited to (a site's share of a campaign)."""
    return click.option("--only", "only", default=None, metavar="LIST",
                        help=f"{what}: a list of partitions, e.g. 0-49 or 3,7,12-14 (a site's share of the pool), or all.")


def num_partitions_option(help: str, default: int | None) -> Callable[[F], F]:
    """``--num-partitions COUNT``: how many partitions `pool` or `enumerate` cuts the pool into."""
    return click.option("--num-partitions", "partitions", type=int, default=default,
                        show_default=default is not None, metavar="COUNT", help=help)


def index_option(help: str, type: click.ParamType, required: bool = True) -> Callable[[F], F]:
    """``-i/--index I``: the one partition (`task`) or search task (`search-task`) a process executes, as SLURM's
    array task index gives it."""
    return click.option("--index", "-i", "index", type=type, required=required, metavar="I", help=help)


#: The old spellings of the partitions' options: a pool's count (pool, enumerate), a selection (the others).
COUNT_RENAMED = {"--shards": "--num-partitions", "-P": "--num-partitions", "--partitions": "--num-partitions"}
ONLY_RENAMED = {"--shards": "--only", "--partitions": "--only"}
#: ``-T`` was --throttle's short flag: it differed from ``-t`` (--time) by case only.
SBATCH_RENAMED = {"-T": "--throttle"}


def sbatch_options(f: F, prefix: str = "") -> F:
    """What a command that submits an array passes to sbatch (``prefix``: "With --submit: ")."""
    f = click.option("--sbatch-arg", "sbatch_args", multiple=True, metavar="OPTION",
                     help=f"{prefix}Extra sbatch option, repeatable: --sbatch-arg=--mem=4G.")(f)
    f = click.option("--account", "-A", default=None, help=f"{prefix}SLURM account to charge (sbatch --account).")(f)
    f = click.option("--partition", "-p", "slurm_partition", default=None,
                     help=f"{prefix}SLURM partition (queue) to submit to (sbatch --partition).")(f)
    f = click.option("--time", "-t", "time_limit", default=None,
                     help=f"{prefix}Time limit per task, e.g. 01:30:00 (sbatch --time).")(f)
    f = click.option("--gpus-per-task", "-G", type=int, default=None, metavar="G",
                     help=f"{prefix}GPUs per task (sbatch --gres=gpu:G).")(f)
    f = click.option("--throttle", type=int, default=None, metavar="T",
                     help=f"{prefix}At most T array tasks at once (sbatch --array=...%T).")(f)
    return f
