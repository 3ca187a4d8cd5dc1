"""The `permenum` command's first instant: a task holds its stop signals back until its handler is in place.

SLURM may send ``--signal``'s USR1 within a second of starting an array element (seen: 0.3 s after a
requeued element was started by backfill; SLURM sends it up to a minute early), while `permenum.cli`
and its libraries still import (0.4-0.7 s); USR1's default action would end the task without a
checkpoint. Held back, the signal is delivered once `permenum.cli.app.main` has installed the handler.
Before this process runs at all, the array script ignores USR1 (`trap '' USR1`, inherited across
exec): one that came while bash or the interpreter started killed an element here under load.

The command's process then finds no pandas (permenum.without_pandas).
"""

from __future__ import annotations

import sys

from permenum.signals import hold_stop_signals


def main() -> None:
    if sys.argv[1:2] == ["task"]:
        hold_stop_signals()
    from permenum.without_pandas import WithoutPandas

    sys.meta_path.insert(0, WithoutPandas())
    from permenum.cli.app import main as cli_main

    cli_main()
