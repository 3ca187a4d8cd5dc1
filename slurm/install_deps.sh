#!/usr/bin/env bash
# Install Debian's SLURM + munge only when a needed binary is missing, so
# repeated runs (e.g. from the test fixture) cost nothing. Fails loudly.
set -euo pipefail

missing=()
for bin in slurmctld slurmd munged sbatch; do
    if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
        missing+=("$bin")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install_deps.sh: missing ${missing[*]}; installing slurm-wlm munge" >&2
if [ "$(id -u)" -ne 0 ]; then
    echo "install_deps.sh: must run as root to apt-get install" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends slurm-wlm munge; } >"$log" 2>&1; then
    echo "install_deps.sh: apt-get failed; log tail:" >&2
    tail -n 40 "$log" >&2
    exit 1
fi
for bin in slurmctld slurmd munged sbatch; do
    if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
        echo "install_deps.sh: $bin still missing after install" >&2
        exit 1
    fi
done
