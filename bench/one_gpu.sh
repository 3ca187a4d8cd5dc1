#!/usr/bin/env bash
# One GPU, the whole command against its kernel (issue 35's no-regression rows: N-Queens 21 at most 1.2x,
# Costas 21 at most 1.1x):   bash bench/one_gpu.sh OUTDIR [REPEAT]
# Each `enumerate` as a user runs it (`python3 -m permenum`, the installed command), timed from the shell,
# REPEAT times (default 2); with CLI=1 one run through `python3 -m permenum.cli` (which imports pandas where it
# is installed, as on the lent GPU machines) and bench/phases.py's timeline of one run ($name-phases.log).
# BASE=TAR (a `git archive` of another commit, carried in an ignored folder): each repetition also runs
# that commit, installed beside, so that the two compare on one machine. Needs .whl/.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD; out=${1:?usage: one_gpu.sh OUTDIR [REPEAT]}; R=${2:-2}
mkdir -p "$out"
bash bench/gpu_node.sh --device gpu --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/table.txt"
t=/tmp/permenum-one; rm -rf $t; mkdir -p $t
if [ -n "${BASE:-}" ]; then
    rm -rf /tmp/base-src /tmp/base-site; mkdir -p /tmp/base-src && tar xf "$BASE" -C /tmp/base-src
    python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --target /tmp/base-site /tmp/base-src
    python3 -m compileall -q /tmp/base-site > /dev/null 2>&1
fi
cd /tmp
row() {  # NAME COMMAND...: wall seconds from the shell, kernel seconds and check from the output
    local name=$1; shift
    local s=$EPOCHREALTIME; "$@" > "$out/$name.log" 2>&1; local rc=$? e=$EPOCHREALTIME
    local kernel; kernel=$(grep -h -o -E "kernel time [0-9.]+" "$out/$name.log" | tail -1 | awk '{print $3}')
    local said; said=$(grep -h -o -E "matches the published count|MISMATCH" "$out/$name.log" | head -1)
    awk -v n="$name" -v s="$s" -v e="$e" -v k="${kernel:-0}" -v rc=$rc -v said="$said" 'BEGIN {
        printf "%-28s whole %7.2f s  kernel %7.2f s  %5.3fx  rc=%s %s\n", n, e - s, k, (k > 0 ? (e - s) / k : 0), rc, said }' \
        | tee -a "$out/table.txt"
}
whats=("nqueens ${NQ:-21}" "costas ${CO:-21}"); [ -n "${ONLY:-}" ] && whats=("$ONLY")  # ONLY="nqueens 21": one row
for what in "${whats[@]}"; do
    set -- $what; name=$1$2
    for ((r = 1; r <= R; r++)); do
        row "$name-$r" python3 -m permenum enumerate $1 $2 $t/$name-$r --device gpu
        [ -n "${BASE:-}" ] && row "$name-base-$r" env PYTHONPATH=/tmp/base-site:$PYTHONPATH python3 -m permenum enumerate $1 $2 $t/$name-base-$r --device gpu
    done
    [ -n "${CLI:-}" ] && row "$name-cli" python3 -m permenum.cli enumerate $1 $2 $t/$name-cli --device gpu
    row "$name-phases" python3 "$repo/bench/phases.py" enumerate $1 $2 $t/$name-phases --device gpu
done
(cd $t && tar czf "$out/logs.tgz" */logs) && (cd "$out" && tar czf phases.tgz *-phases.log)  # each run's task log: its chunks' timeline
echo "--- table"; cat "$out/table.txt"
