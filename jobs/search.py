"""Find one solution: a search task runs its walks on one device until one finds, its time is up, or it
is asked to stop; the solution is checked by the problem's own code before it is written anywhere.

A search run (``search PROBLEM N RUN``, ``--tasks``, ``--submit``) is K tasks with disjoint seed ranges
(records.SearchPlan.task_seed). Each writes ``results/task-NNNNN.json`` when it ends, found or not;
the first to find also writes ``found.json`` (never replaced, so a second finder leaves the first's)
and stops the others: locally they share a stop event, on SLURM it cancels the rest of the array.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from permenum.errors import UserError
from permenum.jobs.counting.environment import TaskEnvironment
from permenum.layout import RunLayout
from permenum.problems import get_problem
from permenum.records import (SearchPlan, SearchResult, load_search_plan, read_search_result, write_search_plan,
                              write_search_result)

#: A launch's target length: a stop request, or another walk's find, waits for one launch at most.
LAUNCH_SECONDS = 0.25


def check_request(problem: str, n: int) -> None:
    """Bad sizes, and sizes with no solution, are refused before any device is opened."""
    get_problem(problem).check_search(n)


def is_solution(problem: str, solution: list[int]) -> bool:
    """The problem's own check, independent of the kernels."""
    return get_problem(problem).is_solution(solution)


@dataclass(frozen=True)
class Request:
    problem: str
    n: int
    seed: int
    task: int = 0
    walks: int | None = None
    max_seconds: float | None = None
    device: str | None = None

    def walk_seed(self, walk: int) -> int:
        return (self.seed + walk) % (1 << 64)


def search(request: Request, stop: threading.Event, run_id: str | None = None,
           progress: Callable[[str], None] | None = None) -> SearchResult:
    """Run one task's walks until a find, ``max_seconds`` or ``stop``; the result says which."""
    from permenum.solver.opencl import open_first
    from permenum.solver.search import SEARCHES

    t0 = time.perf_counter()
    dev = open_first(request.device)
    searcher = SEARCHES[request.problem](dev, request.n, request.seed, request.walks)
    steps, kernel_seconds, last_note = searcher.first_steps, 0.0, t0
    while True:
        t = time.perf_counter()
        p = searcher.advance(steps)
        elapsed = time.perf_counter()
        kernel_seconds += p.kernel_seconds
        status = ("found" if p.found else "stopped" if stop.is_set() else
                  "time limit" if request.max_seconds is not None and elapsed - t0 >= request.max_seconds else None)
        if progress and (status or elapsed - last_note > 10):
            progress(f"{p.iterations} iterations per walk, {searcher.walks} walks, lowest cost {p.best}, "
                     f"{elapsed - t0:.1f} s")
            last_note = elapsed
        if status:
            break
        steps = max(1, min(steps * 4, int(steps * LAUNCH_SECONDS / max(elapsed - t, 1e-4))))
    found = p.found
    if found is not None and not is_solution(request.problem, found.solution):
        raise RuntimeError(f"the {request.problem} kernel's answer {found.solution[:32]} is not a solution "
                           "(a kernel bug: please report it)")
    return SearchResult(
        request.problem, request.n, request.seed, request.task, status, found.solution if found else None,
        found.walk if found else None, request.walk_seed(found.walk) if found else None, searcher.walks,
        found.iterations if found else p.iterations, p.best, time.perf_counter() - t0, kernel_seconds,
        dev.ref.label, TaskEnvironment.read().origin, run_id)


# --------------------------------------------------------------------------- a search run


def create_run(layout: RunLayout, request: Request, tasks: int) -> SearchPlan:
    """Write ``search.json`` in a new (or empty) run directory."""
    if tasks < 1:
        raise UserError(f"--tasks must be at least 1 (got {tasks})")
    if layout.root.exists() and any(layout.root.iterdir()):
        raise UserError(f"{layout.root} exists and is not empty: give a new directory for the search run")
    plan = SearchPlan(uuid.uuid4().hex, request.problem, request.n, request.seed, tasks, request.walks,
                      request.max_seconds, request.device)
    write_search_plan(layout, plan)
    return plan


def task_request(plan: SearchPlan, task: int) -> Request:
    if not 0 <= task < plan.tasks:
        raise UserError(f"task {task} is not in this search run (tasks 0..{plan.tasks - 1})")
    return Request(plan.problem, plan.n, plan.task_seed(task), task, plan.walks, plan.max_seconds, plan.device)


def run_task(layout: RunLayout, task: int, stop: threading.Event, on_found: Callable[[], None],
             device: str | None = None, progress: Callable[[str], None] | None = None) -> SearchResult:
    """One task of a search run: search, write its record; the first finder writes found.json and calls
    ``on_found`` (which stops the other tasks). A task that has a record already does not run again."""
    plan = load_search_plan(layout)
    request = task_request(plan, task)
    path = layout.search_task_file(task)
    if path.exists():
        done = read_search_result(path)
        raise UserError(f"task {task} has ended already ({done.status}, {path}); nothing to do")
    if layout.search_found.exists():
        raise UserError(f"this search has found already ({layout.search_found}); task {task} not run")
    if device:
        request = replace(request, device=device)
    result = search(request, stop, plan.run_id, progress)
    if result.status == "stopped" and layout.search_found.exists():
        result = replace(result, status="cancelled")  # another task found first
    write_search_result(path, result)
    if result.found:
        try:
            write_search_result(layout.search_found, result, replace=False)
        except FileExistsError:
            return result  # another task found first: its answer stands
        on_found()
    return result


def run_local(layout: RunLayout, stop: threading.Event, progress: Callable[[str], None] | None = None) -> None:
    """Every task of the run on this machine at once (threads sharing the device); the first find stops the rest."""
    plan = load_search_plan(layout)
    todo = [t for t in range(plan.tasks) if not layout.search_task_file(t).exists()]
    with ThreadPoolExecutor(max(1, len(todo))) as pool:
        futures = [pool.submit(run_task, layout, t, stop, stop.set, None, progress if t == 0 else None) for t in todo]
        for f in futures:
            f.result()


@dataclass(frozen=True)
class SearchSummary:
    plan: SearchPlan
    found: SearchResult | None
    ended: dict[int, SearchResult]  # task -> its record
    damaged: dict[int, str]

    @property
    def walk_iterations(self) -> int:
        """Iterations of every walk of every ended task (a found task's walks ran as long as its finder)."""
        return sum(r.walks * r.iterations for r in self.ended.values())


def summarize(layout: RunLayout) -> SearchSummary:
    plan = load_search_plan(layout)
    ended: dict[int, SearchResult] = {}
    damaged: dict[int, str] = {}
    for t in range(plan.tasks):
        path = layout.search_task_file(t)
        if path.exists():
            try:
                ended[t] = read_search_result(path)
            except UserError as exc:
                damaged[t] = str(exc)
    found = read_search_result(layout.search_found) if layout.search_found.exists() else None
    if found is not None and not is_solution(found.problem, found.solution or []):
        raise UserError(f"{layout.search_found}: its solution is not a {found.problem} solution of order {found.n}")
    return SearchSummary(plan, found, ended, damaged)
