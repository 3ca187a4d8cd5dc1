"""The first build says so: once per process, naming the cache, and only when a build is slow."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from permenum.kernel_cache import BuildNotice, cache_dir


def test_a_slow_build_says_so_once_naming_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POCL_CACHE_DIR", str(tmp_path / "kcache"))
    lines: list[str] = []
    notice = BuildNotice(lines.append, after=0.05)
    with notice.building("nqueens.cl", "0:0 PoCL / cpu", "Portable Computing Language"):
        time.sleep(0.3)  # a build from source
    with notice.building("costas.cl", "0:0 PoCL / cpu", "Portable Computing Language"):
        time.sleep(0.3)  # the next one is not announced again
    assert len(lines) == 1 and "nqueens.cl" in lines[0] and str(tmp_path / "kcache") in lines[0]


def test_a_fast_build_is_silent() -> None:
    lines: list[str] = []
    notice = BuildNotice(lines.append, after=0.5)
    with notice.building("nqueens.cl", "0:0 NVIDIA CUDA / H100", "NVIDIA CUDA"):
        pass  # loaded from the cache
    time.sleep(0.6)
    assert lines == []


def test_each_platform_names_its_own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("POCL_CACHE_DIR", raising=False)
    assert cache_dir("Portable Computing Language") == tmp_path / "pocl" / "kcache"
    assert cache_dir("Intel(R) OpenCL") == tmp_path / "pyopencl"
    monkeypatch.setenv("CUDA_CACHE_PATH", str(tmp_path / "nv"))
    assert cache_dir("NVIDIA CUDA") == tmp_path / "nv"


def test_a_first_command_on_an_empty_cache_says_it_builds(tmp_path: Path) -> None:
    """The real thing: `enumerate` on PoCL with an empty kernel cache builds from source (seconds) and says
    so once on stderr, naming that cache; the second command loads the builds and says nothing."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "POCL_CACHE_DIR": str(tmp_path / "kcache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    cmd = [sys.executable, "-m", "permenum.cli", "enumerate", "nqueens", "8", "--device", "cpu"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    assert first.stderr.count("building OpenCL kernel") == 1 and str(tmp_path / "kcache") in first.stderr
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    assert "building OpenCL kernel" not in second.stderr and "total 92" in second.stdout


def test_a_run_of_several_workers_says_it_once(tmp_path: Path) -> None:
    """Every worker process builds its kernels on an empty cache; only the first says so (a node of 8 GPUs
    would otherwise print 8 lines)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "POCL_CACHE_DIR": str(tmp_path / "kcache"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    run = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "permenum.cli", "pool", "nqueens", "9", "--num-partitions", "4", str(run)],
                   env=env, capture_output=True, text=True, check=True)
    done = subprocess.run([sys.executable, "-m", "permenum.cli", "run", str(run), "--device", "cpu/2", "-w", "2"],
                          env=env, capture_output=True, text=True, check=True)
    # at most one: the first worker may find its kernels cached by another by the time it builds
    assert done.stderr.count("building OpenCL kernel") <= 1, done.stderr
