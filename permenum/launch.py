"""The `permenum` command's first instant: a task holds its stop signals back until its handler is in place.

SLURM may send ``--signal``'s USR1 within a second of starting an array element (seen: 0.3 s after a
requeued element was started by backfill), while `permenum.cli` and its libraries still import
(0.4-0.7 s); USR1's default action would end the task without a checkpoint. Held back, the signal
is delivered once `permenum.cli.main` has installed the handler.

The command never uses pandas, but where it is installed pyarrow imports it on the first array it
makes, only to ask whether its input is a DataFrame: 0.3 s of every command (here and on an H100
node, pandas 3), a sixth of `enumerate nqueens 16`'s overhead on PoCL. The command's process finds no
pandas (pyarrow then skips the question); a library user's process is left as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

from permenum.signals import hold_stop_signals


class _WithoutPandas(MetaPathFinder):
    """Imports of pandas fail as where it is not installed (pyarrow's optional import expects that)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname.partition(".")[0] == "pandas":
            raise ModuleNotFoundError(f"No module named {fullname!r} (not used by the permenum command)", name=fullname)
        return None


def main() -> None:
    if sys.argv[1:2] == ["task"]:
        hold_stop_signals()
    sys.meta_path.insert(0, _WithoutPandas())
    from permenum.cli import main as cli_main

    cli_main()
