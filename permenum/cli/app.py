"""The `permenum` group: every command added once, and main(), which turns every error into one line.

The top of the command layer: it imports each command's module (permenum/cli/<command>.py), which import
runner, options and common below them, never each other's.
"""

from __future__ import annotations

import re
import sys

import click

from permenum.cli.cluster import cluster
from permenum.cli.collect import arrays, collect_cmd
from permenum.cli.common import EXIT_OS, EXIT_USAGE, err
from permenum.cli.enumerate import enumerate
from permenum.cli.estimate import estimate
from permenum.cli.pool import pool
from permenum.cli.report import report
from permenum.cli.run import run_cmd
from permenum.cli.search import search, search_task
from permenum.cli.sites import merge, same_pool
from permenum.cli.status import status
from permenum.cli.submit import resubmit, submit
from permenum.cli.task import task
from permenum.cli.verify import verify
from permenum.errors import UserError, one_line

#: In the order a run meets them: `permenum --help` lists them so.
COMMANDS = (pool, same_pool, run_cmd, enumerate, task, submit, status, resubmit, merge, collect_cmd, verify, report,
            arrays, estimate, search, search_task, cluster)


class InOrder(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [c.name for c in COMMANDS if c.name]


@click.group(cls=InOrder, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="permenum")
def cli() -> None:
    """Exact, distributed enumeration of N-Queens solutions and Costas arrays.

    A run is a directory: `pool` writes its partitions, `run` (here) or `submit` (SLURM) counts them,
    `collect` totals and checks them.
    """


for _command in COMMANDS:
    cli.add_command(_command)


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
