"""The `permenum` group: every command named once, and main(), which turns every error into one line.

The top of the command layer: each command's module (permenum/cli/<module>.py) is imported when that
command runs (or `--help` lists it), not at every start: importing them all was about 100 ms of each
command's start, a SLURM task's included (this module: 205-237 ms, now 112 ms, on a 2-core machine).
They import runner, options and common below them, never each other's.
"""

from __future__ import annotations

import importlib
import re
import sys

import click

from permenum.cli.common import EXIT_OS, EXIT_USAGE, err
from permenum.errors import UserError, one_line

#: Each command's name, the module of permenum/cli/ that defines it, and the function's name there; in the
#: order a run meets them: `permenum --help` lists them so.
COMMANDS: dict[str, tuple[str, str]] = {
    "pool": ("pool", "pool"), "same-pool": ("sites", "same_pool"), "run": ("run", "run_cmd"),
    "enumerate": ("enumerate", "enumerate"), "task": ("task", "task"), "submit": ("submit", "submit"),
    "status": ("status", "status"), "resubmit": ("submit", "resubmit"), "merge": ("sites", "merge"),
    "collect": ("collect", "collect_cmd"), "verify": ("verify", "verify"), "report": ("report", "report"),
    "arrays": ("collect", "arrays"), "estimate": ("estimate", "estimate"), "search": ("search", "search"),
    "search-task": ("search", "search_task"), "cluster": ("cluster", "cluster"),
}


class Commands(click.Group):
    """The commands of COMMANDS, each imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return super().get_command(ctx, name)  # one added with add_command, if any
        module, function = COMMANDS[name]
        command = getattr(importlib.import_module(f"permenum.cli.{module}"), function)
        assert isinstance(command, click.Command) and command.name == name, (name, command)
        return command


def all_commands() -> list[click.Command]:
    """Every command, imported (what a check of the whole command line reads)."""
    return [command for name in COMMANDS if (command := cli.get_command(click.Context(cli), name)) is not None]


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="permenum")
def cli() -> None:
    """Exact, distributed enumeration of N-Queens solutions and Costas arrays.

    A run is a directory: `pool` writes its partitions, `run` (here) or `submit` (SLURM) counts them,
    `collect` totals and checks them.
    """


def _usage_message(exc: click.UsageError) -> str:
    """click's message, but for a negative number where a size goes (`enumerate nqueens -3`): click reads it
    as an option and said "No such option: -3"."""
    if isinstance(exc, click.NoSuchOption) and re.fullmatch(r"-\d+", exc.option_name):
        return f"{exc.option_name} is not a size: N is a whole number from 1"
    return exc.format_message()


def main() -> None:
    from permenum.jobs.counting.environment import StopRequest

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
    except click.UsageError as exc:  # one line, like every other error, naming the help to read
        where = f" (`{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        err.print(f"error: {_usage_message(exc)}{where}", soft_wrap=True, markup=False)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        err.print(f"error: {exc.format_message()}", soft_wrap=True, markup=False)
        sys.exit(exc.exit_code)
    except OSError as exc:  # disk full, read-only, permissions: what the system said, on one line
        where = f": {exc.filename}" if exc.filename else ""
        err.print(f"error: {one_line(f'{exc.strerror or exc}{where}')}", soft_wrap=True, markup=False)
        sys.exit(EXIT_OS)
