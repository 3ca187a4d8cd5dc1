"""scripts/install.sh waits for another apt's dpkg lock (as `apt-get -o DPkg::Lock::Timeout=600` does) rather
than failing at once; run here with stand-ins for apt-get, dpkg and the venv's python."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "install.sh"


def test_every_apt_get_waits_for_the_dpkg_lock(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / "install.sh")
    bin_dir, calls = tmp_path / "bin", tmp_path / "apt-calls"
    bin_dir.mkdir()
    stand_ins = {"apt-get": f'echo "$*" >> {calls}', "dpkg": "exit 1",  # pocl-opencl-icd missing: apt is asked
                 "sudo": '"$@"', "python3": "exit 0"}
    venv_python = tmp_path / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    for path, body in [*((bin_dir / name, body) for name, body in stand_ins.items()), (venv_python, "exit 0")]:
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", str(tmp_path / "scripts" / "install.sh")], env=env, check=True, capture_output=True)
    lines = calls.read_text().splitlines()
    assert [line.split()[2] for line in lines] == ["update", "install"]
    assert all(line.startswith("-o DPkg::Lock::Timeout=600 ") for line in lines), lines
