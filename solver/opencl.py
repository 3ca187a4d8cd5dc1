"""Contexts, queues and built programs, cached per device so a task builds each program once.

pyopencl also caches binaries on disk, keyed by source, options and device; on a cluster set
``PYOPENCL_CACHE_DIR`` to node-local scratch so array tasks do not queue on one lock in $HOME.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from importlib import resources

import pyopencl as cl

from permenum.solver.devices import DeviceRef

_lock = threading.Lock()
_contexts: dict[tuple[int, int], "DeviceContext"] = {}


def kernel_source(filename: str) -> str:
    return resources.files("permenum.solver").joinpath("kernels", filename).read_text()


class BuildError(RuntimeError):
    """A kernel failed to build; the message carries the options and the compiler log."""


@dataclass
class DeviceContext:
    ref: DeviceRef
    context: cl.Context
    queue: cl.CommandQueue
    _programs: dict[tuple[str, tuple[str, ...]], cl.Program] = field(default_factory=dict)

    def program(self, filename: str, options: tuple[str, ...]) -> cl.Program:
        key = (filename, options)
        with _lock:
            if key not in self._programs:
                try:
                    self._programs[key] = cl.Program(self.context, kernel_source(filename)).build(options=list(options))
                except cl.RuntimeError as exc:
                    raise BuildError(f"building {filename} with {' '.join(options)} failed on {self.ref.label}: {exc}") from exc
            return self._programs[key]


def device_context(ref: DeviceRef) -> DeviceContext:
    key = (ref.platform_index, ref.device_index)
    with _lock:
        if key not in _contexts:
            ctx = cl.Context([ref.device])
            queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
            _contexts[key] = DeviceContext(ref, ctx, queue)
        return _contexts[key]


def launch_lanes(ref: DeviceRef, nstates: int, local: int | None) -> int:
    """Work-items to launch for an atomic-counter kernel: enough to fill the device, never idle ones."""
    per_cu = 2048 if ref.is_gpu else 8
    lanes = min(max(nstates, 1), ref.device.max_compute_units * per_cu)
    if local:
        lanes = -(-lanes // local) * local
    return lanes
