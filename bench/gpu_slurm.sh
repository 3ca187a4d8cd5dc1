#!/usr/bin/env bash
# SLURM with GPUs, as a GPU cluster runs it, on a lent GPU machine without SLURM or network:
#   bash bench/gpu_slurm.sh                       # N-Queens 22 and Costas 22, 64 partitions, one GPU a task
#   NQ_N=10 COSTAS_N=8 DEVICE=cpu GPUS_PER_TASK=0 bash bench/gpu_slurm.sh   # the same flow on a CPU, to try it
# Unpacks Debian 12's SLURM 22.05 and munge (the .deb files in .debs/, fetched elsewhere with
#   (cd .debs && apt-get download slurmd slurmctld slurm-client slurm-wlm-basic-plugins munge \
#                libmunge2 libhwloc15 libreadline8 libnuma1 libgcrypt20 liblz4-1 libdbus-1-3))
# with dpkg -x into a prefix, adding only the libraries whose soname the machine lacks; starts a private
# cluster from it (`permenum cluster up --prefix`), which declares the GPUs as gres/gpu; then, each
# checked exact by `collect`: the best way outside SLURM (`enumerate nqueens N --device gpu` over every
# GPU); N-Queens through one worker a GPU (`submit --workers K -G 1`), through one task holding every GPU
# (`--workers 1 -G K`), and as a 64-task array with -G 1 (one GPU a task); Costas as an array; Costas N-1
# through workers under a 1-minute time limit (signal, checkpoint, requeue, resume); a scancel + resubmit.
# RUNS=workers,cancel picks some. Prints one table; figures under $OUT (or /tmp/pe-gpu-slurm/out).
set -euo pipefail
cd "$(dirname "$0")/.."
NQ_N=${NQ_N:-22} COSTAS_N=${COSTAS_N:-22} PARTS=${PARTS:-64} DEVICE=${DEVICE:-gpu} GPUS_PER_TASK=${GPUS_PER_TASK:-1}
CANCEL_N=${CANCEL_N:-$((NQ_N - 1))} LIMIT_N=${LIMIT_N:-$((COSTAS_N - 1))}
RUNS=${RUNS:-workers,one-task,array,costas,time-limit,cancel}  # which runs beside enumerate (the best way)
work=${WORK:-/tmp/pe-gpu-slurm}/$$
out=${OUT:-$work/out}
prefix=$work/slurm-prefix
mkdir -p "$work" "$out"
say() { echo "gpu_slurm: $*" >&2; }
die() { say "$*"; exit 1; }

# --- Python: permenum and its OpenCL packages (as bench/gpu_node.sh) -------------------------------
site=/tmp/permenum-site
if [ -z "${SKIP_INSTALL:-}" ]; then  # SKIP_INSTALL=1: the permenum on PATH (a checkout's venv) runs as it is
    if ! python3 -c "import pyopencl" 2>/dev/null; then
        ls .whl/*.whl >/dev/null 2>&1 || die "pyopencl missing and no wheels in .whl/ (see bench/NOTES.md)"
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl/*.whl
    fi
    python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --upgrade --target "$site" . >/dev/null
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" PATH="$site/bin:$PATH"
fi
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
    lib=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
    lib=${lib:-$(ls /usr/lib/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 2>/dev/null | head -1 || true)}
    if [ -n "$lib" ]; then mkdir -p /etc/OpenCL/vendors && echo "$lib" > /etc/OpenCL/vendors/nvidia.icd; fi
fi
gpu_model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | sed 's/^ *//' | paste -sd, || true)
gpu_model=${gpu_model:-none}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
say "GPUs: $gpu_model; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || echo none)"

# --- SLURM from Debian's packages, into a prefix ------------------------------------------------------
ls .debs/slurmd_*.deb >/dev/null 2>&1 || die "no Debian packages in .debs/ (the header of this script says which)"
for pkg in slurmd slurmctld slurm-client slurm-wlm-basic-plugins munge; do
    dpkg -x .debs/${pkg}_*.deb "$prefix"
done
libdir=$prefix/usr/lib/x86_64-linux-gnu
carried=()
for deb in .debs/lib*.deb; do  # a library only where the machine has no library of its soname
    tmp=$(mktemp -d "$work/lib.XXXX")
    dpkg -x "$deb" "$tmp"
    while IFS= read -r so; do
        name=$(basename "$so")
        if ! ldconfig -p | grep -q "^[[:space:]]*$name "; then
            cp -a "$(dirname "$so")/$name"* "$libdir/" && carried+=("$name")
        fi
    done < <(find "$tmp" -name 'lib*.so.[0-9]*' \( -type l -o -type f \) | grep -E '\.so\.[0-9]+$')
    rm -rf "$tmp"
