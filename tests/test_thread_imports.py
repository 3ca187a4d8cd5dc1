"""What a module must have loaded before its threads start: numpy.ma, which pa.array looks up and numpy
imports on first use. Two threads' first lookups race (CPython marks numpy.ma loaded before it sets numpy's
attribute; the thread between recurses in numpy's ``__getattr__`` to RecursionError), as the pool's writer
threads did in CI. permenum.problems.base imports it; this holds every module that starts threads to it."""

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
assert "pyarrow" not in sys.modules or "numpy.ma" in sys.modules, name + " loads pyarrow but not numpy.ma"
"""


def test_every_module_that_starts_threads_with_arrow_loads_numpy_ma_first() -> None:
    threaded = sorted(name for name, path in _sources().items() if STARTS_THREADS.search(path.read_text()))
    assert "permenum.poolgen.write" in threaded and "permenum.jobs.counting.task" in threaded, threaded
    failed = []
    for name in threaded:  # each in a fresh interpreter: what one module's import loads, not the suite's
        proc = subprocess.run([sys.executable, "-c", CHECK, name], capture_output=True, text=True, check=False)
        if proc.returncode:
            failed.append(proc.stderr.strip().splitlines()[-1])
    assert not failed, failed
