#!/usr/bin/env bash
# Where one `permenum task` process spends its time on a GPU node (issue 35, item 3: a task's start):
#   bash bench/task_start.sh OUTDIR [N] [P]       (N-Queens N, default 22, pool of P partitions, default 64)
# The interpreter, the imports (-X importtime, top 15), the OpenCL platform and context, then four tasks of
# the pool in turn (the first may build kernels; the others find them cached), each timed from the shell,
# their task logs, and a cProfile of the fourth (top 40 by cumulative time). Needs .whl/ (see gpu_node.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: task_start.sh OUTDIR [N] [P]}; N=${2:-22}; P=${3:-64}
mkdir -p "$out"
bash bench/gpu_node.sh --device gpu --nqueens 8 > "$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
export PYTHONPATH=/tmp/permenum-site CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
run=/tmp/permenum-start; rm -rf $run
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader | tee "$out/table.txt"
clock() { local s=$EPOCHREALTIME; "$@" > /dev/null 2>&1; local e=$EPOCHREALTIME; awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }'; }
cd /tmp
python3 -m permenum pool nqueens "$N" $run --num-partitions "$P" > "$out/pool.log" 2>&1
echo "python3 -c pass: $(clock python3 -c pass) s" | tee -a "$out/table.txt"
echo "import permenum.cli.app and .task: $(clock python3 -c 'import permenum.cli.app, permenum.cli.task') s" | tee -a "$out/table.txt"
echo "permenum --help: $(clock python3 -m permenum --help) s" | tee -a "$out/table.txt"
python3 -X importtime -c 'import permenum.cli.app, permenum.cli.task' 2> "$out/importtime.txt"
sort -t'|' -k2 -n -r "$out/importtime.txt" | head -15 > "$out/importtime-top.txt"
python3 - <<'EOF' | tee -a "$out/table.txt"
import time
t0 = time.perf_counter()
import pyopencl as cl
t1 = time.perf_counter()
platforms = cl.get_platforms()
devices = [d for p in platforms for d in p.get_devices()]
t2 = time.perf_counter()
ctx = cl.Context(devices=devices[:1])
queue = cl.CommandQueue(ctx)
t3 = time.perf_counter()
print(f"import pyopencl {t1 - t0:.3f} s; platforms and devices {t2 - t1:.3f} s; context and queue {t3 - t2:.3f} s "
      f"({devices[0].name})")
EOF
for i in 0 1 2; do
    echo "task $i: $(clock python3 -m permenum task $run -i $i --device gpu) s" | tee -a "$out/table.txt"
done
# the same task through `python3 -m permenum.cli` (the bench scripts' old way): pandas imported where installed
echo "task 2 again, python3 -m permenum.cli --force: $(clock python3 -m permenum.cli task $run -i 2 --device gpu --force) s" | tee -a "$out/table.txt"
python3 -m cProfile -o "$out/task3.prof" -m permenum task $run -i 3 --device gpu > "$out/task3.log" 2>&1
python3 -c "
import pstats, sys
p = pstats.Stats('$out/task3.prof', stream=sys.stdout)
p.sort_stats('cumulative').print_stats(40)" > "$out/task3-profile.txt"
cp $run/logs/part-0000[0-3].log "$out/" 2>/dev/null
grep -h "into the attempt\|done:" $run/logs/part-00001.log | tail -4 | tee -a "$out/table.txt"
python3 -m permenum collect $run 2>&1 | head -3 | tee -a "$out/table.txt"
# a stream: partitions 4 .. 4+S-1 one after another, a process each, as one GPU's share of an array runs them
S=${STREAM:-16}
stream() { for ((i = 4; i < 4 + S; i++)); do python3 -m permenum task $run -i $i --device gpu || return 1; done; }
echo "a stream of $S tasks: $(clock stream) s" | tee -a "$out/table.txt"
python3 - "$run" "$S" <<'PY' | tee -a "$out/table.txt"
import sys, json, pathlib
run, s = pathlib.Path(sys.argv[1]), int(sys.argv[2])
kernel = [json.loads(p.read_text())["seconds"]["kernel"] for p in sorted((run / "results").glob("part-*.json"))
          if 4 <= int(p.stem.split("-")[1].split(".")[0]) < 4 + s]
print(f"their kernel seconds: {sum(kernel):.2f} ({len(kernel)} results)")
PY
(cd "$out" && tar czf ../start-files.tgz --exclude=task3.prof . && mv ../start-files.tgz .)  # past the device tool's 8 files
echo "--- table"; cat "$out/table.txt"
