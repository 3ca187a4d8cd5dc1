"""What a kernel becomes on an NVIDIA GPU: its PTX from the OpenCL driver, then ptxas's resource line and the
SASS opcode counts of the function (the machine's own ptxas and cuobjdump; bench/NOTES.md, issue 19 lever 4).

    python3 bench/sass.py OUTDIR/fc costas.cl costas_fc -DNMAX=20 -DCANONICAL=1 -DWG=64 -DMIN_DEPTH=5

Writes OUTDIR/fc.ptx and .sass (the .cubin in a temporary folder: the device returns a few files only);
prints registers, spills and the 25 most frequent opcodes. A fetched .ptx can be read here the same way
with `ptxas` and PyPI's nvidia-cuda-cuobjdump.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pyopencl as cl

from permenum.solver.devices import select_devices
from permenum.solver.opencl import device_context


def main() -> None:
    out, filename, function, *options = sys.argv[1:]
    dev = device_context(select_devices("gpu")[0])
    program = dev.program(filename, tuple(options))
    ptx = program.get_info(cl.program_info.BINARIES)[0].rstrip(b"\0")  # ptxas stops at the driver's NUL
    base = Path(out)
    base.with_suffix(".ptx").write_bytes(ptx)
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        report = subprocess.run(["ptxas", "-arch=sm_90", "-v", f"--entry={function}", str(base.with_suffix(".ptx")),
                                 "-o", str(cubin)], capture_output=True, text=True)
        print(" ".join(options), "|", " ".join(line.split("info    : ")[-1] for line in report.stderr.splitlines()
                                              if "Used" in line or "spill" in line))
        sass = subprocess.run(["cuobjdump", "-sass", "-fun", function, str(cubin)], capture_output=True, text=True,
                              check=True).stdout
    base.with_suffix(".sass").write_text(sass)
    ops = collections.Counter(m.group(1).split(".")[0] for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", sass))
    print(f"{sum(ops.values())} instructions:", ", ".join(f"{op} {c}" for op, c in ops.most_common(25)))


if __name__ == "__main__":
    main()
