"""Record-scale figures in one run: `permenum estimate` against the full run it predicts, and each full
run's whole-command time against its own kernel time.

    python3 bench/record_scale.py --device gpu nqueens:20 nqueens:21 costas:19 [--project nqueens:22]
    python3 bench/record_scale.py --device cpu nqueens:16 nqueens:17 nqueens:18 costas:14 costas:15 costas:16
    python3 bench/record_scale.py --device gpu --no-estimate --repeat 2 --timeline nqueens:21 costas:19
    python3 bench/record_scale.py --device gpu --pipeline 64 nqueens:22

Per PROBLEM:N: `permenum estimate` (its predicted kernel seconds), then `permenum enumerate` as a user
runs it (coarse pool, refined in the task): whole seconds, peak memory, the ledger's kernel seconds.
The table printed last: predicted / measured kernel time (the issue's bar: within +-20%) and whole /
kernel. --project P:N prints the projected device-hours of the record sizes from P N's calibration.
--no-estimate times only the `enumerate`s (item 4's end to end), --repeat runs each that many times (the
first one also fills the driver's kernel cache), --timeline prints each run's task log (its chunks).
--pipeline P times `permenum run` over a pool of 1 and of P partitions (item 4: partitions one after another
keep the device's rate): the run's wall seconds, its kernel seconds, and P's wall against 1's kernel.
Whole is the process's wall time, interpreter start and imports included (`python -m permenum`, the
installed command's path).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq


def permenum(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "permenum", *args], capture_output=True, text=True, check=False)


def estimate(problem: str, n: int, device: str, sample: float, fraction: float, project: bool = False) -> dict:
    proc = permenum("estimate", problem, str(n), "--device", device, "--sample-seconds", str(sample),
                    "--max-fraction", str(fraction), "--json",
                    *([] if project else ["--no-project"]))
    if proc.returncode:
        sys.exit(f"estimate {problem} {n} failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def enumerate_run(problem: str, n: int, device: str, work: Path, timeline: bool = False) -> dict:
    run = work / f"{problem}-{n}"
    shutil.rmtree(run, ignore_errors=True)
    t0 = time.perf_counter()
    proc = permenum("enumerate", problem, str(n), str(run), "--device", device)
    whole = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"enumerate {problem} {n} failed: {proc.stdout[-1500:]} {proc.stderr[-1500:]}")
    ledger = pq.read_table(run / "ledger.parquet").to_pydict()
    matches = "matches the published count" in proc.stdout
    if timeline:
        for log in sorted((run / "logs").glob("part-*.log")):
            print("  " + "\n  ".join(line.split(": ", 1)[-1] for line in log.read_text().splitlines()))
    command = float(proc.stdout.rsplit("whole command:", 1)[1].split()[0])  # the command's own clock
    return {"whole": whole, "command": command, "kernel": sum(ledger["seconds_kernel"]), "matches": matches,
            "task": sum(ledger["seconds_total"]), "peak_gib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+", help="PROBLEM:N")
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--sample-seconds", type=float, default=10.0)
    ap.add_argument("--max-fraction", type=float, default=0.1)
    ap.add_argument("--project", action="append", default=[], help="PROBLEM:N to calibrate the projections at")
    ap.add_argument("--no-estimate", action="store_true", help="time the enumerates only")
    ap.add_argument("--repeat", type=int, default=1, help="enumerate runs of each PROBLEM:N")
    ap.add_argument("--timeline", action="store_true", help="print each run's task log")
    ap.add_argument("--pipeline", type=int, default=0, help="time `run` over 1 and over this many partitions")
    args = ap.parse_args()
    if args.pipeline:
        return pipeline(args.specs, args.device, args.pipeline)
    if args.no_estimate:
        return end_to_end(args.specs, args.device, args.repeat, args.timeline)
    rows = []
    with tempfile.TemporaryDirectory(prefix="record-scale-") as tmp:
        for spec in args.specs:
            problem, n = spec.split(":")[0], int(spec.split(":")[1])
            est = estimate(problem, n, args.device, args.sample_seconds, args.max_fraction)
            run = enumerate_run(problem, n, args.device, Path(tmp))
            rows.append((problem, n, est, run))
            print(f"{problem} {n}: predicted {est['device_seconds']:.2f} s (sample {est['sample_fraction']:.1%}, "
                  f"{est['sample_kernel_seconds']:.1f} s), measured kernel {run['kernel']:.2f} s, whole "
                  f"{run['whole']:.2f} s, exact {run['matches']}", flush=True)
            per_node = est["seconds_per_estimated_node"]
            print("  blocks (states: seconds per estimated node / the sample's): " + ", ".join(
                f"{b['states']}: {b['kernel_seconds'] / b['estimated_nodes'] / per_node:.2f}" for b in est["blocks"]))
            shutil.rmtree(Path(tmp, f"{problem}-{n}"), ignore_errors=True)
    for spec in args.project:
        problem, n = spec.split(":")[0], int(spec.split(":")[1])
        est = estimate(problem, n, args.device, args.sample_seconds, args.max_fraction, project=True)
        print(f"\nprojected on {est['device']} from {problem} {n} ({est['seconds_per_estimated_node']:.3g} s per "
              f"estimated node, this N predicted {est['device_seconds']:.1f} s):")
        for size, seconds in est["projected_device_seconds"].items():
            print(f"  {problem} {size}: {seconds / 3600:.4g} device-hours ({seconds / 86400 / 365.25:.3g} years)")
    print(f"\n{'problem':8} {'N':>3} {'predicted':>10} {'measured':>9} {'pred/meas':>9} {'err':>6} {'whole':>8} "
          f"{'whole/kern':>10} {'exact':>5}")
    for problem, n, est, run in rows:
        err = est["relative_error"]
        print(f"{problem:8} {n:3d} {est['device_seconds']:10.2f} {run['kernel']:9.2f} "
              f"{est['device_seconds'] / run['kernel']:9.2f} {'' if err is None else f'{err:.0%}':>6} "
              f"{run['whole']:8.2f} {run['whole'] / run['kernel']:10.2f} {str(run['matches']):>5}")


def end_to_end(specs: list[str], device: str, repeat: int, timeline: bool) -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="end-to-end-") as tmp:
        for spec in specs:
            problem, n = spec.split(":")[0], int(spec.split(":")[1])
            for k in range(repeat):
                run = enumerate_run(problem, n, device, Path(tmp), timeline)
                rows.append((problem, n, k, run))
                print(f"{problem} {n} run {k}: whole {run['whole']:.2f} s (by its own clock {run['command']:.2f} s), "
                      f"tasks {run['task']:.2f} s, kernel "
                      f"{run['kernel']:.2f} s, exact {run['matches']}", flush=True)
    print(f"\n{'problem':8} {'N':>3} {'run':>3} {'whole':>8} {'tasks':>8} {'kernel':>8} {'whole/kern':>10} {'exact':>5}")
    for problem, n, k, run in rows:
        print(f"{problem:8} {n:3d} {k:3d} {run['whole']:8.2f} {run['task']:8.2f} {run['kernel']:8.2f} "
              f"{run['whole'] / run['kernel']:10.2f} {str(run['matches']):>5}")


def pipeline(specs: list[str], device: str, partitions: int) -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="pipeline-") as tmp:
        for spec in specs:
            problem, n = spec.split(":")[0], spec.split(":")[1]
            for parts in (1, partitions):
                run = Path(tmp, f"{problem}-{n}-{parts}")
                made = permenum("pool", problem, n, str(run), "--num-partitions", str(parts))
                t0 = time.perf_counter()
                ran = permenum("run", str(run), "--device", device)
                wall = time.perf_counter() - t0
                collected = permenum("collect", str(run))
                if made.returncode or ran.returncode or collected.returncode:
                    sys.exit(f"{spec} --num-partitions {parts} failed: {made.stderr[-800:]} {ran.stderr[-800:]} {collected.stdout[-800:]}")
                ledger = pq.read_table(run / "ledger.parquet").to_pydict()
                for log in sorted((run / "logs").glob("part-*.log"))[:3] + sorted((run / "logs").glob("part-*.log"))[-2:]:
                    print("  " + "\n  ".join(line.split("+00:00 ")[0][11:] + " " + line.split(": ", 1)[-1][-140:]
                                            for line in log.read_text().splitlines()))
                rows.append((spec, parts, wall, sum(ledger["seconds_kernel"]),
                             "matches the published count" in collected.stdout))
                print(f"{spec} --num-partitions {parts}: run {wall:.2f} s, kernel {rows[-1][3]:.2f} s", flush=True)
    print(f"\n{'spec':12} {'P':>4} {'run s':>8} {'kernel s':>9} {'1-part kernel / run':>20} {'exact':>5}")
    for spec, parts, wall, kernel, exact in rows:
        single = next(k for s, p, _, k, _ in rows if s == spec and p == 1)
        print(f"{spec:12} {parts:4d} {wall:8.2f} {kernel:9.2f} {single / wall:20.3f} {str(exact):>5}")


if __name__ == "__main__":
    main()
