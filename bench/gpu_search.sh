#!/usr/bin/env bash
# Local search on a GPU node without network: time to solution over many seeds (bench/search.py), then
# `permenum search nqueens` at 10^6 and 10^7 as a user runs it (whole command). Logs in OUTDIR.
#   bash bench/gpu_search.sh OUTDIR [bench/search.py options]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu_search.sh OUTDIR [options]}; shift
mkdir -p "$out"
export PYTHONUNBUFFERED=1
bash bench/gpu_node.sh --help > "$out/setup.log" 2>&1
export PYTHONPATH=/tmp/permenum-site
repo=$PWD
(cd /tmp && python3 "$repo/bench/search.py" --device gpu "$@") > "$out/search.log" 2>&1
for n in 1000000 10000000; do
  echo "== permenum search nqueens $n --device gpu (stdout: the board, to /dev/null)"
  (cd /tmp && /usr/bin/time -f "whole command: %e s, %M KB" python3 -m permenum search nqueens $n --device gpu --seed 3 > /dev/null)
done > "$out/whole.log" 2>&1
head -3 "$out/setup.log"; tail -n 12 "$out/search.log"; grep -E "^==|found by|whole command" "$out/whole.log"
