"""Where built OpenCL kernels are cached, and the one line a process prints while it builds one.

A kernel's first build on a device takes seconds (PoCL: 1-3 s a program; NVIDIA's compiler likewise),
later ones load it from a cache in a fraction of that. Without a word, a new user's first command looks
slow for no reason, so a build still running after ``NOTICE_AFTER`` seconds says so, once per process,
naming the cache. Who keeps the cache depends on the platform: PoCL and NVIDIA's driver cache builds
themselves (pyopencl then leaves them to it), other platforms use pyopencl's cache. NVIDIA's driver caches
only the binary: the OpenCL front end runs again on every build, past ``NOTICE_AFTER``, so a build is
announced only the first time this user builds it (the same source, options -- a size, a pool depth --,
device model and driver, for the same cache), remembered by an empty file under ``SEEN``. Standard library
only.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: A build still running after this many seconds is announced: a load from the cache takes far less
#: (PoCL: a Costas or N-Queens program 0.17-0.19 s from source, 0.03-0.04 s from its cache).
NOTICE_AFTER = 0.1


def _xdg_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def _seen(platform: str, build: str) -> Path:
    """The file that says ``build`` (a kernel's build id, device model and driver) was built for this cache."""
    digest = hashlib.sha256(f"{cache_dir(platform)}\0{platform}\0{build}".encode()).hexdigest()[:32]
    return _xdg_cache() / "permenum" / "built" / digest


def cache_dir(platform: str) -> Path:
    """Where ``platform``'s built kernels are cached, and so where a second run finds them."""
    if "Portable Computing Language" in platform:
        return Path(os.environ.get("POCL_CACHE_DIR") or _xdg_cache() / "pocl" / "kcache")
    if "NVIDIA" in platform:
        return Path(os.environ.get("CUDA_CACHE_PATH") or Path.home() / ".nv" / "ComputeCache")
    return _xdg_cache() / "pyopencl"


def cache_hint(platform: str) -> str:
    """How to move the cache (to node-local scratch on a cluster, so array tasks share one per node)."""
    if "Portable Computing Language" in platform:
        return "POCL_CACHE_DIR moves it"
    if "NVIDIA" in platform:
        return "NVIDIA's driver keeps the binary; CUDA_CACHE_PATH moves it"
    return "XDG_CACHE_HOME moves it"


class BuildNotice:
    """Says once per process (once per command: its other processes are silenced) that kernels are being
    built, while the first slow build runs."""

    def __init__(self, write: Callable[[str], None] | None = None, after: float = NOTICE_AFTER) -> None:
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self.after = after
        self._said = threading.Event()

    @contextmanager
    def building(self, what: str, device: str, platform: str, build: str) -> Iterator[None]:
        """Around one build of ``what`` on ``device``: past ``after`` seconds, one line on stderr, unless this
        ``build`` (its build id, device model and driver) was built before for the same cache."""
        seen = _seen(platform, build)
        timer = None
        if not self._said.is_set() and not seen.exists():
            timer = threading.Timer(self.after, self._say, (what, device, platform))
            timer.daemon = True
            timer.start()
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()
        try:  # built: not announced again
            seen.parent.mkdir(parents=True, exist_ok=True)
            seen.touch()
        except OSError:
            pass  # a read-only home: the notice may come again, nothing worse

    @property
    def said(self) -> bool:
        """Whether this process has said it (or was silenced): its device processes then stay silent too."""
        return self._said.is_set()

    def silence(self) -> None:
        """Say nothing in this process: another process of the same command speaks for it (a run's second
        worker, a task's second device process), so a node of 8 GPUs prints one line, not 8."""
        self._said.set()

    def _say(self, what: str, device: str, platform: str) -> None:
        if self._said.is_set():
            return
        self._said.set()
        self.write(f"building OpenCL kernel {what} for {device}: once for each size and pool depth (seconds "
                   f"each); later runs load it from the kernel cache in {cache_dir(platform)} ({cache_hint(platform)})")


#: The process's notice: every DeviceContext's builds share it, so a process says it once.
BUILDS = BuildNotice()
