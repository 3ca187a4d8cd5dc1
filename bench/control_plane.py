"""A campaign's control plane at many partitions (issue 45, item 4): what `task`, `run`, `merge`, `status` and
`collect` cost beside the counting, in a pool of 20,000 partitions against one of 200.

    python3 bench/control_plane.py                          # N-Queens 12: 200 and 20,000 partitions, 300 run
    python3 bench/control_plane.py --fill                   # `run` counts the whole pool (merge, status, collect at 20,000 results)
    python3 bench/control_plane.py --steps status,collect   # on the results the work folder holds already
    PYTHONPATH=/tmp/base-site python3 bench/control_plane.py --steps task,status,collect   # another commit, same pools

Pools (kept in --work between calls, made once): SMALL and BIG, the same problem cut into --small and --partitions
partitions, and SITE, a copy of BIG (another site's: its manifest and pool copied, so the same run). Steps:

* task: `permenum task` of --tasks partitions in SMALL, then in BIG, alternating; the whole process's wall
  seconds (imports, device start, the manifest and the count). N-Queens 12's partitions hold a few states, so
  the wall is the task's overhead; the bar is BIG's median within 1.5x of SMALL's.
* run: `permenum run SITE --only 0-(K-1)` (K = --run; --fill: every partition) and a run of one partition:
  wall / K, and the marginal cost of a partition, (wall(K) - wall(1)) / (K - 1). Bar: 15 ms a partition.
* merge: BIG's results cleared, `permenum merge BIG SITE` imports what SITE counted: imports a second. Bar: 200.
* status, collect: `permenum status BIG`, `permenum collect BIG` on the results it holds, each twice: without
  the results index (the first scan verifies every result and writes it), then with it. Bar: 3 s each.

Every command is the installed one's path (`python -m permenum`), on --device (PoCL's CPU by default); the
table printed last is the figures. This machine is shared: run twice and take the lower figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: What a command leaves in a run directory (cleared between steps so that each starts from the same state).
_MADE = ("results", "checkpoints", "claims", "logs", "solutions", "ledger.parquet", "ledger.partial.parquet",
         "rates.json", ".permenum.lock")


def permenum(*args: str, check: bool = True) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds of one `python -m permenum ARGS` and what it printed."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "permenum", *args], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONSAFEPATH": "1"})  # `-m` from a checkout: PYTHONPATH's, not its
    wall = time.perf_counter() - t0
    if check and proc.returncode not in (0, 1):
        sys.exit(f"permenum {' '.join(args)} failed ({proc.returncode}): {proc.stdout[-1500:]} {proc.stderr[-1500:]}")
    return wall, proc


def clear(run: Path) -> None:
    for name in _MADE:
        path = run / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def pool(run: Path, problem: str, n: int, partitions: int) -> None:
    if not (run / "manifest.json").exists():
        wall, _ = permenum("pool", problem, str(n), str(run), "--num-partitions", str(partitions))
        print(f"pool {run.name}: {partitions} partitions in {wall:.1f} s", flush=True)


def copy_site(big: Path, site: Path) -> None:
    """Another site's copy of BIG: its pool and manifest, nothing it counted."""
    if not (site / "manifest.json").exists():
        shutil.rmtree(site, ignore_errors=True)
        shutil.copytree(big / "pool", site / "pool")
        shutil.copy2(big / "manifest.json", site / "manifest.json")


def results(run: Path) -> int:
    folder = run / "results"
    return sum(1 for p in folder.glob("part-*.json")) if folder.exists() else 0


def step_task(small: Path, big: Path, tasks: int, device: str) -> dict[str, float]:
    walls: dict[str, list[float]] = {"small": [], "big": []}
    for run in (small, big):
        clear(run)
    for i in range(tasks):
        for name, run in (("small", small), ("big", big)) if i % 2 == 0 else (("big", big), ("small", small)):
            wall, _ = permenum("task", str(run), "--index", str(i), "--device", device)
            walls[name].append(wall)
    for run in (small, big):
        clear(run)
    s, b = statistics.median(walls["small"]), statistics.median(walls["big"])
    print(f"task: {small.name} {', '.join(f'{w:.2f}' for w in walls['small'])} s; "
          f"{big.name} {', '.join(f'{w:.2f}' for w in walls['big'])} s", flush=True)
    return {"task_small_s": s, "task_big_s": b, "task_ratio": b / s}


