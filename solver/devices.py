"""OpenCL device choice: ``gpu|cpu|accelerator|all|PLATFORM:DEVICE``, defaulting to a GPU when one exists.

Inside a SLURM task NVIDIA's OpenCL platform already honours ``CUDA_VISIBLE_DEVICES`` set by
``--gres=gpu:G``, so "gpu" means the GPUs SLURM assigned; ``GPU_DEVICE_ORDINAL`` is applied here
for platforms that do not read it themselves.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import pyopencl as cl

from permenum.errors import UserError
from permenum.signals import stop_signals_held

_TYPES = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU, "accelerator": cl.device_type.ACCELERATOR}


@dataclass(frozen=True)
class DeviceRef:
    platform_index: int
    device_index: int
    device: cl.Device
    sub_index: int | None = None  # a sub-device of a split CPU (``SPEC/K``)
    shown_index: int | None = None  # its position in the node's list, where this process sees fewer (own_visibility)

    @property
    def key(self) -> tuple[int, int, int | None]:
        return (self.platform_index, self.device_index, self.sub_index)

    @property
    def label(self) -> str:
        sub = "" if self.sub_index is None else f"/{self.sub_index}"
        index = self.device_index if self.shown_index is None else self.shown_index
        return (f"{self.platform_index}:{index}{sub} {self.device.platform.name.strip()} / "
                f"{self.device.name.strip()}")

    @property
    def model(self) -> str:
        """The device's model, the same on every node that has one (``report`` groups by it)."""
        return self.device.name.strip()

    @property
    def platform(self) -> str:
        """The OpenCL platform and its version (e.g. ``NVIDIA CUDA / OpenCL 3.0 CUDA 12.4.131``)."""
        return f"{self.device.platform.name.strip()} / {self.device.platform.version.strip()}"

    @property
    def driver(self) -> str:
        return str(self.device.driver_version).strip()

    @property
    def identity(self) -> str:
        """Which physical device this is, the same in every process on its node: its PCI bus id
        (``0000:1b:00.0``, as sysfs and lspci write it) or ``uuid:...``; empty where the platform says
        neither (PoCL's CPU device). A result names it beside the model (DeviceUse.identity)."""
        return device_identity(self.device)

    @property
    def is_gpu(self) -> bool:
        return bool(self.device.type & cl.device_type.GPU)


#: OpenCL extensions' device queries (cl_ext.h): Khronos' PCI bus info (a struct of four cl_uint: domain,
#: bus, device, function) and UUID (16 bytes); NVIDIA's bus, slot (device) and domain; AMD's topology.
_PCI_BUS_INFO_KHR, _UUID_KHR = 0x410F, 0x106A
_PCI_BUS_ID_NV, _PCI_SLOT_ID_NV, _PCI_DOMAIN_ID_NV = 0x4008, 0x4009, 0x400A
_TOPOLOGY_AMD = 0x4037


def _pci(domain: int, bus: int, device: int, function: int) -> str:
    return f"{domain:04x}:{bus:02x}:{device:02x}.{function:x}"


def device_identity(device: cl.Device) -> str:
    """The device's PCI bus id or UUID from the extensions its platform has, first that answers; empty where
    none does. pyopencl asks NVIDIA's and AMD's own codes itself; Khronos' two it refuses before asking the
    driver ("Device.get_info failed: INVALID_VALUE" on pyopencl 2026.1), so those go through the OpenCL
    library pyopencl loaded (_raw_info)."""
    try:
        extensions = set(str(device.extensions).split())
    except cl.Error:
        return ""
    if "cl_khr_pci_bus_info" in extensions:
        raw = _raw_info(device, _PCI_BUS_INFO_KHR, 16)
        if raw is not None:
            return _pci(*(int.from_bytes(raw[i:i + 4], "little") for i in range(0, 16, 4)))
    if "cl_nv_device_attribute_query" in extensions:
        try:
            bus, slot = int(device.get_info(_PCI_BUS_ID_NV)), int(device.get_info(_PCI_SLOT_ID_NV))
        except (cl.Error, ValueError, TypeError):
            pass
        else:
            try:
                domain = int(device.get_info(_PCI_DOMAIN_ID_NV))  # drivers of 2021 on
            except (cl.Error, ValueError, TypeError):
                domain = 0
            return _pci(domain, bus, slot, 0)  # the slot id is the PCI device; a GPU is function 0
    if "cl_amd_device_attribute_query" in extensions:
        try:
            topology = device.get_info(_TOPOLOGY_AMD)
            return _pci(0, int(topology.bus), int(topology.device), int(topology.function))
        except (cl.Error, ValueError, TypeError, AttributeError):
            pass
    if "cl_khr_device_uuid" in extensions:
        raw = _raw_info(device, _UUID_KHR, 16)
        if raw is not None and any(raw):
            h = raw.hex()
            return f"uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return ""


