#!/usr/bin/env bash
# Install what the tests need, then run them, a worker a core (pytest-xdist; the real-cluster tests on two):
#   bash scripts/test.sh          every unit test, the local flows and one real SLURM flow end to end
#   bash scripts/test.sh --all    the whole suite, every real-cluster test included (what .ci/run runs)
# Further arguments go to pytest (-n 0: no workers; a -m of your own replaces the selection). The slowest 15
# tests are listed at the end of each run.
set -euo pipefail
cd "$(dirname "$0")/.."
select=(-m "not slurm or smoke")
workers=auto
args=()
for arg in "$@"; do
    # --all: one worker more than cores, as the real-cluster tests' two workers mostly wait on SLURM
    if [ "$arg" = "--all" ]; then select=(); workers=$(( $(nproc) + 1 )); else args+=("$arg"); fi
done
bash scripts/install.sh --test
exec .venv/bin/pytest -q -ra --durations=15 -n "$workers" --dist loadgroup ${select[@]+"${select[@]}"} ${args[@]+"${args[@]}"}
