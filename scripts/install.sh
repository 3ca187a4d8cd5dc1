#!/usr/bin/env bash
# Install permenum into ./.venv with what it needs from Debian 12 and PyPI.
#   bash scripts/install.sh          the tool (matplotlib included, for `report --plot`), with PoCL's CPU OpenCL device
#   bash scripts/install.sh --test   also what the tests need (slurm-wlm, munge, pytest, pandas, duckdb, polars)
# Debian's pocl-opencl-icd is installed beside PyPI's PoCL: PyPI's PoCL 3.0 (LLVM 14) cannot build
# kernels on CPUs newer than its LLVM (seen on AMD Zen 5); permenum picks whichever PoCL works.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="pocl"
pkgs=()
if [ "${1:-}" = "--test" ]; then
    extra="test"
    for bin in slurmctld slurmd sbatch; do command -v "$bin" >/dev/null || [ -x "/usr/sbin/$bin" ] || pkgs+=(slurm-wlm); done
    command -v munged >/dev/null || [ -x /usr/sbin/munged ] || pkgs+=(munge)
fi
dpkg -s pocl-opencl-icd >/dev/null 2>&1 || pkgs+=(pocl-opencl-icd)
python3 -c "import ensurepip, venv" 2>/dev/null || pkgs+=(python3-venv)
if [ ${#pkgs[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
    echo "install.sh: apt-get install ${pkgs[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    wait_lock=(-o DPkg::Lock::Timeout=600)  # another apt (unattended-upgrades) holding the lock: wait, not fail
    $SUDO apt-get "${wait_lock[@]}" update -q >/dev/null
    $SUDO apt-get "${wait_lock[@]}" install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extra]"
# An editable install leaves the package uncompiled, and with PYTHONDONTWRITEBYTECODE set (as in many
# containers) every command compiled its modules again: about 0.1 s of each start, a SLURM task's included
.venv/bin/python -m compileall -q permenum poolgen solver jobs checkpoints slurm  # -q: only what fails
echo "install.sh: permenum installed in $(pwd)/.venv ($extra)" >&2
