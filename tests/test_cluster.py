"""End-to-end checks of permenum.slurm.cluster against real slurmctld/slurmd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from permenum.slurm import cluster


JOB_TIMEOUT = 60.0


def _client(info: cluster.ClusterInfo, *args: str) -> str:
    """Run a SLURM client command against `info`'s cluster; return stdout."""
    proc = subprocess.run(
        list(args),
        env={**os.environ, **info.env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, f"{args} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _wait_gone(info: cluster.ClusterInfo, job_id: str) -> None:
    """Poll squeue (which lists only unfinished jobs) until the job has left it."""
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        if not _client(info, "squeue", "-h", "-j", job_id, "-o", "%i %T").strip():
            return
        time.sleep(0.5)
    pytest.fail(f"job {job_id} not finished after {JOB_TIMEOUT}s:\n{_client(info, 'squeue', '-a')}")


def _pids(state_dir: Path) -> dict[str, int]:
    return json.loads((state_dir / "pids.json").read_text())


@pytest.mark.slurm
def test_array_job_runs(slurm_cluster: cluster.ClusterInfo, tmp_path: Path) -> None:
    out_dir = tmp_path / "job out"
    out_dir.mkdir()
    job_id = _client(
        slurm_cluster,
        "sbatch",
        "--parsable",
        "--array=0-3",
        f"--output={out_dir}/%A_%a.out",
        "--wrap",
        "echo task $SLURM_ARRAY_TASK_ID",
    ).strip().split(";")[0]
    assert job_id.isdigit(), job_id
    _wait_gone(slurm_cluster, job_id)

    outputs = {p.name: p.read_text() for p in out_dir.iterdir()}
    assert outputs == {f"{job_id}_{i}.out": f"task {i}\n" for i in range(4)}

    jobcomp = (slurm_cluster.state_dir / "log" / "jobcomp.log").read_text().splitlines()
    ours = [line for line in jobcomp if f"ArrayJobId={job_id} " in line]
    assert len(ours) == 4 and all("JobState=COMPLETED" in line for line in ours), ours


@pytest.mark.slurm
def test_up_is_idempotent(slurm_cluster: cluster.ClusterInfo) -> None:
    before = _pids(slurm_cluster.state_dir)
    assert cluster.up(slurm_cluster.state_dir) == slurm_cluster
    assert _pids(slurm_cluster.state_dir) == before
    st = cluster.status(slurm_cluster.state_dir)
    assert all(st["alive"].values()), st
    assert "idle" in st["sinfo"], st


@pytest.mark.slurm
def test_down_kills_only_its_own_pids(slurm_cluster: cluster.ClusterInfo, tmp_path: Path) -> None:
    main_pids = _pids(slurm_cluster.state_dir)

    # A second cluster on the same host: own ports, own munged.
    second = tmp_path / "second cluster"
    cluster.up(second)
    second_pids = _pids(second)
    assert set(second_pids.values()).isdisjoint(main_pids.values())
    cluster.down(second)
    cluster.down(second)  # idempotent
    assert not any(cluster.status(second)["alive"].values())
    for name, pid in second_pids.items():
        assert not cluster._alive(pid, name), (name, pid)

    # A stale/forged pids.json naming an unrelated process must not kill it.
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        forged = tmp_path / "forged"
        forged.mkdir()
        (forged / "pids.json").write_text(json.dumps({"slurmd": decoy.pid}))
        cluster.down(forged)
        assert decoy.poll() is None, "down() killed a process it did not start"
    finally:
        decoy.kill()
        decoy.wait()

    # The session cluster is untouched and still schedules.
    for name, pid in main_pids.items():
        assert cluster._alive(pid, name), (name, pid)
    st = cluster.status(slurm_cluster.state_dir)
    assert all(st["alive"].values()) and "idle" in st["sinfo"], st


# --------------------------------------------------------------------------- GPUs and prefixes (pure)

DATA = Path(__file__).parent / "data" / "cluster"
VALUES = {"CLUSTER_NAME": "petest", "HOST": "node1", "CTLD_PORT": "40001", "SLURMD_PORT": "40002",
          "MUNGE_SOCKET": "/state dir/munge/munge.socket", "STATE_DIR": "/state dir", "CPUS": "64",
          "REAL_MEMORY": "500000", "MAX_ARRAY_SIZE": "1001"}
FOUR = cluster.Gpus(tuple(f"/dev/nvidia{i}" for i in range(4)), confine=True)


def test_no_gpus_renders_the_configuration_as_before() -> None:
    """Saved from the renderer before GPUs were declared: a node without them gets it byte for byte."""
    rendered = cluster.render_slurm_conf({**VALUES, **cluster.node_values(cluster.Gpus())})
    assert rendered == (DATA / "slurm.conf.expected").read_text()


def test_gpus_render_as_gres_confined_by_cgroups() -> None:
    rendered = cluster.render_slurm_conf({**VALUES, **cluster.node_values(FOUR, cluster.Install(Path("/opt/slurm prefix")))})
    assert rendered == (DATA / "slurm-gpus.conf.expected").read_text()
    assert cluster.render_gres_conf(FOUR) == (DATA / "gres.conf.expected").read_text()
    assert cluster.render_cgroup_conf() == (DATA / "cgroup.conf.expected").read_text()


def test_gpus_without_cgroups_keep_task_none() -> None:
    """Where cgroup v2 is not usable SLURM's CUDA_VISIBLE_DEVICES alone tells a job its GPUs."""
    rendered = cluster.render_slurm_conf({**VALUES, **cluster.node_values(cluster.Gpus(FOUR.files[:2]))})
    before = (DATA / "slurm.conf.expected").read_text()
    changed = [(a, b) for a, b in zip(before.splitlines(), rendered.splitlines()) if a != b]
    assert changed == [('# GresTypes: left unset (= none); an empty "GresTypes=" is a parse error.', "GresTypes=gpu"),
                       ("NodeName=node1 NodeAddr=127.0.0.1 CPUs=64 RealMemory=500000 State=UNKNOWN",
                        "NodeName=node1 NodeAddr=127.0.0.1 CPUs=64 RealMemory=500000 Gres=gpu:2 State=UNKNOWN")]


def test_find_gpus_from_device_files_or_nvidia_smi(tmp_path: Path) -> None:
    for name in ("nvidia10", "nvidia2", "nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1"):
        (tmp_path / name).touch()
    assert cluster.find_gpus(tmp_path) == tuple(str(tmp_path / f"nvidia{i}") for i in (0, 1, 2, 10))
    empty = tmp_path / "no devices"
    empty.mkdir()
    listed = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0f1e)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-9a8b)\n")
    assert cluster.find_gpus(empty, listed) == (str(empty / "nvidia0"), str(empty / "nvidia1"))
    assert cluster.find_gpus(empty, "") == ()


