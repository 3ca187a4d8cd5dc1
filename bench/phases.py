"""Where a whole `permenum` command's seconds go: imports, then each phase's start and end on the
command's clock, then the task's own log (its chunks' launches).

    python3 bench/phases.py enumerate nqueens 21 /tmp/q21 --device gpu

Runs the command in this process as the installed one does (no pandas: permenum.launch) with the
phases' functions wrapped by timers (the task's too: its load, kernel builds, and each chunk's
refinement, staging and count); what it prints last is the process's own total. The figures of
issue 18's item 4 (whole command / kernel) come from here and from bench/record_scale.py.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any, Callable

T0 = time.perf_counter()
import atexit  # noqa: E402
import os  # noqa: E402

# registered first, so run last: what is left after it is the interpreter's own end (the shell's wall minus
# this line's figure, with bench/one_gpu.sh)
atexit.register(lambda: os.write(2, f"  {'last exit handler':<20} {time.perf_counter() - T0:7.3f} s\n".encode()))
from permenum.without_pandas import WithoutPandas  # noqa: E402

sys.meta_path.insert(0, WithoutPandas())
import permenum.cli as cli  # noqa: E402
import permenum.cli.enumerate as enumerate_cmd  # noqa: E402
import permenum.jobs.ledger.collect as collect  # noqa: E402
import permenum.jobs.counting.device_loop as device_loop  # noqa: E402
import permenum.jobs.counting.refine as refine  # noqa: E402
import permenum.jobs.counting.task as task  # noqa: E402
import permenum.poolgen.write as write  # noqa: E402
import permenum.solver.opencl as opencl  # noqa: E402

IMPORTS = time.perf_counter() - T0


def timed(module: Any, name: str) -> None:
    inner: Callable[..., Any] = getattr(module, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            print(f"  {name:<20} {start - T0:7.3f} -> {time.perf_counter() - T0:7.3f} s", file=sys.stderr, flush=True)

    setattr(module, name, wrapper)


def main() -> None:
    print(f"  {'imports':<20} {0:7.3f} -> {IMPORTS:7.3f} s", file=sys.stderr)
    for module, names in ((write, ("write_pool", "climb", "estimate_costs", "_write_partitions", "write_manifest")),
                          (opencl, ("open_if_alone",)), (enumerate_cmd, ("run_here", "print_collect")),
                          (collect, ("collect",)), (device_loop, ("make_solver",)), (task._Attempt, ("_load",)),
                          (refine.RefiningSolver, ("refine", "stage", "count"))):
        for name in names:
            timed(module, name)
    sys.argv = ["permenum", *sys.argv[1:]]
    try:
        cli.main()
    except SystemExit:
        pass
    finally:
        print(f"  {'process (to exit)':<20} {0:7.3f} -> {time.perf_counter() - T0:7.3f} s", file=sys.stderr)
        run = sys.argv[4] if len(sys.argv) > 4 and not sys.argv[4].startswith("-") else None  # enumerate P N RUN
        for log in sorted(Path(run, "logs").glob("*.log")) if run else ():
            print(log.read_text(), file=sys.stderr, end="")


if __name__ == "__main__":
    main()