def _raw_info(device: cl.Device, code: int, size: int) -> bytes | None:
    """clGetDeviceInfo through the OpenCL library this process loaded (pyopencl's), for codes pyopencl
    does not know; None where the library or the answer is not there."""
    import ctypes

    try:
        path = next(line.split(maxsplit=5)[-1] for line in open("/proc/self/maps")
                    if "libOpenCL" in line.rsplit("/", 1)[-1])
        get_info = ctypes.CDLL(path.strip()).clGetDeviceInfo
    except (StopIteration, OSError, AttributeError):
        return None
    buffer, returned = ctypes.create_string_buffer(size), ctypes.c_size_t(0)
    get_info.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    if get_info(ctypes.c_void_p(device.int_ptr), code, size, buffer, ctypes.byref(returned)) != 0 or returned.value != size:
        return None
    return buffer.raw


_probed: dict[tuple[int, int], cl.Context | None] = {}
_probing = threading.Lock()


def _compiles(ref: DeviceRef) -> bool:
    """Whether the device's compiler builds a trivial kernel (probed once a process).

    PyPI's PoCL 3.0 (LLVM 14) fails on CPUs newer than its LLVM ("unknown target CPU 'generic'",
    seen on AMD Zen 5) while Debian's PoCL 3.1 works there; such a device is skipped, not chosen. The
    probe's context is kept for the device's work (probed_context): on PoCL here a context is 0.07 s
    and the probe's build 0.06 s, of an `enumerate nqueens 16` of 1.2 s.
    """
    key = (ref.platform_index, ref.device_index)
    with _probing:
        if key not in _probed:
            device = platforms()[ref.platform_index].get_devices()[ref.device_index]
            try:
                context = cl.Context([device])
                cl.Program(context, "__kernel void probe(__global int *a) { a[0] = 1; }").build()
            except cl.Error:
                context = None
            _probed[key] = context
        return _probed[key] is not None


def probed_context(ref: DeviceRef) -> cl.Context | None:
    """The context a probe of the whole device made (None: not probed, or a sub-device)."""
    with _probing:
        return _probed.get((ref.platform_index, ref.device_index)) if ref.sub_index is None else None


def _is_cpu(ref: DeviceRef) -> bool:
    return bool(ref.device.type & cl.device_type.CPU)


def _usable(refs: list[DeviceRef]) -> list[DeviceRef]:
    """Those of ``refs`` that build kernels, with the CPU devices of one platform only (_one_cpu_platform
    says why): the first whose CPUs build, probed a platform at a time, so that a second PoCL is not
    probed once one works (0.06 s and a context here)."""
    cpus: list[DeviceRef] = []
    for platform in dict.fromkeys(r.platform_index for r in refs if _is_cpu(r)):
        cpus = [r for r in refs if _is_cpu(r) and r.platform_index == platform and _compiles(r)]
        if cpus:
            break
    return [r for r in refs if r in cpus or (not _is_cpu(r) and _compiles(r))]


def platforms() -> list[cl.Platform]:
    """The OpenCL platforms, asked for with the stop signals held: the first call starts the drivers, whose
    threads keep that mask (permenum.signals.stop_signals_held). PoCL links each kernel with `ld`, started
    from such a thread when the kernel is first launched; a USR1 sent to the whole process group killed that
    linker, and the worker process aborted on the failed link, reporting its partitions failed instead of
    checkpointed."""
    with stop_signals_held():
        return cl.get_platforms()


def all_devices() -> list[DeviceRef]:
    try:
        found = platforms()
    except cl.Error:
        found = []
    refs = []
    for pi, platform in enumerate(found):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        shown = _shown_indices(platform, len(devices))
        refs.extend(DeviceRef(pi, di, d, shown_index=shown[di] if shown else None) for di, d in enumerate(devices))
    return refs


