"""The first build says so: once per process, naming the cache, and only when a build is slow."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from permenum.kernel_cache import BuildNotice, cache_dir


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Where the builds seen are remembered: this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def test_a_slow_build_says_so_once_naming_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POCL_CACHE_DIR", str(tmp_path / "kcache"))
    lines: list[str] = []
    notice = BuildNotice(lines.append, after=0.05)
    with notice.building("nqueens.cl", "0:0 PoCL / cpu", "Portable Computing Language", "b1"):
        time.sleep(0.3)  # a build from source
    with notice.building("costas.cl", "0:0 PoCL / cpu", "Portable Computing Language", "b2"):
        time.sleep(0.3)  # the next one is not announced again
    assert len(lines) == 1 and "nqueens.cl" in lines[0] and str(tmp_path / "kcache") in lines[0]


def test_a_fast_build_is_silent() -> None:
    lines: list[str] = []
    notice = BuildNotice(lines.append, after=0.5)
    with notice.building("nqueens.cl", "0:0 NVIDIA CUDA / H100", "NVIDIA CUDA", "b1"):
        pass  # loaded from the cache
    time.sleep(0.6)
    assert lines == []


def test_a_build_seen_before_is_not_announced_again_however_slow(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """NVIDIA's driver caches the binary, but its front end runs on every build, past the notice's delay: the
    notice said "a first run on a device" on every run. Now once per build (a new size or depth is one), and
    the line says so."""
    monkeypatch.setenv("CUDA_CACHE_PATH", str(tmp_path / "nv"))
    lines: list[str] = []
    for process in range(2):  # two runs: the second's builds were seen by the first
        notice = BuildNotice(lines.append, after=0.05)
        with notice.building("nqueens.cl", "0:0 NVIDIA CUDA / H100", "NVIDIA CUDA", "id-n21 H100 580"):
            time.sleep(0.3)
    assert len(lines) == 1 and "once for each size and pool depth" in lines[0]
    assert "a first run on a device" not in lines[0] and "NVIDIA's driver keeps the binary" in lines[0]
    with BuildNotice(lines.append, after=0.05).building("nqueens.cl", "0:0 NVIDIA CUDA / H100", "NVIDIA CUDA",
                                                        "id-n22 H100 580"):
        time.sleep(0.3)  # another size: a build of its own
    assert len(lines) == 2


def test_compiler_output_of_a_build_that_succeeded_is_silent_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyopencl's "Non-empty compiler output" warning reached the user on every NVIDIA build (its compiler always
    says something); its switch PYOPENCL_COMPILER_OUTPUT=1 still shows the log. A stand-in Program's build says
    what pyopencl says after NVIDIA's compiler."""
    import warnings

    import pyopencl as cl

    from permenum.solver.opencl import open_first

    class Talkative:
        def __init__(self, context: object, source: str) -> None:
            pass

        def build(self, options: list[str] | None = None) -> "Talkative":
            cl.compiler_output("ptxas info    : Used 40 registers")
            return self

    monkeypatch.setattr(cl, "Program", Talkative)
    device = open_first("cpu")
    for asked, options in ((None, ("-DA=1",)), ("1", ("-DA=2",))):
        if asked:
            monkeypatch.setenv("PYOPENCL_COMPILER_OUTPUT", asked)
        else:
            monkeypatch.delenv("PYOPENCL_COMPILER_OUTPUT", raising=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # what a user's -W or a test runner may set: the build's filter wins
            device.program("nqueens.cl", options)
        said = [str(w.message) for w in caught if issubclass(w.category, cl.CompilerWarning)]
        assert said == ([] if asked is None else ["ptxas info    : Used 40 registers"]), said


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
    cmd = [sys.executable, "-m", "permenum", "enumerate", "nqueens", "8", "--device", "cpu"]
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
    subprocess.run([sys.executable, "-m", "permenum", "pool", "nqueens", "9", "--num-partitions", "4", str(run)],
                   env=env, capture_output=True, text=True, check=True)
    done = subprocess.run([sys.executable, "-m", "permenum", "run", str(run), "--device", "cpu/2", "-w", "2"],
                          env=env, capture_output=True, text=True, check=True)
    # at most one: the first worker may find its kernels cached by another by the time it builds
    assert done.stderr.count("building OpenCL kernel") <= 1, done.stderr
