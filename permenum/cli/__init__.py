"""The `permenum` command: one module per command (or command group) named after it.

Layers, each importing only those below it:

- ``app``: the group, every command named once (each imported when it runs), ``main()`` (every error one line);
- the commands: ``pool``, ``run``, ``enumerate``, ``task``, ``submit`` (submit, resubmit), ``status``,
  ``collect`` (collect, arrays), ``verify``, ``report``, ``estimate``, ``search`` (search, search-task),
  ``cluster``;
- ``runner``: what several commands do alike (run partitions here, print a collected run or a search);
- ``options``: the click options several commands share, and renamed spellings;
- ``common``: consoles, exit codes, the run directory, SLURM errors as one line.
"""

from __future__ import annotations


def main() -> None:
    """The command's entry (permenum.launch calls it); imported late so that ``permenum.cli.common`` and the
    others load without the whole group."""
    from permenum.cli.app import main as app_main

    app_main()
