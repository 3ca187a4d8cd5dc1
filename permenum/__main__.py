"""`python -m permenum`: the installed `permenum` command where no console script is (a GPU node's
PYTHONPATH install, bench/gpu_node.sh)."""

from permenum.launch import main

main()