#: Set beside CUDA_VISIBLE_DEVICES for a worker's process (own_visibility): its GPUs' positions in the
#: node's list, so that its devices keep the labels the node's list gives them (results, logs).
SHOWN_INDICES = "PERMENUM_GPU_POSITIONS"


def _shown_indices(platform: cl.Platform, count: int) -> list[int] | None:
    if "NVIDIA" not in platform.name:
        return None
    shown = [int(x) for x in os.environ.get(SHOWN_INDICES, "").split(",") if x.strip().isdigit()]
    return shown if len(shown) == count else None


def _one_cpu_platform(refs: list[DeviceRef]) -> list[DeviceRef]:
    """CPU devices of the first platform that has any: Debian's and PyPI's PoCL both expose the same
    cores, and taking both would run two kernels on every core (and count the CPU twice in a split)."""
    cpus = [r for r in refs if r.device.type & cl.device_type.CPU]
    if not cpus:
        return refs
    first = cpus[0].platform_index
    return [r for r in refs if not r.device.type & cl.device_type.CPU or r.platform_index == first]


def _slurm_gpu_filter(refs: list[DeviceRef]) -> list[DeviceRef]:
    ordinal = os.environ.get("GPU_DEVICE_ORDINAL", "").strip()
    if not ordinal or os.environ.get("CUDA_VISIBLE_DEVICES"):
        return refs
    wanted = {int(x) for x in ordinal.split(",") if x.strip().isdigit()}
    return [r for i, r in enumerate(refs) if i in wanted] or refs


@dataclass(frozen=True)
class Visibility:
    """What a process of its own is to see (own_visibility): its GPUs named for CUDA, their positions in the
    node's list (for their labels), and their models (checked once it sees them: check_seen)."""

    cuda_visible: str
    positions: str
    models: tuple[str, ...]


def own_visibility(spec: str | None, group: tuple[int, ...]) -> Visibility | None:
    """What a process of its own that counts on the devices at positions ``group`` of ``spec``'s list is
    to see (see_only), so that it initializes only those GPUs: with every GPU visible, each worker process
    of a node started them all (on 4 H100 a worker's partition was loaded 3.5 s into `enumerate`, against
    1.45 s for one GPU). None where this does not apply: other than NVIDIA's GPUs, a device named by its
    position (``PLATFORM:DEVICE``, which the narrowed list would renumber), sub-devices. The process then
    takes every device it sees (positions ``range(len(group))``)."""
    if (spec or "gpu").strip().lower() not in ("gpu", "default"):
        return None
    refs = select_devices(spec)
    chosen = [refs[k] for k in group]
    if not chosen or any(r.sub_index is not None or not r.is_gpu or "NVIDIA" not in r.device.platform.name
                         for r in refs):
        return None
    count = len(platforms()[chosen[0].platform_index].get_devices())
    visible = visible_subset(os.environ.get("CUDA_VISIBLE_DEVICES"), count, [r.device_index for r in chosen])
    shown = ",".join(str(r.device_index if r.shown_index is None else r.shown_index) for r in chosen)
    return None if visible is None else Visibility(visible, shown, tuple(r.model for r in chosen))


def see_only(visibility: Visibility) -> None:
    """In a process of its own, before OpenCL starts: see only the GPUs own_visibility named, labelled by
    their positions in the node's list."""
    os.environ["CUDA_VISIBLE_DEVICES"], os.environ[SHOWN_INDICES] = visibility.cuda_visible, visibility.positions


def check_seen(visibility: Visibility, refs: list[DeviceRef]) -> None:
    """UserError unless the process sees the GPUs it was to see: a driver that does not honour
    CUDA_VISIBLE_DEVICES, or lists its GPUs in another order than CUDA's, is named, not guessed around."""
    seen = tuple(r.model for r in refs)
    if seen != visibility.models:
        raise UserError(f"CUDA_VISIBLE_DEVICES={visibility.cuda_visible} showed {', '.join(seen) or 'no GPU'}, not "
                        f"{', '.join(visibility.models)}: name the devices with --device PLATFORM:DEVICE")


def visible_subset(visible: str | None, count: int, indices: list[int]) -> str | None:
    """The CUDA_VISIBLE_DEVICES naming the GPUs at ``indices`` of a platform that shows ``count`` GPUs under
    ``visible`` (unset: all, in CUDA's order); None where ``visible`` does not name exactly those ``count``."""
    names = [v.strip() for v in visible.split(",")] if visible else [str(i) for i in range(count)]
    if len(names) != count or any(not 0 <= i < count for i in indices) or len(set(indices)) != len(indices):
        return None
    return ",".join(names[i] for i in indices)


