"""Which physical device counted: the PCI bus id (or UUID) a result records beside the model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from permenum.jobs.ledger.collect import collect
from permenum.jobs.ledger.report import build_report
from permenum.layout import RunLayout
from permenum.records import DeviceUse, write_record, read_result
from permenum.solver import devices
from permenum.solver.devices import device_identity, select_devices
from tests.conftest import published


class _Topology:
    bus, device, function = 0x43, 0, 0


class _Fake:
    """A device that answers only the queries its extensions name, as a driver does."""

    def __init__(self, extensions: str, answers: dict[int, object]) -> None:
        self.extensions, self._answers = extensions, answers

    def get_info(self, code: int) -> object:
        import pyopencl as cl

        if code not in self._answers:
            raise cl.LogicError("clGetDeviceInfo failed: INVALID_VALUE")
        return self._answers[code]


def test_identity_from_each_vendors_extension() -> None:
    nv = _Fake("cl_khr_fp64 cl_nv_device_attribute_query", {0x4008: 0x1B, 0x4009: 0, 0x400A: 0})
    assert device_identity(nv) == "0000:1b:00.0"  # type: ignore[arg-type]
    old_nv = _Fake("cl_nv_device_attribute_query", {0x4008: 0xC3, 0x4009: 0})  # a driver without the domain query
    assert device_identity(old_nv) == "0000:c3:00.0"  # type: ignore[arg-type]
    amd = _Fake("cl_amd_device_attribute_query", {0x4037: _Topology()})
    assert device_identity(amd) == "0000:43:00.0"  # type: ignore[arg-type]
    assert device_identity(_Fake("cl_khr_fp64", {})) == ""  # type: ignore[arg-type]


def test_pocl_devices_have_an_identity_or_none(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for ref in select_devices("cpu"):
        identity = ref.identity  # PoCL's CPU device: "" (no PCI bus, no UUID), never a failure
        assert identity == "" or identity.startswith("uuid:") or identity.count(":") == 2, identity
        monkeypatch.setattr(devices, "_raw_info", lambda *a: None)  # the OpenCL library cannot be asked
        assert device_identity(ref.device) in ("", identity)


def test_results_name_the_device_and_old_ones_still_read(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 10, run, "--num-partitions", 3, check=True)
    cli("run", run, "--device", "cpu", check=True)
    first, second = (run / "results" / f"part-0000{i}.json" for i in (0, 1))
    assert all("identity" in made for made in json.loads(first.read_text())["device_provenance"].values())

    # written before results named the device: no "identity" key at all
    content = json.loads(first.read_text())
    for made in content["device_provenance"].values():
        del made["identity"]
    del content["sha256"]
    write_record(first, content)
    assert all(d.identity == "" for d in read_result(first).devices)

    # a GPU's result, as a one-GPU task writes it: the label every such task has, and its bus id
    gpu = DeviceUse("0:0 NVIDIA CUDA / NVIDIA H100 80GB HBM3", 1, 0.1, 1.0, "k", "NVIDIA H100 80GB HBM3",
                    "NVIDIA CUDA / OpenCL 3.0", "580.159", (), 1, "0000:1b:00.0")
    record = read_result(second)
    write_record(second, dataclasses.replace(record, devices=(dataclasses.replace(gpu, states=record.states),)).to_json())
    assert read_result(second).devices[0].identity == "0000:1b:00.0"

    c = collect(RunLayout(run))
    assert c.total == published("nqueens_total", 10)
    wide = {"COLUMNS": "300"}
    report = build_report(RunLayout(run))
    assert gpu.label + " @ 0000:1b:00.0" in [d.device for d in report.devices()]
    assert "NVIDIA H100 80GB HBM3" in [d.device for d in report.devices(by_model=True)]
    per_device = cli("report", run, check=True, env=wide).stdout
    assert "NVIDIA H100 80GB HBM3 @ 0000:1b:00.0" in per_device, per_device
    by_model = cli("report", run, "--by-model", check=True, env=wide).stdout
    assert "0000:1b:00.0" not in by_model and "NVIDIA H100 80GB HBM3" in by_model
