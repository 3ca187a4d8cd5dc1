#!/usr/bin/env bash
# N-Queens kernel growth on one machine (issue 47, item 2): `enumerate nqueens N` on one GPU for each of
# $ONE (default "20 21 22"; side by side, one GPU each, while GPUs last, else one after another) beside
# `estimate PROBLEM N` for each PROBLEM:N of $EST (default nqueens:24: its fit and projection; one after
# another) on the next GPU, then `enumerate nqueens $ALL` (default 23; empty: none) on every GPU of the
# machine. Wheels in .whl/ (see gpu_node.sh).
#   OUT=$OUT bash bench/nq_growth.sh
#   OUT=$OUT ONE= ALL= EST="nqueens:24 costas:22" bash bench/nq_growth.sh     # estimates only
# A row per command: wall seconds, kernel seconds, the check; each estimate's output in estimate-P-N.log.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out"; : > "$out/table.txt"
ONE=${ONE-20 21 22}; ALL=${ALL-23}; EST=${EST-nqueens:24}
bash bench/gpu_node.sh --device gpu --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site PYTHONUNBUFFERED=1
G=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee -a "$out/table.txt"
t=/tmp/permenum-growth; rm -rf $t; mkdir -p $t

row() {  # NAME GPUS COMMAND...: the command on those GPUs (CUDA_VISIBLE_DEVICES), timed from the shell
    local name=$1 gpus=$2; shift 2
    local s=$EPOCHREALTIME
    (cd /tmp && CUDA_VISIBLE_DEVICES=$gpus "$@") > "$out/$name.log" 2>&1; local rc=$?
    local e=$EPOCHREALTIME
    local kernel; kernel=$(grep -h -o -E "kernel time [0-9.]+" "$out/$name.log" | tail -1 | awk '{print $3}')
    local said; said=$(grep -h -o -E "total [0-9]+|matches the published count|MISMATCH.*" "$out/$name.log" | head -2 | tr '\n' ' ')
    awk -v n="$name" -v s="$s" -v e="$e" -v k="${kernel:--}" -v rc=$rc -v said="$said" 'BEGIN {
        printf "%-22s whole %8.2f s  kernel %8s s  rc=%s  %s\n", n, e - s, k, rc, said }' | tee -a "$out/table.txt"
}

gpu=0
for n in $ONE; do
    row "nqueens$n-1gpu" $gpu python3 -m permenum enumerate nqueens "$n" "$t/n$n" --device gpu &
    gpu=$(( (gpu + 1) % G )); [ "$gpu" -eq 0 ] && wait
done
( for pn in $EST; do row "estimate-${pn/:/-}" $gpu python3 -m permenum estimate "${pn%:*}" "${pn#*:}" --device gpu; done ) &
wait
[ -n "$ALL" ] && row "nqueens$ALL-${G}gpu" "$(seq -s, 0 $((G - 1)))" python3 -m permenum enumerate nqueens "$ALL" "$t/all$ALL" --device gpu
for pn in $EST; do echo; grep -v "━" "$out/estimate-${pn/:/-}.log" | tail -16; done
echo; cat "$out/table.txt"
