#!/usr/bin/env bash
# One job of a record campaign's rehearsal on a GPU machine: resume RUN (a run directory brought along,
# or a fresh coarse pool) for at most SECONDS, stop it as a time limit does (USR1: the task checkpoints
# and exits 75), and hand the run directory on as OUTDIR/run.tgz to the next job's fresh machine.
#   bash bench/rehearsal.sh RUN OUTDIR SECONDS
#   VERIFY=ID bash bench/rehearsal.sh RUN OUTDIR SECONDS   go on with RUN's verification ID instead
set -uo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: rehearsal.sh RUN OUTDIR SECONDS}; out=${2:?}; seconds=${3:-500}
mkdir -p "$out"
bash bench/gpu_node.sh --device gpu --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site PYTHONUNBUFFERED=1
run=$(realpath "$run"); out=$(realpath "$out")
cd /tmp  # the installed permenum, not the checkout's source folders
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m permenum status "$run" | head -3
t0=$(date +%s)
# a verification goes on with the kernel and devices it was started with
if [ -n "${VERIFY:-}" ]; then what=(verify "$run" --id "$VERIFY"); else what=(run "$run" --device gpu); fi
timeout -s USR1 -k 120 "$seconds" python3 -m permenum "${what[@]}" > "$out/run.log" 2>&1
rc=$?
echo "permenum ${what[0]}: exit $rc after $(( $(date +%s) - t0 )) s (75: stopped by the time limit's USR1, checkpointed)"
tail -3 "$out/run.log"
python3 -m permenum status "$run" | head -8
if [ $rc -eq 0 ]; then python3 -m permenum collect "$run" | tail -6; fi
grep -h "stopping at\|resuming from\|stopped after" "$run"/logs/*.log | tail -6
tar -C "$(dirname "$run")" -czf "$out/run.tgz" "$(basename "$run")"
ls -la "$out"
