"""`permenum search`: multi-walk local search on the real OpenCL device (PoCL here), each answer checked here
by code of the test's own (not the package's), same seed same answer, bad input, time limits, local tasks."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from permenum.jobs.search import Request, search
from permenum.records import SEED_STRIDE


def costas_ok(p: list[int]) -> bool:
    n = len(p)
    vectors = [(j - i, p[j] - p[i]) for i in range(n) for j in range(i + 1, n)]
    return sorted(p) == list(range(n)) and len(set(vectors)) == len(vectors)


def queens_ok(q: list[int]) -> bool:
    n = len(q)
    return (sorted(q) == list(range(n)) and len({r + c for c, r in enumerate(q)}) == n
            and len({r - c for c, r in enumerate(q)}) == n)


def test_costas_found_checked_written_and_the_same_from_the_same_seed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "c.json"
    first = cli("search", "costas", 14, "--seed", 7, "--out", out, check=True)
    again = cli("search", "costas", 14, "--seed", 7, check=True)
    solution = [int(x) for x in first.stdout.split()]
    assert len(solution) == 14 and costas_ok(solution)
    assert again.stdout == first.stdout  # the same seed finds the same array
    record = json.loads(out.read_text())
    assert {"problem", "n", "solution", "seed", "walks", "iterations", "seconds", "device"} <= set(record)
    assert (record["problem"], record["n"], record["solution"], record["seed"]) == ("costas", 14, solution, 7)
    # the finding walk alone, from its own seed, walks the same way to the same array
    alone = cli("search", "costas", 14, "--seed", record["walk_seed"], "--walks", 1, "--out", tmp_path / "one.json",
                check=True)
    assert alone.stdout == first.stdout
    assert json.loads((tmp_path / "one.json").read_text())["iterations"] == record["iterations"]


@pytest.mark.parametrize("n", [1, 4, 5, 8, 9, 60, 1000, 200_000])
def test_nqueens_found_and_checked(n: int) -> None:
    result = search(Request("nqueens", n, seed=n), threading.Event())
    assert result.status == "found" and result.solution is not None
    assert len(result.solution) == n and queens_ok(result.solution)


def test_nqueens_same_seed_same_board() -> None:
    runs = [search(Request("nqueens", 3000, seed=11), threading.Event()) for _ in range(2)]
    assert runs[0].solution == runs[1].solution and runs[0].iterations == runs[1].iterations
    other = search(Request("nqueens", 3000, seed=11 + 1000), threading.Event())  # walk seeds 1011..: none shared
    assert other.solution != runs[0].solution


@pytest.mark.parametrize("args, said", [
    (("nqueens", "2"), "nqueens n=2 has no solution"),
    (("nqueens", "3"), "nqueens n=3 has no solution"),
    (("costas", "0"), "costas search supports n from 1 to 64 (got 0)"),
    (("costas", "65"), "costas search supports n from 1 to 64 (got 65)"),
    (("sudoku", "9"), "'sudoku' is not one of"),
    (("costas", "10", "--walks", "0"), "--walks"),
    (("costas", "10", "--submit"), "--submit needs the run directory RUN"),
])
def test_bad_input_is_one_line_and_exit_2(cli, args: tuple[str, ...], said: str) -> None:  # type: ignore[no-untyped-def]
    proc = cli("search", *args)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_time_limit_says_what_it_tried(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r.json"
    proc = cli("search", "costas", 40, "--max-seconds", 1, "--out", out)  # order 40 (two-word masks): not in 1 s
    assert proc.returncode == 1 and proc.stdout == ""
    assert "not found (time limit)" in proc.stderr and "walks" in proc.stderr and "lowest cost" in proc.stderr
    record = json.loads(out.read_text())
    assert record["status"] == "time limit" and record["solution"] is None
    assert record["iterations"] > 0 and record["best"] > 0 and record["seconds"] >= 1


def test_local_tasks_first_find_stops_the_rest(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "search run"
    proc = cli("search", "costas", 16, "--tasks", 3, "--walks", 2, run, "--out", tmp_path / "f.json",
               check=True)
    found = json.loads((run / "found.json").read_text())
    assert costas_ok(found["solution"]) and json.loads((tmp_path / "f.json").read_text()) == found
    records = {t: json.loads((run / "results" / f"task-{t:05d}.json").read_text()) for t in range(3)}
    assert records[found["task"]]["solution"] == found["solution"]
    assert {r["status"] for r in records.values()} <= {"found", "cancelled"}
    for t, r in records.items():  # disjoint seed ranges: task t's walks are seed + t * 2^32 + w
        assert r["seed"] == t * SEED_STRIDE
    assert f"found by task {found['task']}" in proc.stdout
    status = cli("status", run, check=True)
    assert f"found by task {found['task']}, walk {found['walk']}" in status.stdout
    assert "3/3 tasks ended" in status.stdout
    again = cli("search-task", run, "--index", 0)
    assert again.returncode == 2 and "has ended already" in again.stderr
