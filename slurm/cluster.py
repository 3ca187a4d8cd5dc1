"""Bring up a real, private, single-node SLURM cluster (Debian slurm-wlm 22.05).

Tests need a genuine scheduler without systemd, /etc/slurm or a shared munge,
so everything (munge key and socket, config, spool, state, logs, pid files)
lives under one ``state_dir`` and the daemons listen on free ports. Daemons
are only ever stopped by the pids recorded in ``state_dir/pids.json``, so an
unrelated cluster on the same host is never touched.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Mapping

__all__ = ["ClusterError", "ClusterInfo", "Gpus", "Install", "up", "down", "status", "ensure_installed", "find_gpus",
           "cgroup_v2_usable", "render_slurm_conf", "render_gres_conf", "render_cgroup_conf", "node_values"]

#: Binaries the cluster needs; absent ones trigger install_deps.sh.
REQUIRED_BINARIES = ("slurmctld", "slurmd", "munged", "sbatch")
#: Order matters: slurmd before slurmctld before munged (auth last to go).
_DAEMONS = ("slurmd", "slurmctld", "munged")
_UP_TIMEOUT = 30.0
_LOG_TAIL_LINES = 30


class ClusterError(RuntimeError):
    """A cluster step failed; carries enough context to debug without a shell."""

    def __init__(
        self,
        message: str,
        *,
        cmd: list[str] | None = None,
        returncode: int | None = None,
        stdout: str = "",
        stderr: str = "",
        log_tail: str = "",
    ) -> None:
        self.cmd = cmd
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.log_tail = log_tail
        parts = [message]
        if cmd is not None:
            parts.append(f"command: {cmd!r}")
        if returncode is not None:
            parts.append(f"exit code: {returncode}")
        if stdout.strip():
            parts.append(f"stdout:\n{stdout.rstrip()}")
        if stderr.strip():
            parts.append(f"stderr:\n{stderr.rstrip()}")
        if log_tail.strip():
            parts.append(f"log tail:\n{log_tail.rstrip()}")
        super().__init__("\n".join(parts))


@dataclass(frozen=True)
class Gpus:
    """The node's GPUs as SLURM's gres/gpu declares them: their device files, and whether cgroups confine
    each job to its own (else a job still sees every GPU, and SLURM's CUDA_VISIBLE_DEVICES alone says which
    are its: SLURM sets it for gres/gpu with or without cgroups)."""

    files: tuple[str, ...] = ()
    confine: bool = False


@dataclass(frozen=True)
class Install:
    """Where SLURM and munge live: the system's (``prefix`` None) or a tree unpacked with ``dpkg -x PKG PREFIX``
    (a GPU machine without SLURM, bench/gpu_slurm.sh). Debian names the daemons ``slurmd-wlm`` and so on and
    keeps ``libslurmfull.so`` beside the plugins, so a prefix puts both library folders on the library path
    and names its plugin folder in slurm.conf (PluginDir)."""

    prefix: Path | None = None

    def binary(self, name: str) -> str:
        """The program to run for ``name``: the prefix's (plain or ``-wlm``), else the name for PATH to find.
        A daemon runs under its plain name whatever its file is called (``_run_daemon``): SLURM decides what it
        is from argv[0] (run_in_daemon), and a slurmctld started as ``slurmctld-wlm`` acts as a client and never
        builds its node's generic resources (seen: Gres=(null), every ``--gres=gpu:1`` job refused as
        "Requested node configuration is not available")."""
        if self.prefix is None:
            return _which(name) or name
        for folder in ("usr/sbin", "usr/bin", "sbin", "bin"):
            for candidate in (name, f"{name}-wlm"):
                path = self.prefix / folder / candidate
                if path.is_file() and os.access(path, os.X_OK):
                    return str(path)
        raise ClusterError(f"{name} not found in {self.prefix} (usr/sbin, usr/bin; plain or -wlm)")

    @property
    def plugin_dir(self) -> Path | None:
        return None if self.prefix is None else self.prefix / "usr/lib/x86_64-linux-gnu/slurm-wlm"

    def env(self) -> dict[str, str]:
        """PATH and LD_LIBRARY_PATH that find the prefix's programs and libraries before the system's."""
        if self.prefix is None:
            return {}
        lib = self.prefix / "usr/lib/x86_64-linux-gnu"
        paths = [str(self.prefix / "usr/sbin"), str(self.prefix / "usr/bin")]
        libs = [str(lib), str(lib / "slurm-wlm")]
        return {"PATH": ":".join([*paths, os.environ.get("PATH", "/usr/bin:/bin")]),
                "LD_LIBRARY_PATH": ":".join([*libs, *filter(None, [os.environ.get("LD_LIBRARY_PATH", "")])])}


@dataclass(frozen=True)
class ClusterInfo:
    """What a client needs: run sbatch/squeue with ``os.environ | env``."""

    state_dir: Path
    conf_path: Path
    env: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- helpers


def _run(
    cmd: list[str],
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    executable: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run one command (never via a shell) and raise ClusterError on any failure.

    ``env`` is layered over os.environ so callers only pass what differs; ``executable``: the file to run
    where ``cmd[0]`` is only the name the program is to see as its own.
    """
    full_env = {**os.environ, **env} if env is not None else None
    try:
        proc = subprocess.run(
            cmd,
            executable=executable,
            env=full_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise ClusterError(f"executable not found: {exc}", cmd=cmd) from exc
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(
            f"timed out after {timeout}s",
            cmd=cmd,
            stdout=_text(exc.stdout),
            stderr=_text(exc.stderr),
        ) from exc
    if proc.returncode != 0:
        raise ClusterError(
            "command failed",
            cmd=cmd,
            returncode=proc.returncode,
            stdout=proc.stdout,
            stderr=proc.stderr,
        )
    return proc


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def _tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    """Last lines of a log, so errors show the daemon's own complaint."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"


def _paths(state_dir: Path) -> dict[str, Path]:
    """Single source of truth for the layout (the template mirrors it)."""
    return {
        "conf": state_dir / "slurm.conf",
        "pids": state_dir / "pids.json",
        "munge_dir": state_dir / "munge",
        "munge_key": state_dir / "munge" / "munge.key",
        "munge_socket": state_dir / "munge" / "munge.socket",
        "munge_pid": state_dir / "munge" / "munged.pid",
        "munge_log": state_dir / "munge" / "munged.log",
        "munge_seed": state_dir / "munge" / "munged.seed",
        "run": state_dir / "run",
        "log": state_dir / "log",
        "ctld": state_dir / "ctld",
        "spool": state_dir / "spool",
        "slurmctld_pid": state_dir / "run" / "slurmctld.pid",
        "slurmd_pid": state_dir / "run" / "slurmd.pid",
        "slurmctld_log": state_dir / "log" / "slurmctld.log",
        "slurmd_log": state_dir / "log" / "slurmd.log",
        "gres_conf": state_dir / "gres.conf",  # beside slurm.conf, where SLURM looks for it
        "cgroup_conf": state_dir / "cgroup.conf",
        "env": state_dir / "client-env.json",  # what `status` needs to reach this cluster (SLURM_CONF, a prefix's paths)
    }


def _client_env(conf: Path) -> dict[str, str]:
    return {"SLURM_CONF": str(conf)}


def _write_client_env(state_dir: Path, env: Mapping[str, str]) -> None:
    path = _paths(state_dir)["env"]
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dict(env), indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


def client_env(state_dir: Path) -> dict[str, str]:
    """What SLURM's commands need to reach the cluster of ``state_dir`` (as `up` last wrote it)."""
    p = _paths(Path(state_dir).absolute())
    try:
        env = json.loads(p["env"].read_text())
    except (OSError, ValueError):
        env = {}
    return {**_client_env(p["conf"]), **{str(k): str(v) for k, v in env.items()}}


def configured_gpus(state_dir: Path) -> Gpus:
    """The GPUs the cluster of ``state_dir`` declares (its gres.conf), confined where it has a cgroup.conf."""
    p = _paths(Path(state_dir).absolute())
    try:
        text = p["gres_conf"].read_text()
    except OSError:
        return Gpus()
    files = tuple(m.group(1) for m in re.finditer(r"^Name=gpu File=(\S+)$", text, re.MULTILINE))
    return Gpus(files, p["cgroup_conf"].exists())


def _free_ports(count: int) -> list[int]:
    """Ask the kernel for distinct free ports, avoiding SLURM's defaults.

    All sockets stay open until every port is chosen, so they are distinct.
    """
    socks: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < count:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            port = s.getsockname()[1]
            if port not in (6817, 6818, 6819) and port not in ports:
                ports.append(port)
    finally:
        for s in socks:
            s.close()
    return ports


def _real_memory_mb() -> int:
    """RealMemory a bit below what is free, so slurmd never drains the node."""
    meminfo = Path("/proc/meminfo").read_text()
    m = re.search(r"^MemAvailable:\s+(\d+)\s+kB", meminfo, re.MULTILINE)
    if m is None:
        m = re.search(r"^MemFree:\s+(\d+)\s+kB", meminfo, re.MULTILINE)
    avail_mb = int(m.group(1)) // 1024 if m else 1024
    return max(1, int(avail_mb * 0.9))


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _alive(pid: int, daemon: str) -> bool:
    """True if pid runs `daemon` and is not a zombie (guards against pid reuse)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rpartition(")")[2].split()[:1] == ["Z"]:
        return False
    argv = _cmdline(pid)
    return bool(argv) and os.path.basename(argv[0]) == daemon


def _read_pids(state_dir: Path) -> dict[str, int]:
    try:
        data = json.loads(_paths(state_dir)["pids"].read_text())
    except (OSError, ValueError):
        return {}
    return {k: int(v) for k, v in data.items() if k in _DAEMONS}


def _write_pids(state_dir: Path, pids: Mapping[str, int]) -> None:
    path = _paths(state_dir)["pids"]
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dict(pids), indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


def _wait_pidfile(pidfile: Path, daemon: str, log: Path, cmd: list[str], timeout: float = 15.0) -> int:
    """Daemons fork then write their pid file; wait for a live pid in it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            pid = 0
        if pid and _alive(pid, daemon):
            return pid
        time.sleep(0.1)
    raise ClusterError(
        f"{daemon} did not come up (no live pid in {pidfile})", cmd=cmd, log_tail=_tail(log)
    )


def render_slurm_conf(values: Mapping[str, str]) -> str:
    """Fill templates/slurm.conf.in; unknown or leftover placeholders are bugs. A placeholder alone on its
    line that fills with nothing takes the line with it (PluginDir where SLURM is the system's)."""
    template = (resources.files(__package__) / "templates" / "slurm.conf.in").read_text()

    def sub(m: re.Match[str]) -> str:
        key = m.group(1) or m.group(2)
        if key not in values:
            raise ClusterError(f"slurm.conf template placeholder @{key}@ has no value")
        return str(values[key]) + ("\n" if m.group(1) and values[key] else "")

    return re.sub(r"^@([A-Z_]+)@\n|@([A-Z_]+)@", sub, template, flags=re.MULTILINE)


#: The lines of slurm.conf that GPUs change, as a node without GPUs has them.
_NO_GPU_VALUES = {
    "TASK_PLUGIN": "TaskPlugin=task/none",
    "GRES_TYPES": '# GresTypes: left unset (= none); an empty "GresTypes=" is a parse error.',
    "NODE_GRES": "",
}


def node_values(gpus: Gpus, install: Install = Install()) -> dict[str, str]:
    """slurm.conf's values for the node's GPUs and SLURM's install (a node without GPUs, SLURM the system's:
    the configuration as it was before GPUs were declared, byte for byte)."""
    values = dict(_NO_GPU_VALUES)
    if gpus.files:
        values["GRES_TYPES"] = "GresTypes=gpu"
        values["NODE_GRES"] = f" Gres=gpu:{len(gpus.files)}"
    if gpus.files and gpus.confine:
        values["TASK_PLUGIN"] = ("# Each job sees only the GPUs it was given (cgroup.conf: ConstrainDevices=yes).\n"
                                 "TaskPlugin=task/cgroup")
    values["PLUGIN_DIR"] = "" if install.plugin_dir is None else f'PluginDir="{install.plugin_dir}"'
    return values


def render_gres_conf(gpus: Gpus) -> str:
    """gres.conf: one line per GPU's device file, in the order SLURM numbers them for CUDA_VISIBLE_DEVICES."""
    lines = ["# Generated by permenum.slurm.cluster: the node's GPUs (gres/gpu), one device file each."]
    lines += [f"Name=gpu File={f}" for f in gpus.files]
    return "\n".join(lines) + "\n"


def render_cgroup_conf() -> str:
    """cgroup.conf for confining GPUs on cgroup v2 without systemd (slurmd makes its own scope)."""
    return ("# Generated by permenum.slurm.cluster: cgroup v2 without systemd; jobs see only their GPUs.\n"
            "CgroupPlugin=cgroup/v2\n"
            "IgnoreSystemd=yes\n"
            "ConstrainDevices=yes\n")


def find_gpus(dev: Path = Path("/dev"), listed: str | None = None) -> tuple[str, ...]:
    """The node's NVIDIA GPUs' device files: ``/dev/nvidiaN`` in N's order, or, where the folder shows none,
    one ``/dev/nvidiaN`` per GPU that ``nvidia-smi -L`` lists (``listed``: its output, for tests)."""
    found = sorted((int(m.group(1)), str(p)) for p in dev.glob("nvidia*") if (m := re.fullmatch(r"nvidia(\d+)", p.name)))
    if found:
        return tuple(path for _, path in found)
    if listed is None:
        try:
            listed = _run(["nvidia-smi", "-L"], timeout=30).stdout
        except ClusterError:
            return ()
    count = sum(1 for line in listed.splitlines() if line.startswith("GPU "))
    return tuple(str(dev / f"nvidia{i}") for i in range(count))


def cgroup_v2_usable(root: Path = Path("/sys/fs/cgroup")) -> bool:
    """Whether slurmd's cgroup/v2 plugin can confine devices here: cgroup v2 mounted alone at ``root``
    (cgroup.controllers is there; a v1 or hybrid tree has none), and root can make and remove a group in it."""
    if not (root / "cgroup.controllers").is_file() or os.geteuid() != 0:
        return False
    probe = root / f"permenum-probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


def detect_gpus(confine: bool | None = None) -> Gpus:
    """This node's GPUs, confined by cgroups where ``confine`` says so (None: where cgroup v2 is usable)."""
    files = find_gpus()
    if not files:
        return Gpus()
    return Gpus(files, cgroup_v2_usable() if confine is None else confine)


def _existing_cluster_name(conf: Path) -> str | None:
    """Reuse the name on restart: slurmctld refuses a StateSaveLocation of another cluster."""
    try:
        m = re.search(r"^ClusterName=(\S+)", conf.read_text(), re.MULTILINE)
    except OSError:
        return None
    return m.group(1) if m else None


# --------------------------------------------------------------------------- public API


def ensure_installed(install: Install = Install()) -> None:
    """Install slurm-wlm + munge via install_deps.sh if any needed binary is missing (a prefix must hold them)."""
    if install.prefix is not None:
        for b in REQUIRED_BINARIES:
            install.binary(b)
        return
    if all(_which(b) for b in REQUIRED_BINARIES):
        return
    script = resources.files(__package__) / "install_deps.sh"
    with resources.as_file(script) as path:
        _run(["bash", str(path)], timeout=900)
    missing = [b for b in REQUIRED_BINARIES if not _which(b)]
    if missing:
        raise ClusterError(f"still missing after install_deps.sh: {missing}")


def _which(name: str) -> str | None:
    from shutil import which

    return which(name) or which(name, path="/usr/sbin:/sbin:/usr/local/sbin")


def up(state_dir: Path, cpus: int | None = None, max_array_size: int = 1001, gpus: Gpus | None = None,
       install: Install = Install()) -> ClusterInfo:
    """Start munged, slurmctld and slurmd for ``state_dir``; return once the node is idle.

    ``max_array_size`` is SLURM's MaxArraySize (its default 1001; the tests set it low so that every
    submission of more partitions is split into several arrays). ``gpus``: the node's GPUs as generic
    resources (None: those this node has, confined where cgroup v2 is usable; ``Gpus()``: none declared).
    ``install``: where SLURM and munge are (the system's, or a prefix unpacked from Debian's packages).

    Idempotent: if the recorded daemons are all alive, their info is returned.
    A half-dead cluster is stopped (by recorded pid) and started afresh.
    """
    state_dir = Path(state_dir).absolute()
    p = _paths(state_dir)
    info = ClusterInfo(state_dir, p["conf"], {**_client_env(p["conf"]), **install.env()})
    pids = _read_pids(state_dir)
    if pids and all(_alive(pids.get(d, 0), d) for d in _DAEMONS):
        return info
    if pids:
        down(state_dir)
    _make_dirs(state_dir, p)
    _ensure_munge_key(p["munge_key"])
    host = _run(["hostname", "-s"]).stdout.strip()
    gpus = detect_gpus() if gpus is None else gpus
    _write_configs(state_dir, p, host, cpus, max_array_size, gpus, install)
    _write_client_env(state_dir, info.env)
    try:
        _start_daemons(state_dir, p, host, install)
        _wait_idle(info, host, p)
    except BaseException:
        down(state_dir)
        raise
    return info


def _make_dirs(state_dir: Path, p: Mapping[str, Path]) -> None:
    """The state dir's folders. munged insists that the socket dir and its parents be world-searchable and
    not group/other-writable, so directories are 0755 (the key itself is 0400)."""
    for key in ("run", "log", "ctld", "spool", "munge_dir"):
        p[key].mkdir(parents=True, exist_ok=True)
    for d in (state_dir, p["munge_dir"]):
        d.chmod(0o755)


def _ensure_munge_key(key: Path) -> None:
    """The private munged's key: made once (1 KiB of random bytes), kept across restarts."""
    if not key.exists():
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(1024))
    key.chmod(0o400)


