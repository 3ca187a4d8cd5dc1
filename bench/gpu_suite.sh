#!/usr/bin/env bash
# The GPU measurements of the closing notes, in one or two calls on a GPU node (no network):
#   bash bench/gpu_suite.sh kernels     # kernel table: N-Queens 18-21, Costas 14-20
#   bash bench/gpu_suite.sh system      # enumerate as a user runs it, checkpoint overhead,
#                                       # 1 vs 2 GPUs, GPU vs GPU+CPU (needs 2 GPUs for the ratio)
# Output lines are prefixed so a log can be grepped; every count is checked against OEIS.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
bash bench/gpu_node.sh --nqueens 8 --kernels lds >/dev/null  # installs wheels + permenum, ICD file
export PYTHONPATH=/tmp/permenum-site PATH="/tmp/permenum-site/bin:$PATH"
permenum() { python3 -m permenum.cli "$@"; }
case "${1:-kernels}" in
kernels)
    python3 bench/bench.py --device 0:0 --nqueens 18 19 --kernels dfs dsl lds --target-states 3000000 --nodes-upto 18
    python3 bench/bench.py --device 0:0 --nqueens 20 21 --kernels lds --target-states 3000000
    python3 bench/bench.py --device 0:0 --nqueens --costas 14 15 16 17 18 19 20 --costas-target 262144 --costas-kernels lds --nodes-upto 16 --budget 120
    python3 bench/bench.py --device 0:0 --nqueens --costas 16 17 18 --costas-target 262144 --costas-kernels dfs
    ;;
system)
    t=/tmp/permenum-runs; rm -rf $t; mkdir -p $t
    echo "== enumerate nqueens 21 --device 0:0 (one GPU)"
    permenum enumerate nqueens 21 --device 0:0 -S 3000000 -P 1 --run-dir $t/q21-1gpu 2>/dev/null | grep -v ledger
    echo "== enumerate nqueens 21 --device gpu (every GPU given)"
    permenum enumerate nqueens 21 --device gpu -S 3000000 -P 1 --run-dir $t/q21-gpus 2>/dev/null | grep -v ledger
    echo "== enumerate costas 18 --device gpu"
    permenum enumerate costas 18 --device 0:0 -S 262144 -P 1 --run-dir $t/c18 2>/dev/null | grep -v ledger
    echo "== checkpoint overhead: N-Queens 20, default chunks vs one chunk, one GPU"
    permenum pool nqueens --n 20 --out $t/q20 -S 3000000 >/dev/null
    for cs in 30 100000 30 100000; do
        rm -rf $t/q20/results $t/q20/checkpoints
        s=$(date +%s.%N); permenum task $t/q20 -i 0 --device 0:0 --chunk-seconds $cs >/dev/null; e=$(date +%s.%N)
        python3 -c "import json;r=json.load(open('$t/q20/results/part-00000.json'));print('chunk-seconds $cs: wall %.2f s, kernel %.2f s, chunks %d'%($e-$s, r['seconds']['kernel'], r['chunks']))"
    done
    echo "== GPU alone vs GPU + CPU (PoCL), N-Queens 20"
    for d in 0:0 all; do
        rm -rf $t/q20/results $t/q20/checkpoints
        s=$(date +%s.%N); permenum task $t/q20 -i 0 --device $d >/dev/null; e=$(date +%s.%N)
        python3 -c "import json;r=json.load(open('$t/q20/results/part-00000.json'));print('device $d: wall %.2f s, states per device %s'%($e-$s, r['device_states']))"
    done
    permenum collect $t/q20 | tail -1
    ;;
esac
