#!/usr/bin/env bash
# Keep every device busy (the multi-device measurements of the closing notes), one call on a node
# with two or more GPUs and no network:   bash bench/gpu_multi.sh OUTDIR
# One N-Queens 21 partition run by `permenum task` on one GPU (CUDA_VISIBLE_DEVICES=0), on every
# GPU (--device gpu), and on every GPU plus the CPU (--device all, PoCL from .whl-pocl/ if brought
# along), each from scratch on the same pool, with each run's set-up/busy seconds per device and its
# chunk timeline (the task log). SWEEP=1 adds kernel variants side by side on GPU 0 (bench/kernels.py,
# N=20) with NVIDIA's register/spill report. ENUMERATE=1 adds `permenum enumerate nqueens 21` and
# `enumerate costas 18` on one GPU and `enumerate nqueens 21` on all, as a user runs them.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_multi.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
site=/tmp/permenum-site
if ls .whl-pocl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" .whl-pocl/*.whl > "$out/pocl.log" 2>&1
fi
bash bench/gpu_node.sh --device all --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=$site
repo=$PWD
pe() { (cd /tmp && python3 -m permenum.cli "$@"); }
t=/tmp/permenum-runs; rm -rf $t; mkdir -p $t
N=${NQ:-21}
{ time pe pool nqueens --n $N --out $t/q -S 8600000; } > "$out/pool.log" 2>&1  # edges: 22.5 M states (-S 5000000 stops at 2.78 M, one launch of 16 per lane)
for spec in "one-gpu gpu 0" "all-gpus gpu" "gpus-and-cpu all"; do
    set -- $spec
    rm -rf $t/q/results $t/q/checkpoints
    s=$(date +%s.%N)
    if [ -n "${3:-}" ]; then CUDA_VISIBLE_DEVICES=$3 pe task $t/q -i 0 --device $2 > "$out/task-$1.log" 2>&1
    else pe task $t/q -i 0 --device $2 > "$out/task-$1.log" 2>&1; fi
    e=$(date +%s.%N)
    python3 -c "import json;r=json.load(open('$t/q/results/part-00000.json'));print('N-Queens $N, $1 (--device $2): wall %.2f s, kernel %.2f s, %d chunks, states per device %s, total %s'%($e-$s, r['seconds']['kernel'], r['chunks'], r['device_states'], r['solutions']['weighted']));print('  seconds', {k: round(v, 2) for k, v in r['seconds'].items()}, 'per device', {d: {k: round(v, 2) for k, v in s.items()} for d, s in r['device_seconds'].items()})" >> "$out/multi.log" 2>&1
    sed -e 's/^.*pid [0-9]*: /  /' $t/q/logs/part-00000.log | grep -v "^  done" | tail -12 >> "$out/multi.log"; rm -f $t/q/logs/part-00000.log
done
pe collect $t/q >> "$out/multi.log" 2>&1
if [ -n "${SWEEP:-}" ]; then
    (cd /tmp && CUDA_VISIBLE_DEVICES=0 python3 "$repo/bench/kernels.py" --device gpu --nqueens 20 --target-states 8600000 \
        --variants skip:edges skip-all:edges skip:dihedral skip:mirror --wg 0 64 256 --build-log) > "$out/sweep.log" 2>&1
fi
if [ -n "${ENUMERATE:-}" ]; then
{ echo "== CUDA_VISIBLE_DEVICES=0 permenum enumerate nqueens 21 --device gpu"; time CUDA_VISIBLE_DEVICES=0 pe enumerate nqueens 21 --device gpu;
  echo "== CUDA_VISIBLE_DEVICES=0 permenum enumerate costas 18 --device gpu"; time CUDA_VISIBLE_DEVICES=0 pe enumerate costas 18 --device gpu;
  echo "== permenum enumerate nqueens 21 --device gpu (every GPU)"; time pe enumerate nqueens 21 --device gpu; } > "$out/enumerate.log" 2>&1
fi
grep -h "platform" "$out/setup.log"; tail -3 "$out/pool.log"; cat "$out/multi.log"
grep -shE "^(matches|whole|real|==|nqueens n|costas n|time per)" "$out/enumerate.log"
grep -sh -E " \| |registers|spill" "$out/sweep.log" | sort | uniq -c | sort -rn | head -40