done
say "carried from Debian (sonames the machine lacks): ${carried[*]:-none}"
# slurmd starts slurmstepd by its built-in path.
[ -e /usr/sbin/slurmstepd ] || ln -s "$prefix/usr/sbin/slurmstepd-wlm" /usr/sbin/slurmstepd
missing=$(for f in "$prefix"/usr/sbin/* "$prefix"/usr/bin/s* "$libdir"/slurm-wlm/{gres_gpu,task_cgroup,cgroup_v2,select_cons_tres,auth_munge}.so; do
    LD_LIBRARY_PATH=$libdir:$libdir/slurm-wlm ldd "$f" 2>/dev/null | awk -v f="$f" '/not found/ {print f": "$1}'
done | sort -u)
[ -z "$missing" ] || die "libraries not found:"$'\n'"$missing"

# --- the cluster ---------------------------------------------------------------------------------------
state=$work/cluster
cluster_up() {  # $1: --gpu-confinement
    local line
    line=$(permenum cluster up --state-dir "$state" --prefix "$prefix" --cpus "$(nproc)" --gpu-confinement "$1") || return 1
    eval "$line"
    export SLURM_CONF PATH LD_LIBRARY_PATH
}
stop() { permenum cluster down --state-dir "$state" >/dev/null 2>&1 || true; }
trap stop EXIT
gres=() gflag=()
if [ "$GPUS_PER_TASK" -gt 0 ]; then gres=(--gres="gpu:$GPUS_PER_TASK") gflag=(-G "$GPUS_PER_TASK"); fi
probe() {  # one task a GPU: which GPUs it was given and which it sees
    sbatch --wait --parsable "${gres[@]}" --array="0-$(( gpus > 0 ? gpus - 1 : 0 ))" --output="$work/probe-%a.out" \
        --wrap 'echo "task $SLURM_ARRAY_TASK_ID CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} sees $(nvidia-smi -L 2>/dev/null | grep -c ^GPU) GPUs"' \
        >/dev/null 2>"$work/probe.err"
}
cluster_up auto || { say "cluster up failed with GPUs confined where cgroup v2 looked usable; without:"; stop; cluster_up none; }
permenum cluster status --state-dir "$state" 2>/dev/null | sed -n 2p >&2
if ! probe; then
    [ -e "$state/cgroup.conf" ] && { say "a job failed under cgroup confinement ($(tail -1 "$work/probe.err")); without it:"; \
        tail -5 "$state/log/slurmd.log" >&2; stop; cluster_up none; probe || die "probe job failed: $(cat "$work/probe.err")"; } \
        || die "probe job failed: $(cat "$work/probe.err")"
fi
cat "$work"/probe-*.out >&2
confinement=$([ -e "$state/cgroup.conf" ] && echo cgroup || echo CUDA_VISIBLE_DEVICES)

# --- the runs ------------------------------------------------------------------------------------------
now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.1f}')"; }
rows=()
exact() {  # $1 run: collect must say the total matches the published count
    permenum collect "$1" >"$1.collect" 2>&1 || { cat "$1.collect" >&2; die "collect failed for $1"; }
    grep -q "matches the published count" "$1.collect" || { cat "$1.collect" >&2; die "$1: not the published count"; }
    sed -n 's/.*: total \([0-9]*\).*/\1/p' "$1.collect" | head -1
}
ids() {  # the distinct physical GPUs (bus ids) that counted $1's partitions, from its ledger
    python3 - "$1" <<'EOF'
import sys, pyarrow.parquet as pq
from pathlib import Path
run = Path(sys.argv[1]); ledger = run / "ledger.parquet"
names = [d for row in pq.read_table(ledger, columns=["devices"]).column(0).to_pylist() for d in (row or "").split(", ")]
ids = sorted({d.rpartition(" @ ")[2] for d in names if " @ " in d})
print(f"{len(ids)} ({' '.join(ids)})" if ids else "none named")
EOF
}
wait_queue() { while [ -n "$(squeue -h -o %i)" ]; do sleep 0.5; done; }
submitted() {  # $1 problem, $2 n, $3 run, then submit's options: pool, submit, wait; the seconds from submit to every result
    permenum pool "$1" "$2" "$3" --num-partitions "$PARTS" >/dev/null
    local t0; t0=$(now)
    permenum submit "$3" --device "$DEVICE" "${@:4}" >/dev/null
    wait_queue
    secs "$t0" "$(now)"
}
gpu_opt() { if [ "$GPUS_PER_TASK" -gt 0 ]; then echo "-G $1"; fi; }  # -G K, where the cluster offers GPUs