def _write_configs(state_dir: Path, p: Mapping[str, Path], host: str, cpus: int | None, max_array_size: int,
                   gpus: Gpus, install: Install) -> None:
    """slurm.conf on free ports (the cluster's name kept across restarts), and gres.conf / cgroup.conf where
    the node's GPUs need them (removed where they do not)."""
    ctld_port, slurmd_port = _free_ports(2)
    values = {
        "CLUSTER_NAME": _existing_cluster_name(p["conf"]) or f"pe{secrets.token_hex(4)}",
        "HOST": host,
        "CTLD_PORT": str(ctld_port),
        "SLURMD_PORT": str(slurmd_port),
        "MUNGE_SOCKET": str(p["munge_socket"]),
        "STATE_DIR": str(state_dir),
        "CPUS": str(cpus if cpus is not None else len(os.sched_getaffinity(0))),
        "REAL_MEMORY": str(_real_memory_mb()),
        "MAX_ARRAY_SIZE": str(max_array_size),
        **node_values(gpus, install),
    }
    for path in (state_dir, install.prefix or Path("/")):
        if any(c in str(path) for c in '"\n'):
            raise ClusterError(f"path cannot be quoted in slurm.conf: {path!r}")
    p["conf"].write_text(render_slurm_conf(values))
    for name, text in (("gres_conf", render_gres_conf(gpus) if gpus.files else None),
                       ("cgroup_conf", render_cgroup_conf() if gpus.files and gpus.confine else None)):
        if text is None:
            p[name].unlink(missing_ok=True)
        else:
            p[name].write_text(text)
    if gpus.files and gpus.confine:
        # cgroup/v2 without systemd puts slurmd's scope under system.slice, which must be there first.
        Path("/sys/fs/cgroup/system.slice").mkdir(exist_ok=True)


