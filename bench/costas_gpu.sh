#!/usr/bin/env bash
# Costas kernel build options side by side on a GPU node, with what each becomes in SASS (issue 19):
#   OUT=$OUT ORDERS="19 20" VARIANTS="fc dfs" OPTS="base;-DX=1" bash bench/costas_gpu.sh   # device, carry [".whl"]
#   OUT=$OUT ORDERS="18 19 20 21 22" VARIANTS="fc cf" NODES=1 bash bench/costas_gpu.sh       # fc against centre-first
# Per variant and option set: bench/sass.py's registers, spills and opcode counts (order SASS_N, depth 5),
# then one bench/costas_kernels.py row per order (kernel seconds, every array checked, exact totals).
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
bash bench/gpu_node.sh --help > "$out/setup.log" 2>&1
head -3 "$out/setup.log"
export PYTHONPATH=/tmp/permenum-site
IFS=';' read -ra sets <<< "${OPTS:-base}"
variants=${VARIANTS:-fc}
for v in $variants; do
  for i in "${!sets[@]}"; do
    o=${sets[$i]}; [ "$o" = base ] && o=""
    file=costas.cl; case $v in cf|mid) file=costas_cf.cl ;; esac  # the centre mode's kernels
    python3 bench/sass.py "$out/$v-$i" $file costas_${v} -DNMAX=${SASS_N:-20} -DCANONICAL=1 -DWG=64 -DMIN_DEPTH=5 $o 2>&1 | tail -2
  done
done
for i in "${!sets[@]}"; do
  o=${sets[$i]}; [ "$o" = base ] && o=""
  python3 bench/costas_kernels.py --device gpu --orders ${ORDERS:-19 20} --variants $variants --target ${TARGET:-2097152} \
    ${NODES:+--nodes} ${o:+--options="$o"} > "$out/costas-$i.log" 2>&1
  grep -E '^[0-9]+ \|' "$out/costas-$i.log" | sed "s/^/${o:-base}: /"
done
