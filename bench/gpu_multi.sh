#!/usr/bin/env bash
# Every GPU of a node busy: the ways a node of G GPUs is used, each from scratch and checked, on one lent
# machine with no network (wheels in .whl/, see gpu_node.sh):
#   bash bench/gpu_multi.sh OUTDIR nqueens   N-Queens $NQ (22): enumerate on 1, 2 and G GPUs (G workers, and
#                                            one task over all with --workers 1), G one-GPU `permenum task`
#                                            process streams over 16 and 64 partitions, `run` over 64
#   bash bench/gpu_multi.sh OUTDIR quick     N-Queens $NQ on G GPUs: G workers, one task over all, G workers
#                                            again (on a fresh machine the first row pays the kernel builds)
#   bash bench/gpu_multi.sh OUTDIR costas    Costas $CO (22) on 1 and G GPUs, N-Queens 21 (and Costas 21 with CO21=1) on one
#                                            (whole command against kernel), ygch/n_queens N=$NQ on G GPUs
#                                            (its source copied into .peer/ygch, built here with nvcc)
#   bash bench/gpu_multi.sh OUTDIR peer      ygch/n_queens N=$NQ on G GPUs alone
# Each row: wall seconds of the command, its total and check; then per-device busy seconds and end times
# (bench/device_busy.py). Rows go to OUTDIR/table.txt, printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_multi.sh OUTDIR nqueens|costas}; what=${2:-nqueens}
NQ=${NQ:-22}; CO=${CO:-22}
mkdir -p "$out"; : > "$out/table.txt"
export PYTHONUNBUFFERED=1
bash bench/gpu_node.sh --device gpu --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site
repo=$PWD
pe() { (cd /tmp && python3 -m permenum "$@"); }
G=$(nvidia-smi -L | wc -l)
t=/tmp/permenum-runs; rm -rf $t; mkdir -p $t
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee -a "$out/table.txt"

row() {  # NAME RUNDIR COMMAND...: time the command, print its total and check, then its devices' busy seconds
    local name=$1 run=$2; shift 2
    local s=$EPOCHREALTIME
    "$@" > "$out/$name.log" 2>&1; local rc=$?
    local e=$EPOCHREALTIME
    local said; said=$(grep -h -o -E "total [0-9]+|matches the published count|partial: .*|MISMATCH.*" "$out/$name.log" | head -2 | tr '\n' ' ')
    awk -v n="$name" -v s="$s" -v e="$e" -v rc="$rc" -v said="$said" 'BEGIN { printf "%-34s %8.2f s  rc=%s  %s\n", n, e - s, rc, said }' | tee -a "$out/table.txt"
    [ -d "$run/results" ] && (cd /tmp && python3 "$repo/bench/device_busy.py" "$run" --since "$s" --label "$name") | tee -a "$out/table.txt"
}

streams() {  # RUNDIR PARTITIONS: G process streams, one a GPU, each `permenum task` over its partitions in turn
    local run=$1 parts=$2 g
    for ((g = 0; g < G; g++)); do
        ( for ((i = g; i < parts; i += G)); do CUDA_VISIBLE_DEVICES=$g pe task "$run" -i $i --device gpu || exit 1; done ) &
    done
    wait && pe collect "$run"
}

if [ "$what" = quick ]; then  # the two ways of one node-wide enumerate, with their task logs
    row "nqueens$NQ-${G}gpu" $t/eG pe enumerate nqueens $NQ $t/eG --device gpu
    row "nqueens$NQ-${G}gpu-one-task" $t/eT pe enumerate nqueens $NQ $t/eT --device gpu --workers 1
    row "nqueens$NQ-${G}gpu-again" $t/eA pe enumerate nqueens $NQ $t/eA --device gpu
