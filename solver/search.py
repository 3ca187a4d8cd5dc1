"""Host side of the local-search kernels: many independent walks on one device, advanced in launches.

Each search class keeps its walks' state on the device between launches (so a launch is bounded
in time, and a stop request waits for one launch at most) and answers, after each launch, how far
the walks got and whether one found a solution. The solution it returns is the kernel's; the caller
checks it with the problem's own code (permenum.problems) before anyone sees it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from permenum.solver.opencl import DeviceContext, download, event_seconds, zeros


@dataclass(frozen=True)
class Find:
    """What the first walk to succeed left: its solution (row of each column) and when it got there."""

    solution: list[int]
    walk: int  # index among this search's walks (its seed is the search's seed + walk)
    iterations: int  # that walk's iterations until it found


@dataclass(frozen=True)
class Progress:
    iterations: int  # per walk, so far (walks advance in lock step)
    best: int  # the lowest cost any walk reached (0 once found)
    found: Find | None
    kernel_seconds: float  # of this launch


#: Adaptive Search settings (search_costas.cl), measured in bench/search.py; see bench/NOTES.md.
COSTAS_TENURE = 1
COSTAS_RESET_LIMIT = 1
COSTAS_LOCAL_MIN = 50  # percent: no improving swap is a local minimum this often (else a plateau move)


class CostasSearch:
    """Adaptive Search walks for a Costas array of order n (search_costas.cl): one walk per work-group."""

    first_steps = 16  # iterations of the first launch (it waits for the build); n up to 64: problems.Costas

    def __init__(self, dev: DeviceContext, n: int, seed: int, walks: int | None = None,
                 build_options: tuple[str, ...] = ()):
        self.dev, self.n, self.seed = dev, n, seed
        self.lanes = (32 if n <= 32 else 64) if dev.ref.is_gpu else 1
        self.walks = walks or default_walks(dev, self.lanes)
        options = (f"-DN={n}", f"-DLANES={self.lanes}", f"-DTENURE={COSTAS_TENURE}",
                   f"-DRESET_LIMIT={COSTAS_RESET_LIMIT}", f"-DLOCAL_MIN={COSTAS_LOCAL_MIN}", *build_options)
        self.kernel = cl.Kernel(dev.program("search_costas.cl", options), "costas_walks")
        w = self.walks
        self.values, self.tabu = zeros(dev, w * n, np.uint8), zeros(dev, w * n, np.uint64)
        self.rng, self.found_at = zeros(dev, w, np.uint64), zeros(dev, w, np.uint64)
        self.best, self.first = zeros(dev, w, np.uint32), zeros(dev, 1, np.uint32)
        self.iterations = 0

    def advance(self, steps: int) -> Progress:
        """Every walk still searching takes ``steps`` more iterations (fewer once one has found)."""
        dev = self.dev
        cl.enqueue_fill_buffer(dev.queue, self.first, np.uint32(0xFFFFFFFF), 0, 4)
        event = self.kernel(dev.queue, (self.walks * self.lanes,), (self.lanes,), self.values, self.tabu, self.rng,
                            self.found_at, self.best, self.first, np.uint64(self.seed), np.uint64(self.iterations),
                            np.uint32(steps))
        event.wait()
        self.iterations += steps
        found_at = download(dev, self.found_at, self.walks, np.uint64)
        best = int(download(dev, self.best, self.walks, np.uint32).min())
        hits = np.flatnonzero(found_at)
        found = None
        if len(hits):
            walk = int(hits[np.argmin(found_at[hits])])  # argmin: the lowest index among equal iterations
            values = download(dev, self.values, self.walks * self.n, np.uint8).reshape(self.walks, self.n)
            found = Find(values[walk].tolist(), walk, int(found_at[walk]) - 1)
        return Progress(self.iterations, 0 if found else best, found, event_seconds(event))


def default_walks(dev: DeviceContext, lanes: int) -> int:
    """Walks that fill the device: on a GPU 1024 resident lanes per compute unit, on a CPU 4 per core."""
    units = dev.ref.device.max_compute_units
    return units * 1024 // lanes if dev.ref.is_gpu else units * 4


#: Min-conflicts settings (search_nqueens.cl), measured in bench/search.py; see bench/NOTES.md.
QUEENS_TRIES = 8
QUEENS_NOISE = 16
QUEENS_BLOCK = 8  # passes over one scan's list
QUEENS_GROUP = 64
QUEENS_PLACE_TRIES = 64
QUEENS_MIN_SEGMENT = 32


class QueensSearch:
    """Min-conflicts repair of N-Queens boards (search_nqueens.cl): one work-item per queen in conflict,
    as many boards at once as fill the device when N is small, one board when it is large (O(N) memory)."""

    first_steps = QUEENS_BLOCK  # passes of the first launch

    def __init__(self, dev: DeviceContext, n: int, seed: int, walks: int | None = None,
                 build_options: tuple[str, ...] = ()):
        self.dev, self.n, self.seed = dev, n, seed
        self.walks = walks or max(1, (1 << (18 if dev.ref.is_gpu else 14)) // n)
        if self.walks * n >= 1 << 32:
            raise ValueError(f"{self.walks} walks of {n} queens: more than 2^32 queens")
        half = max(1, ((n - 1).bit_length() + 1) // 2)
        # the greedy start: on a GPU 2^16 segments side by side (all walks), placed a round per launch; on a
        # CPU one segment per walk, placed by one work-item (each queen sees all earlier ones: fewer conflicts)
        segments = 1 << 16 if dev.ref.is_gpu else self.walks
        self.segment = min(n, max(QUEENS_MIN_SEGMENT, -(-n * self.walks // segments)))
        options = (f"-DN={n}", f"-DHALF={half}", f"-DSEGMENT={self.segment}", f"-DPLACE_TRIES={QUEENS_PLACE_TRIES}",
                   f"-DTRIES={QUEENS_TRIES}", f"-DNOISE={QUEENS_NOISE}", *build_options)
        program = dev.program("search_nqueens.cl", options)
        k = {name: cl.Kernel(program, f"queens_{name}") for name in ("shuffle", "place", "place_walk", "count", "scan",
                                                                      "settle", "propose", "apply", "release")}
        self._k = k
        w, diags = self.walks, 2 * n - 1
        self.q, self.partner, self.todo = (zeros(dev, w * n, np.uint32) for _ in range(3))
        self.claim = zeros(dev, w * (n + 2 * diags), np.uint32)  # queens and diagonals (search_nqueens.cl)
        cl.enqueue_fill_buffer(dev.queue, self.claim, np.uint32(0xFFFFFFFF), 0, 4 * w * (n + 2 * diags))
        self.d1, self.d2 = zeros(dev, w * diags, np.uint32), zeros(dev, w * diags, np.uint32)
        self.conflicts, self.listed = zeros(dev, w, np.uint32), zeros(dev, 1, np.uint32)
        self.solved_at, self.least = zeros(dev, w, np.uint64), zeros(dev, w, np.uint32)
        cl.enqueue_fill_buffer(dev.queue, self.least, np.uint32(0xFFFFFFFF), 0, 4 * w)
        k["shuffle"](dev.queue, (w * n,), None, self.q, np.uint64(seed))
        if self.segment == n:  # one segment a walk: placed whole by one work-item
            k["place_walk"](dev.queue, (w,), None, self.q, self.d1, self.d2, np.uint64(seed))
        else:  # segments side by side, a round per launch
            placers = (w * -(-n // self.segment),)
            for r in range(self.segment):
                k["place"](dev.queue, placers, None, self.q, self.d1, self.d2, np.uint64(seed), np.uint32(r))
                k["count"](dev.queue, placers, None, self.q, self.d1, self.d2, np.uint32(r))
        self.iterations = 0

    def _scan(self) -> int:
        """List the queens in conflict, settle the walks with none; how many were listed."""
        dev, k = self.dev, self._k
        cl.enqueue_fill_buffer(dev.queue, self.listed, np.uint32(0), 0, 4)
        k["scan"](dev.queue, (self.walks * self.n,), None, self.q, self.d1, self.d2, self.todo, self.listed,
                  self.conflicts)
        k["settle"](dev.queue, (self.walks,), None, self.conflicts, self.least, self.solved_at,
                    np.uint64(self.iterations))
        return int(download(dev, self.listed, 1, np.uint32)[0])

    def _pass(self, listed: int) -> None:
        dev, k, at = self.dev, self._k, np.uint64(self.iterations)
        # one work-group size whatever the list's length: PoCL builds its loops anew for each size it meets
        items, group, count = (-(-listed // QUEENS_GROUP) * QUEENS_GROUP,), (QUEENS_GROUP,), np.uint32(listed)
        k["propose"](dev.queue, items, group, count, self.todo, self.q, self.d1, self.d2, self.partner, self.claim,
                     np.uint64(self.seed), at)
        k["apply"](dev.queue, items, group, count, self.todo, self.q, self.d1, self.d2, self.partner, self.claim, at)
        k["release"](dev.queue, items, group, count, self.todo, self.q, self.partner, self.claim)
        self.iterations += 1

    def advance(self, steps: int) -> Progress:
        """About ``steps`` passes (whole blocks of QUEENS_BLOCK after a scan), then a scan to settle them."""
        t0 = time.perf_counter()
        listed = self._scan()
        for _ in range(max(1, -(-steps // QUEENS_BLOCK))):
            if listed == 0:
                break
            for _ in range(QUEENS_BLOCK):
                self._pass(listed)
            listed = self._scan()
        seconds = time.perf_counter() - t0
        solved_at = download(self.dev, self.solved_at, self.walks, np.uint64)
        best = int(download(self.dev, self.least, self.walks, np.uint32).min())
        hits = np.flatnonzero(solved_at)
        found = None
        if len(hits):
            walk = int(hits[np.argmin(solved_at[hits])])
            board = np.empty(self.n, np.uint32)
            cl.enqueue_copy(self.dev.queue, board, self.q, src_offset=4 * walk * self.n)
            found = Find(board.tolist(), walk, int(solved_at[walk]) - 1)
        return Progress(self.iterations, 0 if found else best, found, seconds)


#: problem -> its search (each takes dev, n, seed, walks).
SEARCHES: dict[str, type[CostasSearch] | type[QueensSearch]] = {"costas": CostasSearch, "nqueens": QueensSearch}
