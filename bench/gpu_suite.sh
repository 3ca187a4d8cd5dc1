#!/usr/bin/env bash
# The GPU measurements of the closing notes, in one call on a GPU node without network:
#   bash bench/gpu_suite.sh OUTDIR
# Kernel table (N-Queens 18-20, Costas 14-19), `permenum enumerate` as a user runs it (N-Queens 21,
# Costas 18), checkpoint overhead (default chunks vs one chunk) and GPU alone vs GPU + CPU, each
# checked against OEIS. Every step writes its own log in OUTDIR (no pipes: a cut-short call keeps them).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_suite.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
bash bench/gpu_node.sh --device 0:0 --nqueens 8 --kernels lds > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site
pe() { (cd /tmp && python3 -m permenum.cli "$@"); }  # not from the checkout: ./permenum would shadow the install
t=/tmp/permenum-runs; rm -rf $t; mkdir -p $t
if [ "${2:-}" != "--system-only" ]; then
python3 bench/bench.py --device 0:0 --nqueens 18 19 20 --kernels lds --target-states 3000000 --nodes-upto 18 > "$out/nqueens.log" 2>&1
python3 bench/bench.py --device 0:0 --nqueens --costas 14 15 16 17 18 19 --costas-target 262144 --costas-kernels lds --nodes-upto 16 > "$out/costas.log" 2>&1
fi
NQ=${NQ:-21}
{ echo "== permenum enumerate nqueens $NQ --device gpu"; time pe enumerate nqueens $NQ --device gpu -S 3000000 -P 1 --run-dir $t/q$NQ;
  echo "== permenum enumerate costas 18 --device gpu"; time pe enumerate costas 18 --device gpu -S 262144 -P 1 --run-dir $t/c18; } > "$out/enumerate.log" 2>&1
{ pe pool nqueens --n 20 --out $t/q20 -S 3000000
  for spec in "0:0 30" "0:0 100000" "all 30"; do
      set -- $spec
      rm -rf $t/q20/results $t/q20/checkpoints
      s=$(date +%s.%N); pe task $t/q20 -i 0 --device $1 --chunk-seconds $2 >/dev/null; e=$(date +%s.%N)
      python3 -c "import json;r=json.load(open('$t/q20/results/part-00000.json'));print('N-Queens 20, device $1, chunk-seconds $2: wall %.2f s, kernel %.2f s, %d chunks, states per device %s, total %s'%($e-$s, r['seconds']['kernel'], r['chunks'], list(r['device_states'].values()), r['solutions']['weighted']))"
  done; pe collect $t/q20 | tail -1; } > "$out/system.log" 2>&1
grep -sh " | " "$out/nqueens.log" "$out/costas.log"; grep -hE "^(nqueens|costas|matches|whole|real|==|N-Queens)" "$out/enumerate.log" "$out/system.log"