elif [ "$what" = nqueens ]; then
    gpus() { seq -s, 0 $(($1 - 1)); }
    row "nqueens$NQ-1gpu" $t/e1 env CUDA_VISIBLE_DEVICES=0 bash -c "cd /tmp && python3 -m permenum enumerate nqueens $NQ $t/e1 --device gpu"
    [ "$G" -ge 4 ] && row "nqueens$NQ-2gpu" $t/e2 env CUDA_VISIBLE_DEVICES=$(gpus 2) bash -c "cd /tmp && python3 -m permenum enumerate nqueens $NQ $t/e2 --device gpu"
    row "nqueens$NQ-${G}gpu" $t/eG pe enumerate nqueens $NQ $t/eG --device gpu
    row "nqueens$NQ-${G}gpu-one-task" $t/eT pe enumerate nqueens $NQ $t/eT --device gpu --workers 1
    for P in 16 64; do
        pe pool nqueens $NQ $t/p$P --num-partitions $P > "$out/pool$P.log" 2>&1
        row "nqueens$NQ-${G}x1gpu-procs-P$P" $t/p$P streams $t/p$P $P
    done
    # one task process's start, from the shell: interpreter, imports, context, build, load, first launch
    s=$EPOCHREALTIME; CUDA_VISIBLE_DEVICES=0 pe task $t/p64 -i 0 --device gpu --force > "$out/one-task.log" 2>&1; e=$EPOCHREALTIME
    awk -v s="$s" -v e="$e" 'BEGIN { printf "one permenum task (partition 0 of 64, again): %.2f s\n", e - s }' | tee -a "$out/table.txt"
    grep -h -E "attempt|states 0-|done" $t/p64/logs/part-00000.log | tail -4 | cut -c1-200 | tee -a "$out/table.txt"
    pe pool nqueens $NQ $t/r64 --num-partitions 64 > "$out/pool-r64.log" 2>&1
    row "nqueens$NQ-run-P64" $t/r64 pe run $t/r64 --device gpu
    pe collect $t/r64 >> "$out/nqueens$NQ-run-P64.log" 2>&1
    grep -h -E "total|matches" "$out/nqueens$NQ-run-P64.log" | tail -2 | tee -a "$out/table.txt"
elif [ "$what" = costas ]; then
    row "nqueens21-1gpu" $t/q21 env CUDA_VISIBLE_DEVICES=0 bash -c "cd /tmp && python3 -m permenum enumerate nqueens 21 $t/q21 --device gpu"
    [ -n "${CO21:-}" ] && row "costas21-1gpu" $t/c21 env CUDA_VISIBLE_DEVICES=0 bash -c "cd /tmp && python3 -m permenum enumerate costas 21 $t/c21 --device gpu"
    row "costas$CO-1gpu" $t/c1 env CUDA_VISIBLE_DEVICES=0 bash -c "cd /tmp && python3 -m permenum enumerate costas $CO $t/c1 --device gpu"
    row "costas$CO-${G}gpu" $t/cG pe enumerate costas $CO $t/cG --device gpu
fi
if [ "$what" = costas ] || [ "$what" = peer ]; then
    if [ -d .peer/ygch ]; then
        (cd .peer/ygch && nvcc -gencode arch=compute_90,code=sm_90 -allow-unsupported-compiler -O3 -Xcompiler -fopenmp \
            -D_USE_CONFIG2_ n_queens_cuda.cu n_queens.cpp utils.cpp main.cpp -o /tmp/ygch) > "$out/ygch-build.log" 2>&1
        row "ygch-nqueens$NQ-${G}gpu" /nonexistent /tmp/ygch $NQ 7
        grep -h "result" "$out/ygch-nqueens$NQ-${G}gpu.log" | tee -a "$out/table.txt"
    fi
fi
(cd $t && tar czf "$out/logs.tgz" */logs 2>/dev/null)  # the task logs: each chunk's timeline
(cd "$out" && tar czf logs-cmd.tgz --remove-files *.log)  # OUTDIR brings back at most 8 files
echo "== $what on $G GPUs"; cat "$out/table.txt"
