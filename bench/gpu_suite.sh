#!/usr/bin/env bash
# The single-GPU measurements of the closing notes, in one call on a GPU node without network:
#   bash bench/gpu_suite.sh OUTDIR
# 1. N-Queens kernels (bench/kernels.py, one launch each, pools of 32+ states per lane as
#    `enumerate` builds them): N=18-20 with the default (skip, edges) beside skip-all (no dead-child
#    filter) and skip in the dihedral (border placed first) and mirror modes, node counts for N=18;
#    N=21 the same but mirror (and NQ_BIG=22 with the default).
# 2. Costas 14-20 through the whole local flow (bench/bench.py, fc).
# 3. `permenum enumerate nqueens 21 --device gpu` and `enumerate costas 18 --device gpu` as a
#    user runs them. Every count is checked against OEIS; every step writes its own log in OUTDIR
#    (no pipes: a call cut short keeps them). NQ_BIG=22 adds N-Queens 22 (about 3-4 minutes);
#    COSTAS=0 / ENUMERATE=0 leave out steps 2 / 3.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_suite.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
bash bench/gpu_node.sh --device gpu --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site
repo=$PWD
pe() { (cd /tmp && python3 -m permenum "$@"); }  # not from the checkout: ./permenum would shadow the install
kern() { (cd /tmp && python3 "$repo/bench/kernels.py" --device gpu "$@"); }
t=/tmp/permenum-runs; rm -rf $t; mkdir -p $t
kern --nqueens 18 19 20 --variants skip:edges skip-all:edges skip:dihedral skip:mirror --target-states 8600000 --nodes-upto 18 \
    > "$out/nq-18-20.log" 2>&1
kern --nqueens 21 --variants skip:edges skip-all:edges skip:dihedral --target-states 8600000 > "$out/nq-21.log" 2>&1
[ -n "${NQ_BIG:-}" ] && kern --nqueens $NQ_BIG --variants skip:edges --target-states 8600000 > "$out/nq-big.log" 2>&1
[ "${COSTAS:-1}" = 1 ] && python3 bench/bench.py --device gpu --nqueens --costas 14 15 16 17 18 19 20 --costas-target 2097152 --costas-kernels fc \
    > "$out/costas.log" 2>&1
[ "${ENUMERATE:-1}" = 1 ] && { echo "== permenum enumerate nqueens 21 --device gpu"; time pe enumerate nqueens 21 --device gpu;
  echo "== permenum enumerate costas 18 --device gpu"; time pe enumerate costas 18 --device gpu; } > "$out/enumerate.log" 2>&1
grep -sh " | " "$out/nq-18-20.log" "$out/nq-21.log" "$out/nq-big.log" "$out/costas.log"
grep -shE "^(nqueens|costas|matches|whole|real|==|total|kernel)" "$out/enumerate.log"
