"""`python -m permenum.cli`: the command without permenum.launch's early signal hold (tests, bench scripts)."""

from permenum.cli.app import main

main()