def _start_daemons(state_dir: Path, p: Mapping[str, Path], host: str, install: Install) -> None:
    """munged, slurmctld, slurmd, each waited for by its pid file and recorded as it comes up (so that
    ``down`` stops what did start when a later one fails)."""
    # --force: munged rejects a socket whose ancestors are not world-searchable
    # (e.g. pytest's 0700 /tmp/pytest-of-root); this socket is private anyway.
    munged = ["munged", "--force", f"--key-file={p['munge_key']}", f"--socket={p['munge_socket']}",
              f"--pid-file={p['munge_pid']}", f"--log-file={p['munge_log']}", f"--seed-file={p['munge_seed']}"]
    # -N: our NodeName, regardless of how this host resolves its own name.
    daemons = (("munged", munged, p["munge_pid"], p["munge_log"]),
               ("slurmctld", ["slurmctld", "-f", str(p["conf"])], p["slurmctld_pid"], p["slurmctld_log"]),
               ("slurmd", ["slurmd", "-f", str(p["conf"]), "-N", host], p["slurmd_pid"], p["slurmd_log"]))
    pids: dict[str, int] = {}
    for name, cmd, pidfile, log in daemons:
        _run_daemon(cmd, log, install.env(), install.binary(name))
        pids[name] = _wait_pidfile(pidfile, name, log, cmd)
        _write_pids(state_dir, pids)


