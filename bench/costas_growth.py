"""Costas growth, measured: kernel seconds of whole runs at consecutive orders on one device, the ratio of
each order to the one before, the fitted trend (jobs.estimate.Growth, the model `permenum estimate` uses)
and its projection of orders 28-30 in device-years; then `permenum estimate costas N` on the same device,
whose projection comes from the same model fitted to its timed samples, side by side (issue 37, item 2).

    python3 bench/costas_growth.py --device gpu --orders 18 19 20 21 22 --run 23=.rehearsal/c23 --estimate 22

Each order runs `python3 -m permenum enumerate costas N` as a user would and must match the published count;
``--run N=RUN`` adds an order already counted (its ledger's kernel seconds, summed over its devices: a run
on several GPUs of the same model).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from permenum.jobs.ledger.collect import collect
from permenum.jobs.estimate import FIT_SIZES, Growth
from permenum.layout import RunLayout

YEAR = 365.25 * 86400
PROJECTED = (28, 29, 30)


def kernel_seconds(run: Path) -> float:
    """The run's kernel seconds, once it is complete and its count the published one."""
    c = collect(RunLayout(run))
    if c.missing or not c.matches:
        raise SystemExit(f"{run}: incomplete or not the published count")
    return c.kernel_seconds


def enumerate_order(n: int, device: str, where: Path) -> float:
    run = where / f"costas-{n}"
    done = subprocess.run([sys.executable, "-m", "permenum", "enumerate", "costas", str(n), "--device", device,
                           str(run)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"enumerate costas {n} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return kernel_seconds(run)


def projection_row(name: str, growth: Growth) -> str:
    years = "  ".join(f"{n}: {growth.seconds_at(n) / YEAR:7.3f}" for n in PROJECTED)
    return f"{name:<44} {growth.ratio:5.2f}x a size   device-years {years}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--orders", type=int, nargs="*", default=[18, 19, 20, 21, 22])
    parser.add_argument("--run", action="append", default=[], help="N=RUN: an order counted before")
    parser.add_argument("--estimate", type=int, default=None, help="also run `permenum estimate costas N`")
    args = parser.parse_args()

    measured: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="costas-growth-") as tmp:
        for n in args.orders:
            measured[n] = enumerate_order(n, args.device, Path(tmp))
            print(f"costas {n}: kernel {measured[n]:.3f} s", flush=True)
    for spec in args.run:
        n, run = spec.split("=", 1)
        measured[int(n)] = kernel_seconds(Path(run))
    sizes = sorted(measured)
    print("\norder  kernel s   x the order before")
    for a, b in zip([None, *sizes], sizes):
        ratio = f"{measured[b] / measured[a]:6.2f}" if a is not None and b == a + 1 else ""
        print(f"{b:5}  {measured[b]:9.2f}  {ratio}")
    print()
    trend = Growth.fit([(n, measured[n]) for n in sizes])
    print(projection_row(f"measured {sizes[0]}-{sizes[-1]}, fitted", trend))
    last = sizes[-FIT_SIZES:]
    print(projection_row(f"measured {last[0]}-{last[-1]} (the last {FIT_SIZES}), fitted",
                         Growth.fit([(n, measured[n]) for n in last])))
    if args.estimate is None:
        return
    said = subprocess.run([sys.executable, "-m", "permenum", "estimate", "costas", str(args.estimate), "--device",
                           args.device, "--json"], capture_output=True, text=True)
    if said.returncode != 0:
        raise SystemExit(f"estimate failed ({said.returncode}): {said.stderr.strip()[-400:]}")
    report = json.loads(said.stdout)
    if report["growth"] is None:
        raise SystemExit(f"estimate costas {args.estimate} fitted no growth (its sizes took no kernel time)")
    predicted = {int(n): s for n, s in report["growth"]["device_seconds"].items() if s > 0}
    fitted = Growth.fit(sorted(predicted.items()))
    print(projection_row(f"estimate costas {args.estimate} (predicted {min(predicted)}-{max(predicted)})", fitted))
    same = [n for n in predicted if n in measured]
    print("estimate's predictions / measured: " + ", ".join(f"{n}: {predicted[n] / measured[n]:.3f}" for n in same))
    if len(same) >= 2:
        on_same = Growth.fit([(n, measured[n]) for n in same])
        print(projection_row(f"measured {min(same)}-{max(same)} (the estimate's sizes), fitted", on_same))
    print("estimate / trend of all measured: " + ", ".join(
        f"{n}: {fitted.seconds_at(n) / trend.seconds_at(n):.2f}" for n in PROJECTED))


if __name__ == "__main__":
    main()
