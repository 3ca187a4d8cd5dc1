"""Time to solution of `permenum search` over many seeds: median and 90th percentile per size.

    python bench/search.py --device cpu --costas 14 15 16 17 18 --queens 1000 100000 1000000 --seeds 20
    python bench/search.py --device gpu --costas 16 17 18 19 20 21 22 --queens 1000 ... 10000000

Seeds are far apart (seed k * 2^40: no walk seed shared between runs). Each size is warmed up once
(the kernels' builds) before it is timed; "search s" is the walks' wall time after the device and the
build were ready, "kernel s" the launches' own. Every answer is checked by the package's check and
counted as found only then. The last lines are one table.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from permenum.jobs.search import Request, is_solution, search
from permenum.solver.opencl import open_first


def quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def measure(problem: str, n: int, seeds: int, device: str | None, max_seconds: float,
            walks: int | None, first: int = 0) -> dict[str, object]:
    stop = threading.Event()
    search(Request(problem, n, (1 << 62) + n, walks=walks, max_seconds=min(max_seconds, 2.0), device=device), stop)
    times, kernels, iterations, found, used = [], [], [], 0, 0
    for k in range(first, first + seeds):
        r = search(Request(problem, n, k << 40, walks=walks, max_seconds=max_seconds, device=device), stop)
        ok = r.found and is_solution(problem, r.solution or [])
        found += ok
        times.append(r.seconds if ok else float("inf"))
        kernels.append(r.kernel_seconds)
        iterations.append(r.iterations)
        used = r.walks
        print(f"{problem} {n} seed {k << 40}: {r.status}, {r.seconds:.3f} s (kernel {r.kernel_seconds:.3f}), "
              f"{r.iterations} iterations, walk {r.walk}, {r.walks} walks", flush=True)
    return {"problem": problem, "n": n, "runs": seeds, "found": found, "median": quantile(times, 0.5),
            "p90": quantile(times, 0.9), "kernel": statistics.median(kernels),
            "iterations": statistics.median(iterations), "walks": used}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--costas", type=int, nargs="*", default=[])
    ap.add_argument("--queens", type=int, nargs="*", default=[])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--queens-seeds", type=int, default=None, help="Seeds for N-Queens (default: --seeds).")
    ap.add_argument("--first-seed", type=int, default=0, help="Start at seed K * 2^40 (runs split over calls).")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="Per run; a run past it counts as not found.")
    ap.add_argument("--walks", type=int, default=None)
    a = ap.parse_args()
    dev = open_first(a.device)
    print(f"device: {dev.ref.label}", flush=True)
    t0 = time.perf_counter()
    rows = [measure("costas", n, a.seeds, a.device, a.max_seconds, a.walks, a.first_seed) for n in a.costas]
    rows += [measure("nqueens", n, a.queens_seeds or a.seeds, a.device, a.max_seconds, a.walks, a.first_seed) for n in a.queens]
    print(f"\n{dev.ref.label}; {time.perf_counter() - t0:.0f} s in all")
    print("problem | n | found/runs | walks | median s | p90 s | median kernel s | median iterations")
    for r in rows:
        print(f"{r['problem']} | {r['n']} | {r['found']}/{r['runs']} | {r['walks']} | {r['median']:.3f} | "
              f"{r['p90']:.3f} | {r['kernel']:.3f} | {r['iterations']:.0f}")


if __name__ == "__main__":
    main()
