#!/usr/bin/env bash
# Run bench/bench.py on a GPU node without network access:
#   bash bench/gpu_node.sh --device gpu --nqueens 18 19 20 --costas 14 15 16
# Installs pyopencl & co. from wheels brought along in .whl/ (cp312 manylinux: pyopencl, pytools,
# platformdirs, siphash24, zstandard) and permenum from this checkout into /tmp/permenum-site, and
# registers NVIDIA's OpenCL library when the driver has one but no ICD file names it.
set -euo pipefail
cd "$(dirname "$0")/.."
site=/tmp/permenum-site
if ! python3 -c "import pyopencl" 2>/dev/null; then
    ls .whl/*.whl >/dev/null 2>&1 || { echo "gpu_node.sh: pyopencl missing and no wheels in .whl/ (see bench/NOTES.md)" >&2; exit 1; }
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl/*.whl
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --upgrade --target "$site" . >/dev/null
python3 -m compileall -q "$site" >/dev/null 2>&1 || true  # as an installed package is: whole-command timings include imports
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
    lib=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
    lib=${lib:-$(ls /usr/lib/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 2>/dev/null | head -1)}
    if [ -n "$lib" ]; then mkdir -p /etc/OpenCL/vendors && echo "$lib" > /etc/OpenCL/vendors/nvidia.icd; fi
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
python3 -c "import pyopencl as cl; [print('platform:', p.name, '|', [d.name for d in p.get_devices()]) for p in cl.get_platforms()]"
exec python3 bench/bench.py "$@"
