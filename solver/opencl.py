"""Contexts, queues and built programs, cached per device so a task builds each program once.

pyopencl also caches binaries on disk, keyed by source, options and device; on a cluster set
``PYOPENCL_CACHE_DIR`` to node-local scratch so array tasks do not queue on one lock in $HOME.
"""

from __future__ import annotations

import hashlib
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources

import numpy as np
import pyopencl as cl

from permenum.kernel_cache import BUILDS
from permenum.problems import StateBatch
from permenum.problems.base import ChildBatch
from permenum.solver.devices import DeviceRef, probed_context, select_devices

_lock = threading.Lock()  # guards the two dicts below, held only to look up
_contexts: dict[tuple[int, int, int | None], "DeviceContext"] = {}
_creating: dict[tuple[int, int, int | None], threading.Lock] = {}  # per device: contexts are made side by side


def kernel_source(filename: str) -> str:
    return resources.files("permenum.solver").joinpath("kernels", filename).read_text()


def build_id(filename: str, options: tuple[str, ...]) -> str:
    """Which build counted (in every result): a hash of the kernel's file name, source and build options."""
    text = "\0".join((filename, kernel_source(filename), " ".join(options)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class BuildError(RuntimeError):
    """A kernel failed to build; the message carries the options and the compiler log."""


@dataclass
class DeviceContext:
    ref: DeviceRef
    context: cl.Context
    queue: cl.CommandQueue
    _programs: dict[tuple[str, tuple[str, ...]], cl.Program] = field(default_factory=dict)
    _constants: dict[tuple[str, int], cl.Buffer] = field(default_factory=dict)  # tables every task shares
    _build_lock: threading.Lock = field(default_factory=threading.Lock)  # per device: devices build side by side
    #: One batch counted at a time, across the tasks of this process (the local executor overlaps a task's
    #: last launches with the next task's start): on the one in-order queue, a task's downloads would
    #: otherwise wait behind the next task's kernel, so both would end together and their successors
    #: start together, leaving the device idle while they prepare.
    launching: threading.Lock = field(default_factory=threading.Lock)

    def program(self, filename: str, options: tuple[str, ...]) -> cl.Program:
        # NVIDIA's compiler always says something, so pyopencl warned "Non-empty compiler output encountered" on
        # every build that succeeded; a failed one raises BuildError with the log. PYOPENCL_COMPILER_OUTPUT=1
        # still shows the whole log (pyopencl then warns with the log itself, which this does not match). Set
        # at each build, not at import: a filter is the process's, and whoever saved the filters may restore them.
        warnings.filterwarnings("ignore", message="Non-empty compiler output encountered", category=cl.CompilerWarning)
        key = (filename, options)
        with self._build_lock:
            if key not in self._programs:
                try:
                    with BUILDS.building(filename, self.ref.label, self.ref.platform,  # says so once if slow
                                         f"{build_id(filename, options)} {self.ref.model} {self.ref.device.driver_version}"):
                        self._programs[key] = cl.Program(self.context, kernel_source(filename)).build(options=list(options))
                except cl.RuntimeError as exc:
                    raise BuildError(f"building {filename} with {' '.join(options)} failed on {self.ref.label}: {exc}") from exc
            return self._programs[key]

    def constant(self, key: tuple[str, int], make: Callable[[], np.ndarray]) -> cl.Buffer:
        """A read-only table uploaded once per device and kept for the process (a task's own copy would be
        freed while the next task's kernel runs: see Staged.release)."""
        with self._build_lock:
            if key not in self._constants:
                self._constants[key] = upload(self, make())
            return self._constants[key]


def device_context(ref: DeviceRef) -> DeviceContext:
    """The device's one context (its probe's, if it was probed) and profiling queue, made on first use
    (one device's slow start, PoCL's, does not hold back another's)."""
    key = ref.key
    with _lock:
        creating = _creating.setdefault(key, threading.Lock())
    with creating:
        with _lock:
            if key in _contexts:
                return _contexts[key]
        ctx = probed_context(ref) or cl.Context([ref.device])
        queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        with _lock:
            _contexts[key] = DeviceContext(ref, ctx, queue)
            return _contexts[key]


def open_first(spec: str | None) -> DeviceContext:
    """The first device ``spec`` names (solver.devices), its context made: a search's walks share one device,
    and `estimate` samples on one; the default names every GPU, and the others would only cost contexts."""
    return device_context(select_devices(spec)[0])


def open_if_alone(spec: str | None) -> int:
    """How many devices ``spec`` names (an unknown one is refused here, before any work); a lone device's
    context is made now, as its task runs in this process (`enumerate` starts it on a thread while it checks
    its settings, before the pool is built: on an H100 the probe and the context are 0.3 s, on PoCL
    0.15-0.4 s). Several devices are opened by their own processes (jobs.local, jobs.counting.device_process): a
    context here would only cost time and GPU memory."""
    refs = select_devices(spec)
    if len(refs) == 1:
        device_context(refs[0])
    return len(refs)


GPU_STATES_PER_LANE = 16


def device_lanes(ref: DeviceRef) -> int:
    """Work-items that fill the device (a GPU: 2048 per compute unit, its resident-thread limit)."""
    return ref.device.max_compute_units * (2048 if ref.is_gpu else 8)


def first_chunk(ref: DeviceRef) -> int:
    """States in a device's first launch of a task.

    A GPU: GPU_STATES_PER_LANE per lane. A launch ends on its slowest lane, so with few states per
    lane the tail dominates (H200, N-Queens 20 in one launch: 1.3 M states 7.0 s, 11.7 M smaller ones
    4.3 s; N=21: four launches of 1.8 states per lane 128 s, one of 7 per lane 57 s). A CPU: a probe
    of 2 states per compute unit (at least 64), so that beside GPUs it learns its rate in seconds and
    does not hold the task's end with a first chunk it cannot finish in time (PHACT's failure case).
    """
    return GPU_STATES_PER_LANE * device_lanes(ref) if ref.is_gpu else max(64, 2 * ref.device.max_compute_units)


def min_chunk(ref: DeviceRef) -> int:
    """The fewest states a launch takes once rates are known: a GPU keeps its first chunk's size (its tail)."""
    return first_chunk(ref) if ref.is_gpu else 1


def launch_lanes(ref: DeviceRef, nstates: int, local: int | None, cap: int | None = None) -> int:
    """Work-items to launch for an atomic-counter kernel: enough to fill the device (or ``cap``), never idle
    ones; on a CPU a work-group per compute unit at least (PoCL runs a work-group on one core: Costas fc's
    64-item groups ran order 15 in 2.93 s on one of the two cores here, 1.47 s on both)."""
    limit = device_lanes(ref) if cap is None else min(cap, device_lanes(ref))
    lanes = min(max(nstates, 1), limit)
    if local:
        groups = -(-lanes // local)
        if not ref.is_gpu:
            groups = max(groups, min(ref.device.max_compute_units, nstates))
        lanes = groups * local
    return lanes


@dataclass
class BatchCounts:
    """Per-state raw counts (uint64), optional per-state node counts, the kernel's own time, and
    for problems that report them, the solutions found (one row each).

    A state's counters are the kernel's ulongs: made only after a launch shorter than WRAP_SECONDS (checked
    here), no state's count or nodes can have wrapped; the host sums them exactly (problems.base.exact_sum)."""

    counts: np.ndarray
    nodes: np.ndarray | None
    kernel_seconds: float
    solutions: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kernel_seconds >= WRAP_SECONDS:
            raise CounterBoundError(f"a launch ran {self.kernel_seconds:.3g} s: a state's 64-bit count could have "
                                    f"passed 2^64 after {WRAP_SECONDS:.3g} s; its counts are not trusted (count its "
                                    "partition with shorter launches: --chunk-seconds, a deeper pool)")


#: How long one launch must run before a state's ulong counter could wrap: a work-item adds at most one
#: leaf per clock (at most 10 GHz), a leaf at most 8 x 64 (the edges mode's weight x a mask's bits; Costas
#: adds 1 per array, nodes 1 per node): 2^64 / (10^10 x 512) s, 42 days. Launches last seconds (--chunk-seconds).
WRAP_SECONDS = 2.0 ** 64 / (1e10 * 512)


class CounterBoundError(RuntimeError):
    """A launch ran so long that the kernel's per-state counters are no longer provably exact."""


@dataclass
class Staged:
    """A batch with its inputs already on the device: uploaded by the thread that refines ahead, while
    the device counts the chunk before (on an H100, N-Queens 21: 0.2 s of each 8 M-state launch)."""

    batch: StateBatch | ChildBatch
    buffers: list[cl.Buffer]

    def release(self) -> None:
        """Free the device buffers now. NVIDIA's OpenCL frees a buffer used on a queue only once that
        queue is idle: left to the garbage collector, a task's buffers went while the next task's kernel
        ran, and the task waited that kernel out (1.6 s a partition, every other one, on an H100)."""
        for buffer in self.buffers:
            buffer.release()
        self.buffers = []


def upload(dev: DeviceContext, array: np.ndarray) -> cl.Buffer:
    return cl.Buffer(dev.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(array))


def zeros(dev: DeviceContext, count: int, dtype: type) -> cl.Buffer:
    host = np.zeros(max(count, 1), dtype)
    return cl.Buffer(dev.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)


def download(dev: DeviceContext, buf: cl.Buffer, count: int, dtype: type) -> np.ndarray:
    host = np.empty(max(count, 1), dtype)
    cl.enqueue_copy(dev.queue, host, buf)
    return host[:count]


def timed_launch(dev: DeviceContext, kernel: cl.Kernel, nstates: int, local: int | None, *args: object,
                 max_lanes: int | None = None) -> float:
    """Launch an atomic-counter kernel over ``nstates`` states on at most ``max_lanes`` work-items (default:
    the device's resident limit); returns the kernel's seconds (profiling event)."""
    lanes = launch_lanes(dev.ref, nstates, local, max_lanes)
    t0 = time.perf_counter()
    event = kernel(dev.queue, (lanes,), (local,) if local else None, *args)
    event.wait()
    return event_seconds(event, time.perf_counter() - t0)


def event_seconds(event: cl.Event, fallback: float = 0.0) -> float:
    """A finished command's device seconds from its profiling info (``fallback`` where it has none)."""
    try:
        return (event.profile.end - event.profile.start) * 1e-9
    except cl.Error:
        return fallback
