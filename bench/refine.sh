#!/usr/bin/env bash
# Coarse pools refined in the task (jobs.counting.refine) against pools at the device's grain, on a GPU node:
#   bash bench/refine.sh OUTDIR [N ...]        (default N: 21)
# Per N: the kernel alone on a device-grain pool (bench/kernels.py, one launch: the reference), then
# `permenum enumerate nqueens N --device gpu` as a user runs it (coarse pool, refined in the task), and
# the same with -S 8600000 (the pool at the device's grain, how enumerate built it before), each with
# its whole time and peak memory (/usr/bin/time or python's rusage). COSTAS="18 19" adds Costas;
# SPLIT=N adds N-Queens N from 64 coarse partitions run one after another (kernel rate kept?).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: refine.sh OUTDIR [N ...]}; shift
sizes=${*:-21}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
bash bench/gpu_node.sh --device gpu --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site
repo=$PWD
timed() {  # label, command...: whole seconds and peak RSS of the command and its children
    local label=$1; shift
    (cd /tmp && python3 - "$label" "$@" <<'PY'
import resource, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.run(sys.argv[2:], capture_output=True, text=True)
dt = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
kernel = [l for l in proc.stdout.splitlines() if "kernel time" in l or "matches" in l or "MISMATCH" in l]
print(f"{sys.argv[1]} | whole {dt:.2f} s | peak {rss:.2f} GiB | rc {proc.returncode} | {' / '.join(kernel)}")
if proc.returncode:
    print(proc.stdout[-2000:], proc.stderr[-2000:])
PY
    )
}
pe() { echo python3 -m permenum "$@"; }
for n in $sizes; do
    (cd /tmp && python3 "$repo/bench/kernels.py" --device gpu --nqueens $n --variants skip:edges --target-states 8600000) \
        > "$out/kernel-$n.log" 2>&1
    tail -3 "$out/kernel-$n.log"
    timed "enumerate nqueens $n (coarse, refined)" python3 -m permenum enumerate nqueens $n --device gpu
    timed "enumerate nqueens $n -S 8600000 (device grain)" python3 -m permenum enumerate nqueens $n --device gpu -S 8600000
done
for n in ${COSTAS:-}; do
    timed "enumerate costas $n (coarse, refined)" python3 -m permenum enumerate costas $n --device gpu
    timed "enumerate costas $n -S 270000 (device grain)" python3 -m permenum enumerate costas $n --device gpu -S 270000
done
if [ -n "${SPLIT:-}" ]; then
    rm -rf /tmp/split; (cd /tmp && python3 -m permenum pool nqueens $SPLIT /tmp/split --num-partitions 64 | tail -1)
    timed "nqueens $SPLIT, 64 coarse partitions one after another" python3 -m permenum run /tmp/split --device gpu
    (cd /tmp && python3 -m permenum collect /tmp/split | tail -3)
fi
