"""OpenCL device choice: ``gpu|cpu|accelerator|all|PLATFORM:DEVICE``, defaulting to a GPU when one exists.

Inside a SLURM task NVIDIA's OpenCL platform already honours ``CUDA_VISIBLE_DEVICES`` set by
``--gres=gpu:G``, so "gpu" means the GPUs SLURM assigned; ``GPU_DEVICE_ORDINAL`` is applied here
for platforms that do not read it themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import pyopencl as cl

from permenum.errors import UserError

_TYPES = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU, "accelerator": cl.device_type.ACCELERATOR}


@dataclass(frozen=True)
class DeviceRef:
    platform_index: int
    device_index: int
    device: cl.Device

    @property
    def label(self) -> str:
        return f"{self.platform_index}:{self.device_index} {self.device.platform.name.strip()} / {self.device.name.strip()}"

    @property
    def is_gpu(self) -> bool:
        return bool(self.device.type & cl.device_type.GPU)


@lru_cache(maxsize=None)
def _compiles(platform_index: int, device_index: int) -> bool:
    """Whether the device's compiler builds a trivial kernel.

    PyPI's PoCL 3.0 (LLVM 14) fails on CPUs newer than its LLVM ("unknown target CPU 'generic'",
    seen on AMD Zen 5) while Debian's PoCL 3.1 works there; such a device is skipped, not chosen.
    """
    device = cl.get_platforms()[platform_index].get_devices()[device_index]
    try:
        cl.Program(cl.Context([device]), "__kernel void probe(__global int *a) { a[0] = 1; }").build()
    except cl.Error:
        return False
    return True


def _working(refs: list[DeviceRef]) -> list[DeviceRef]:
    return [r for r in refs if _compiles(r.platform_index, r.device_index)]


def all_devices() -> list[DeviceRef]:
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    refs = []
    for pi, platform in enumerate(platforms):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        refs.extend(DeviceRef(pi, di, d) for di, d in enumerate(devices))
    return refs


def _slurm_gpu_filter(refs: list[DeviceRef]) -> list[DeviceRef]:
    ordinal = os.environ.get("GPU_DEVICE_ORDINAL", "").strip()
    if not ordinal or os.environ.get("CUDA_VISIBLE_DEVICES"):
        return refs
    wanted = {int(x) for x in ordinal.split(",") if x.strip().isdigit()}
    return [r for i, r in enumerate(refs) if i in wanted] or refs


def select_devices(spec: str | None) -> list[DeviceRef]:
    """Resolve a device spec to devices, or raise UserError naming what exists."""
    refs = all_devices()
    if not refs:
        raise UserError("no OpenCL device found: install PoCL (`pip install 'permenum[pocl]'`) or a GPU driver's ICD")
    spec = (spec or "default").strip().lower()
    available = "; ".join(r.label for r in refs)
    if spec == "default":
        gpus = _slurm_gpu_filter([r for r in refs if r.is_gpu])
        if gpus:
            return gpus[:1]
        working = _working([r for r in refs if r.device.type & cl.device_type.CPU] or refs)
        if not working:
            raise UserError(f"no OpenCL device here builds kernels (tried: {available}); install Debian's pocl-opencl-icd")
        return working[:1]
    if spec == "all":
        return _working(refs) or refs
    if spec in _TYPES:
        chosen = [r for r in refs if r.device.type & _TYPES[spec]]
        if spec == "cpu":
            chosen = _working(chosen) or chosen
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
