"""An interrupted `enumerate` keeps what it counted where its message says: the temporary run is deleted
only after a success, and `permenum run` on the folder it names resumes to the published count."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import published


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGUSR1, signal.SIGTERM])
def test_an_interrupted_enumerate_keeps_its_run_where_it_says(tmp_path: Path, cli, sig: int) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C, a time limit's USR1 (`timeout -s USR1`, SLURM's --signal), `timeout`'s TERM. N-Queens 16 on
    PoCL here (2 cores): about 3.5 s of kernel in 0.3 s chunks, so the signal lands mid-count."""
    scratch = tmp_path / "tmp dir"  # where the temporary run goes (TMPDIR), so the test can watch it
    scratch.mkdir()
    cmd = [sys.executable, "-m", "permenum", "enumerate", "nqueens", "16", "--chunk-seconds", "0.3"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 120
    while not list(scratch.glob("permenum-nqueens-16-*/run/checkpoints/*.ckpt")):
        assert time.monotonic() < deadline and proc.poll() is None, "no checkpoint before the count ended"
        time.sleep(0.05)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 75, (out, err)
    match = re.search(r"run `permenum run (.+?)` again to resume", err)
    assert match, err
    [named_text] = shlex.split(match.group(1))
    named = Path(named_text)
    assert (named / "manifest.json").is_file() and list((named / "checkpoints").glob("*.ckpt")), err
    assert f"kept the run in {match.group(1)}" in err, err
    resumed = cli("run", named, check=True)
    assert "every partition is counted" in resumed.stdout
    total = cli("collect", named, check=True).stdout
    assert f"total {published('nqueens_total', 16)} " in total and "matches the published count" in total