run_if() { [[ ",$RUNS," == *",$1,"* ]] && say "$(date +%T) $1"; }
restarts() {  # the most requeues any result of $1 went through (its task's SLURM_RESTART_COUNT)
    python3 -c "import sys, pathlib; from permenum.records import read_result; print(max(read_result(p).origin.slurm_restart_count or 0 for p in pathlib.Path(sys.argv[1], 'results').glob('part-*.json')))" "$1"
}
ngpu=$(( gpus > 0 ? gpus : 1 ))
row() {  # one row of the table, kept and shown at once (a call cut short still tells what it measured)
    rows+=("$1"); echo "gpu_slurm: row: $1" >&2; echo "$1" >>"$out/rows.txt"
}

t0=$(now)
permenum enumerate nqueens "$NQ_N" "$work/enum-nq" --device "$DEVICE" >"$work/enum-nq.out" 2>&1 || { cat "$work/enum-nq.out" >&2; die "enumerate failed"; }
s=$(secs "$t0" "$(now)")
total=$(exact "$work/enum-nq")
row "nqueens $NQ_N|enumerate --device $DEVICE (all GPUs, no SLURM)|$s|$total|$(ids "$work/enum-nq")"

if run_if workers; then
    s=$(submitted nqueens "$NQ_N" "$work/nq-workers" --workers "$ngpu" $(gpu_opt 1))
    row "nqueens $NQ_N|submit --workers $ngpu -G 1 ($PARTS partitions)|$s|$(exact "$work/nq-workers")|$(ids "$work/nq-workers")"
fi
if run_if one-task; then
    s=$(submitted nqueens "$NQ_N" "$work/nq-one" --workers 1 $(gpu_opt "$ngpu"))
    row "nqueens $NQ_N|submit --workers 1 -G $ngpu (one task, every GPU)|$s|$(exact "$work/nq-one")|$(ids "$work/nq-one")"
fi
if run_if array; then
    s=$(submitted nqueens "$NQ_N" "$work/nq" "${gflag[@]}")
    row "nqueens $NQ_N|submit -G $GPUS_PER_TASK, $PARTS-task array|$s|$(exact "$work/nq")|$(ids "$work/nq")"
fi
if run_if costas; then
    s=$(submitted costas "$COSTAS_N" "$work/costas" "${gflag[@]}")
    row "costas $COSTAS_N|submit -G $GPUS_PER_TASK, $PARTS-task array|$s|$(exact "$work/costas")|$(ids "$work/costas")"
fi
if run_if cancel; then  # scancel while running, then resubmit: every partition exact once, none counted twice
    permenum pool nqueens "$CANCEL_N" "$work/cancel" --num-partitions "$PARTS" >/dev/null
    t0=$(now)
    permenum submit "$work/cancel" --workers "$ngpu" "${gflag[@]}" --device "$DEVICE" >/dev/null
    while [ "$(ls "$work/cancel/results" 2>/dev/null | grep -c "^part-.*json$")" -lt 3 ] && [ -n "$(squeue -h -o %i)" ]; do sleep 0.2; done
    jobs=$(squeue -h -o %F | sort -u)
    [ -z "$jobs" ] || scancel $jobs
    wait_queue
    done_before=$(ls "$work/cancel/results" | grep -c "^part-.*json$")
    permenum status "$work/cancel" >"$work/cancel.status" 2>&1 || true
    permenum resubmit "$work/cancel" --include-missing >/dev/null
    wait_queue
    s=$(secs "$t0" "$(now)")
    row "nqueens $CANCEL_N|--workers $ngpu, scancel after $done_before results, resubmit|$s|$(exact "$work/cancel")|$(ids "$work/cancel")"
    [ -z "$(ls "$work/cancel/results/duplicates" 2>/dev/null)" ] || die "a partition was counted twice"
fi

if run_if time-limit; then  # each worker signalled before its 1-minute limit: checkpoint, requeue, resume
    s=$(submitted costas "$LIMIT_N" "$work/limit" --workers "$ngpu" $(gpu_opt 1) --time 1 --signal-seconds 40)
    row "costas $LIMIT_N|--workers $ngpu -G 1 --time 1: requeued $(restarts "$work/limit")x|$s|$(exact "$work/limit")|$(ids "$work/limit")"
fi

permenum report "$work/nq" --by-model >"$out/report-nq-by-model.txt" 2>&1 || true
env COLUMNS=200 permenum report "$work/nq" >"$out/report-nq.txt" 2>&1 || true
cp "$work/cancel.status" "$out/" 2>/dev/null || true

{
    echo "GPUs: $gpu_model; $gpus declared as gres/gpu, confined by $confinement; SLURM 22.05 (Debian 12, dpkg -x)"
    printf '%-12s | %-48s | %8s | %-18s | %s\n' problem way seconds total "GPUs that counted (bus ids)"
    for r in "${rows[@]}"; do IFS='|' read -r a b c d e <<<"$r"; printf '%-12s | %-48s | %8s | %-18s | %s\n' "$a" "$b" "$c" "$d" "$e"; done
} | tee "$out/table.txt"
