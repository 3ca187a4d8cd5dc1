"""What a module must have loaded before its threads start: numpy's lazy submodules they use (numpy.ma,
which pa.array looks up, and numpy.random), which numpy imports on first use. Two threads' first lookups
race (CPython marks the submodule loaded before it sets numpy's attribute; the thread between recurses in
numpy's ``__getattr__`` to RecursionError), as the pool's writer threads did in CI.
permenum.problems.base imports both; this holds every module that starts threads to it."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.test_layout import _sources

STARTS_THREADS = re.compile(r"ThreadPoolExecutor\(|threading\.Thread\(")

CHECK = """
import importlib, sys
name = sys.argv[1]
importlib.import_module(name)
missing = [m for m in ("numpy.ma", "numpy.random") if "numpy" in sys.modules and m not in sys.modules]
assert not missing, name + " loads numpy but not " + ", ".join(missing)
"""


def test_every_module_that_starts_threads_loads_numpys_lazy_submodules_first() -> None:
    threaded = sorted(name for name, path in _sources().items() if STARTS_THREADS.search(path.read_text()))
    assert "permenum.poolgen.write" in threaded and "permenum.jobs.counting.task" in threaded, threaded
    failed = []
    for name in threaded:  # each in a fresh interpreter: what one module's import loads, not the suite's
        proc = subprocess.run([sys.executable, "-c", CHECK, name], capture_output=True, text=True, check=False)
        if proc.returncode:
            failed.append(proc.stderr.strip().splitlines()[-1])
    assert not failed, failed