def _run_daemon(cmd: list[str], log: Path, env: Mapping[str, str] | None = None, executable: str | None = None) -> None:
    """Start a self-daemonizing daemon (``executable``, seeing ``cmd[0]`` as its name); its foreground part must exit 0."""
    try:
        _run(cmd, env=env, timeout=30, executable=executable)
    except ClusterError as exc:
        raise ClusterError(
            f"{cmd[0]} failed to start",
            cmd=cmd,
            returncode=exc.returncode,
            stdout=exc.stdout,
            stderr=exc.stderr,
            log_tail=_tail(log),
        ) from exc


def _wait_idle(info: ClusterInfo, host: str, p: Mapping[str, Path], timeout: float = _UP_TIMEOUT) -> None:
    """Poll sinfo until the node registers as idle (bounded)."""
    cmd = ["sinfo", "-h", "-N", "-n", host, "-o", "%T"]
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            last = _run(cmd, env=info.env, timeout=10).stdout.strip()
        except ClusterError as exc:
            last = str(exc)
        if last and set(last.split()) == {"idle"}:  # one line per partition the node is in
            return
        time.sleep(0.5)
    raise ClusterError(
        f"node {host} not idle after {timeout}s (last sinfo: {last!r})",
        cmd=cmd,
        log_tail="--- slurmctld ---\n"
        + _tail(p["slurmctld_log"])
        + "\n--- slurmd ---\n"
        + _tail(p["slurmd_log"]),
    )