def test_cgroup_probe_refuses_a_v1_tree(tmp_path: Path) -> None:
    (tmp_path / "devices").mkdir()  # a v1 controller's folder, no cgroup.controllers
    assert not cluster.cgroup_v2_usable(tmp_path)


def test_configured_gpus_read_back(tmp_path: Path) -> None:
    (tmp_path / "gres.conf").write_text(cluster.render_gres_conf(FOUR))
    assert cluster.configured_gpus(tmp_path) == cluster.Gpus(FOUR.files, confine=False)
    (tmp_path / "cgroup.conf").write_text(cluster.render_cgroup_conf())
    assert cluster.configured_gpus(tmp_path) == FOUR


# --------------------------------------------------------------------------- a prefix of Debian's packages

DEBS = Path(__file__).resolve().parents[1] / ".debs"


@pytest.mark.skipif(not list(DEBS.glob("slurmd_*.deb")), reason="no Debian packages in .debs/ (bench/gpu_slurm.sh says which)")
@pytest.mark.slurm
def test_up_from_an_unpacked_prefix(tmp_path: Path) -> None:
    """SLURM run from `dpkg -x` trees, as on a GPU machine without it: daemons, libraries and plugins
    come from the prefix, not the system's, and an array runs."""
    prefix = tmp_path / "slurm prefix"
    for deb in sorted(DEBS.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(prefix)], check=True)
    install = cluster.Install(prefix)
    cluster.ensure_installed(install)
    state_dir = tmp_path / "state dir"
    # two character devices stand in for GPUs: SLURM gives each task one, named in CUDA_VISIBLE_DEVICES
    info = cluster.up(state_dir, gpus=cluster.Gpus(("/dev/null", "/dev/zero")), install=install)
    try:
        for name, pid in _pids(state_dir).items():
            exe = Path(f"/proc/{pid}/exe").resolve()
            assert exe.is_relative_to(prefix), (name, exe)
        maps = Path(f"/proc/{_pids(state_dir)['slurmctld']}/maps").read_text()
        libs = {line.split(maxsplit=5)[-1] for line in maps.splitlines() if "libslurmfull" in line or "/slurm-wlm/" in line}
        assert libs and all(lib.startswith(str(prefix)) for lib in libs), libs
        assert f'PluginDir="{prefix}/usr/lib/x86_64-linux-gnu/slurm-wlm"' in info.conf_path.read_text()
        assert info.env["PATH"].startswith(f"{prefix}/usr/sbin:")
        assert "Gres=gpu:2" in _client(info, "scontrol", "show", "node")  # slurmctld-wlm runs as slurmctld
        job_id = _client(info, "sbatch", "--parsable", "--array=0-1", "--gres=gpu:1", f"--output={tmp_path}/%a.out",
                         "--wrap", "echo task $SLURM_ARRAY_TASK_ID gpu $CUDA_VISIBLE_DEVICES").strip()
        _wait_gone(info, job_id)
        assert {(tmp_path / f"{i}.out").read_text() for i in (0, 1)} <= {f"task {i} gpu {g}\n" for i in (0, 1) for g in (0, 1)}
    finally:
        cluster.down(state_dir)
