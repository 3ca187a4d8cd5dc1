"""Click options shared by the command modules (cli.py and cli_slurm.py).

Here, not in cli.py, because cli.py imports cli_slurm to register its commands: cli_slurm importing
cli.py back would be a cycle (and under ``python -m permenum.cli`` a second copy of cli.py).
"""

from __future__ import annotations

import click

from permenum.task_options import DEFAULT_CHUNK_SECONDS


KERNEL_HELP = ("Kernel variant (default: nqueens skip on a GPU, skip-soa on a CPU; costas fc on a GPU, dfs on a CPU; "
               "README \"Kernels\").")


def task_options(f, kernel_help: str = KERNEL_HELP):  # type: ignore[no-untyped-def]
    """The options of `permenum task`, shared by every command that runs tasks (`run`, `enumerate`, `submit`,
    `verify` with its own words for --kernel)."""
    f = click.option("--chunk-seconds", type=float, default=DEFAULT_CHUNK_SECONDS, show_default=True,
                     help="Bound on one kernel launch; a checkpoint is written after each.")(f)
    f = click.option("--count-nodes", is_flag=True, help="Use the node-counting build (slower).")(f)
    f = click.option("--kernel", "-k", default=None, help=kernel_help)(f)
    f = click.option("--device", "-d", default=None, help="gpu | cpu | accelerator | all | PLATFORM:DEVICE[/K]")(f)
    return f