def _split(refs: list[DeviceRef], parts: int) -> list[DeviceRef]:
    """Each device cut into ``parts`` equal sub-devices (OpenCL device fission; CPUs support it)."""
    out: list[DeviceRef] = []
    for ref in refs:
        units = ref.device.max_compute_units
        if parts > units:
            raise UserError(f"cannot split {ref.label} into {parts} sub-devices: it has {units} compute units")
        try:
            subs = ref.device.create_sub_devices([cl.device_partition_property.EQUALLY, units // parts])[:parts]
        except cl.Error as exc:
            raise UserError(f"{ref.label} cannot be split into sub-devices ({exc})") from None
        out.extend(DeviceRef(ref.platform_index, ref.device_index, d, k) for k, d in enumerate(subs))
    return out


def _beside_gpus(refs: list[DeviceRef]) -> list[DeviceRef]:
    """With GPUs in the task, a CPU device gives up one core per GPU (a sub-device) to the host threads
    that prepare and feed the GPUs' chunks: a CPU kernel on every core slows them (PHACT's failure case)."""
    gpus = sum(r.is_gpu for r in refs)
    if not gpus:
        return refs
    out = []
    for ref in refs:
        units = ref.device.max_compute_units
        if ref.device.type & cl.device_type.CPU and units > gpus:
            try:
                sub = ref.device.create_sub_devices([cl.device_partition_property.EQUALLY, units - gpus])[0]
                ref = DeviceRef(ref.platform_index, ref.device_index, sub, 0)
            except cl.Error:
                pass  # no device fission: the whole CPU
        out.append(ref)
    return out


def select_devices(spec: str | None, only: tuple[int, ...] = ()) -> list[DeviceRef]:
    """Resolve a device spec to devices (those at positions ``only`` of its list, where given), or raise
    UserError naming what exists.

    ``SPEC/K`` splits each device SPEC names into K sub-devices (e.g. ``cpu/2``), which then run as
    separate devices: how multi-device scheduling is exercised on a machine with one CPU.
    """
    refs = _select(spec)
    if any(not 0 <= k < len(refs) for k in only):
        raise UserError(f"device {spec or 'default'} gives {len(refs)} devices, not the {max(only) + 1} asked for")
    return [refs[k] for k in only] if only else refs


def _select(spec: str | None) -> list[DeviceRef]:
    base, slash, parts = (spec or "").partition("/")
    if slash:
        if not parts.isdigit() or int(parts) < 1:
            raise UserError(f"unknown device {spec!r}: after '/' comes the number of sub-devices, e.g. cpu/2")
        return _split(_select(base or None), int(parts))
    refs = all_devices()
    if not refs:
        raise UserError("no OpenCL device found: install PoCL (`pip install 'permenum[pocl]'`) or a GPU driver's ICD")
    spec = (spec or "default").strip().lower()
    available = "; ".join(r.label for r in refs)
    if spec == "default":
        gpus = _slurm_gpu_filter([r for r in refs if r.is_gpu])
        if gpus:  # every GPU, as --help and the README say: `run` on a node of 4 used one of them
            return gpus
        working = _usable([r for r in refs if _is_cpu(r)] or refs)
        if not working:
            raise UserError(f"no OpenCL device here builds kernels (tried: {available}); install Debian's pocl-opencl-icd")
        return working[:1]
    if spec == "all":
        return _beside_gpus(_usable(refs) or _one_cpu_platform(refs))
    if spec in _TYPES:
        chosen = [r for r in refs if r.device.type & _TYPES[spec]]
        if spec == "cpu":
            chosen = _usable(chosen) or _one_cpu_platform(chosen)
        if spec == "gpu":
            chosen = _slurm_gpu_filter(chosen)
        if not chosen:
            raise UserError(f"unknown device {spec!r}: no {spec} device here (available: {available})")
        return chosen
    if ":" in spec:
        p, _, d = spec.partition(":")
        if p.isdigit() and d.isdigit():
            for r in refs:
                if r.platform_index == int(p) and r.device_index == int(d):
                    return [r]
    raise UserError(f"unknown device {spec!r} (use gpu, cpu, accelerator, all or PLATFORM:DEVICE; available: {available})")
