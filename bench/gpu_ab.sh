#!/usr/bin/env bash
# A/B of the Costas search kernels on a GPU node: this checkout against an earlier commit's, same seeds.
#   rm -rf .old && mkdir .old && git archive REV | tar -x -C .old     # here, before the device call
#   OUT=$OUT SEEDS=20 MAXS=60 bash bench/gpu_ab.sh 18 19 20          # device: run with carry [".whl", ".old"]
# One line per order and side: bench/search.py's table row (median, p90 over the seeds).
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
bash bench/gpu_node.sh --help > "$out/setup.log" 2>&1
head -3 "$out/setup.log"
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --target /tmp/permenum-old .old >/dev/null 2>&1
repo=$PWD
cd /tmp
for n in "$@"; do
  for which in new old; do
    if [ $which = new ]; then pp=/tmp/permenum-site; else pp=/tmp/permenum-old:/tmp/permenum-site; fi
    PYTHONPATH=$pp python3 "$repo/bench/search.py" --device gpu --costas "$n" --seeds "${SEEDS:-20}" \
      --max-seconds "${MAXS:-60}" > "$out/costas$n-$which.log" 2>&1
    echo "$which: $(tail -n 1 "$out/costas$n-$which.log")"
  done
done
