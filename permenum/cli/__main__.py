"""`python -m permenum.cli`: the command without permenum.launch's early signal hold (bench/one_gpu.sh's CLI=1
timeline; the tests and users run `python -m permenum` or the `permenum` script)."""

from permenum.cli.app import main

main()