def step_run(site: Path, k: int, device: str) -> dict[str, float]:
    clear(site)
    one, _ = permenum("run", str(site), "--only", "0", "--device", device)
    clear(site)
    shards = ["--only", f"0-{k - 1}"]
    wall, proc = permenum("run", str(site), *shards, "--device", device)
    done = results(site)
    if done != k:
        sys.exit(f"run counted {done} of {k} partitions: {proc.stderr[-1500:]}")
    print(f"run: {k} partitions in {wall:.1f} s, one in {one:.2f} s", flush=True)
    return {"run_partitions": k, "run_s": wall, "run_ms_per_partition": 1000 * wall / k,
            "run_ms_marginal": 1000 * (wall - one) / max(k - 1, 1)}


def step_merge(big: Path, site: Path) -> dict[str, float]:
    clear(big)
    offered = results(site)
    wall, proc = permenum("merge", str(big), str(site))
    imported = results(big)
    print(f"merge: {imported} of {offered} results imported in {wall:.1f} s: {proc.stdout.strip()[:200]}", flush=True)
    return {"merge_imported": imported, "merge_s": wall, "merge_per_s": imported / wall}


def step_status(big: Path) -> dict[str, float]:
    """Twice: without the results index (every result verified, the index written), then with it."""
    (big / "results" / "index.arrow").unlink(missing_ok=True)
    first, _ = permenum("status", str(big), "--json")
    wall, proc = permenum("status", str(big), "--json")
    states = json.loads(proc.stdout)["states"]
    counts = ", ".join(f"{state} {v['count']}" for state, v in states.items())
    print(f"status: {first:.2f} s verifying every result, {wall:.2f} s with the index ({counts})", flush=True)
    return {"status_s": wall, "status_first_s": first, "status_done": states["done"]["count"]}


def step_collect(big: Path) -> dict[str, float]:
    """Twice, as status: the first without the results index, the second with it."""
    (big / "results" / "index.arrow").unlink(missing_ok=True)
    first, _ = permenum("collect", str(big))
    wall, proc = permenum("collect", str(big))
    print(f"collect: {first:.2f} s verifying every result, {wall:.2f} s with the index "
          f"({proc.stdout.strip().splitlines()[0][:120] if proc.stdout.strip() else ''})", flush=True)
    return {"collect_s": wall, "collect_first_s": first, "collect_results": results(big)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/permenum-control-plane"))
    ap.add_argument("--problem", default="nqueens")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--small", type=int, default=200, help="partitions of the small pool")
    ap.add_argument("--partitions", type=int, default=20000, help="partitions of the big pool")
    ap.add_argument("--tasks", type=int, default=3, help="`task`s timed in each pool")
    ap.add_argument("--run", type=int, default=300, help="partitions `run` counts (and `merge` imports)")
    ap.add_argument("--fill", action="store_true", help="`run` counts every partition of the big pool")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", default="task,run,merge,status,collect")
    args = ap.parse_args()
    steps = args.steps.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    small, big = args.work / f"{args.problem}{args.n}-{args.small}", args.work / f"{args.problem}{args.n}-{args.partitions}"
    site = args.work / f"{big.name}-site"
    pool(small, args.problem, args.n, args.small)
    pool(big, args.problem, args.n, args.partitions)
    copy_site(big, site)
    figures: dict[str, float] = {}
    if "task" in steps:
        figures |= step_task(small, big, args.tasks, args.device)
    if "run" in steps:
        figures |= step_run(site, args.partitions if args.fill else args.run, args.device)
    if "merge" in steps:
        figures |= step_merge(big, site)
    if "status" in steps:
        figures |= step_status(big)
    if "collect" in steps:
        figures |= step_collect(big)
    where = os.environ.get("PYTHONPATH") or "this checkout"
    print(f"\n{args.problem} {args.n}, {args.partitions} partitions (against {args.small}), --device {args.device}, "
          f"permenum from {where}")
    bars = {"task_ratio": ("<=", 1.5), "run_ms_per_partition": ("<=", 15.0), "merge_per_s": (">=", 200.0),
            "status_s": ("<=", 3.0), "collect_s": ("<=", 3.0)}
    for key, value in figures.items():
        bar = bars.get(key)
        verdict = "" if bar is None else f"  (bar {bar[0]} {bar[1]:g}: {'met' if (value <= bar[1]) == (bar[0] == '<=') else 'NOT met'})"
        print(f"  {key:<22} {value:10.3f}{verdict}")


if __name__ == "__main__":
    main()