def down(state_dir: Path, timeout: float = 10.0) -> None:
    """Stop only the daemons recorded in pids.json (TERM, wait, KILL). Idempotent."""
    state_dir = Path(state_dir).absolute()
    pids = _read_pids(state_dir)
    for daemon in _DAEMONS:
        pid = pids.get(daemon)
        if pid is None or not _alive(pid, daemon):
            continue
        _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(pid, daemon) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid, daemon):
            _signal(pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
            while _alive(pid, daemon) and time.monotonic() < deadline:
                time.sleep(0.1)
    if pids:
        _paths(state_dir)["pids"].unlink(missing_ok=True)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def status(state_dir: Path) -> dict[str, object]:
    """Which recorded daemons are alive, plus sinfo's view (or its error)."""
    state_dir = Path(state_dir).absolute()
    pids = _read_pids(state_dir)
    alive = {d: (d in pids and _alive(pids[d], d)) for d in _DAEMONS}
    sinfo: str
    if alive["slurmctld"] and alive["munged"]:
        try:
            sinfo = _run(["sinfo"], env=client_env(state_dir), timeout=10).stdout
        except ClusterError as exc:
            sinfo = str(exc)
    else:
        sinfo = ""
    return {"state_dir": str(state_dir), "pids": pids, "alive": alive, "sinfo": sinfo, "gpus": configured_gpus(state_dir)}
