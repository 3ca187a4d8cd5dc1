"""The multi-device scheduler on plain numbers: simulated devices of known speed, a simulated clock."""

from __future__ import annotations

import heapq
import threading

import numpy as np
import pytest

from permenum.jobs.counting.chunking import ChunkSizer, WorkIndex
from permenum.jobs.counting.partial import ChunkLedger, Partial
from permenum.jobs.counting.schedule import DeviceState, RateBook, Scheduler, StopRule


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _scheduler(rates: list[float], total: int, stop: threading.Event | None = None,
               costs: np.ndarray | None = None) -> tuple[Scheduler, Clock]:
    clock = Clock()
    devices = [DeviceState(f"dev{k}", True, ChunkSizer(2.0, 64, 1), 64) for k in range(len(rates))]
    scheduler = Scheduler(devices, StopRule(stop or threading.Event()), clock)
    ledger = ChunkLedger(total, 0, Partial(classes=None, nodes=None, solutions=None), {})
    scheduler.open(ledger, WorkIndex(costs, total))
    return scheduler, clock


def _simulate(scheduler: Scheduler, clock: Clock, rates: list[float], costs: np.ndarray,
              ahead: bool = False) -> tuple[list[tuple[int, int, int]], list[float]]:
    """Every device claims when free -- and, with ``ahead``, its next chunk as it starts one, as
    jobs.counting.device_loop does (a deferred claim is asked again when it is free); a chunk of work w takes
    w / rate seconds. Returns the chunks and each device's last finish time."""
    cum = np.concatenate([[0.0], np.cumsum(costs)])
    events: list[tuple[float, int, int, int]] = []
    chunks: list[tuple[int, int, int]] = []
    ends = [0.0] * len(rates)
    queued: dict[int, tuple[int, int] | None] = {}

    def start(k: int, chunk: tuple[int, int]) -> None:
        begin = max([clock.now] + [t for t, j, _, _ in events if j == k])
        heapq.heappush(events, (begin + (cum[chunk[1]] - cum[chunk[0]]) / rates[k], k, *chunk))
        chunks.append((k, *chunk))
        if ahead:
            queued[k] = scheduler.claim(k)

    def take(k: int) -> None:  # device k is free
        got = scheduler.claim(k)
        if got is not None:
            start(k, got)

    for k in range(len(rates)):
        take(k)
    while events:
        t, k, start_, end = heapq.heappop(events)
        clock.now = ends[k] = t
        scheduler.finish(k, start_, end, Partial(end - start_, end - start_, None, None, t, None, 1),
                         (cum[end] - cum[start_]) / rates[k])
        nxt = queued.pop(k, None)
        if nxt is not None:
            start(k, nxt)
        else:
            take(k)
    return chunks, ends


def test_every_state_is_counted_once_and_devices_finish_together() -> None:
    rates, total = [1000.0, 250.0], 20000
    costs = np.random.default_rng(1).uniform(0.5, 1.5, total)
    scheduler, clock = _scheduler(rates, total, costs=costs)
    chunks, ends = _simulate(scheduler, clock, rates, costs)
    covered = sorted((s, e) for _, s, e in chunks)
    assert covered[0][0] == 0 and covered[-1][1] == total
    assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))  # disjoint and without gaps
    assert scheduler.ledger is not None and scheduler.ledger.complete
    assert scheduler.ledger.prefix.raw == total
    fast = sum(costs[s:e].sum() for k, s, e in chunks if k == 0) / costs.sum()
    assert 0.75 < fast < 0.85  # shares follow the rates (4:1)
    assert abs(ends[0] - ends[1]) < 0.05 * max(ends)  # neither waits long for the other


def test_a_peer_without_a_measured_rate_holds_a_device_to_its_first_chunk() -> None:
    scheduler, clock = _scheduler([1000.0, 1000.0], 100000)
    scheduler.devices[1].is_gpu = False  # a CPU beside a GPU: not expected at the GPU's rate
    assert scheduler.claim(0) == (0, 64)
    scheduler.finish(0, 0, 64, Partial(classes=None, nodes=None, solutions=None), 0.01)
    start, end = scheduler.claim(0) or (0, 0)
    assert end - start == 64  # the CPU has not reported yet: the GPU does not run ahead alone
    scheduler.devices[1].is_gpu = True  # a second GPU is expected at the first's rate: no such cap
    start, end = scheduler.claim(0) or (0, 0)
    assert end - start > 64


def test_stop_is_honoured_after_each_device_did_a_chunk() -> None:
    stop = threading.Event()
    stop.set()
    rates, total = [1000.0, 1000.0], 50000
    scheduler, clock = _scheduler(rates, total, stop)
    chunks, _ = _simulate(scheduler, clock, rates, np.ones(total))
    assert sorted(k for k, _, _ in chunks) == [0, 1]  # one chunk each, then both stop
    assert scheduler.interrupted and scheduler.progressed
    assert scheduler.ledger is not None and not scheduler.ledger.complete


def test_a_time_budget_stops_the_devices() -> None:
    clock = Clock()
    devices = [DeviceState("dev0", False, ChunkSizer(2.0, 10, 1), 10)]
    scheduler = Scheduler(devices, StopRule(threading.Event(), max_seconds=5.0, started=0.0), clock)
    scheduler.open(ChunkLedger(1000, 0, Partial(classes=None, nodes=None, solutions=None), {}), WorkIndex(None, 1000))
    start, end = scheduler.claim(0) or (0, 0)
    clock.now = 6.0
    scheduler.finish(0, start, end, Partial(classes=None, nodes=None, solutions=None), 6.0)
    assert scheduler.claim(0) is None and scheduler.interrupted


def test_abort_hands_out_nothing() -> None:
    clock = Clock()
    scheduler = Scheduler([DeviceState("dev0", True, ChunkSizer(), 64)], StopRule(threading.Event()), clock)
    scheduler.abort()
    assert not scheduler.wait_open()


def test_a_chunk_claimed_ahead_keeps_its_device_busy_for_its_peers() -> None:
    """jobs.counting.task claims a device's next chunk while the current one counts: finishing the current one
    leaves the one claimed ahead in flight (peers must not see the device idle), begun at that moment."""
    scheduler, clock = _scheduler([1.0, 1.0], 1000)
    first = scheduler.claim(0)
    ahead = scheduler.claim(0)
    assert first is not None and ahead is not None and first[1] == ahead[0]
    d = scheduler.devices[0]
    assert d.in_flight == (first[1] - first[0]) + (ahead[1] - ahead[0]) and d.since == 0.0
    clock.now = 5.0
    scheduler.finish(0, *first, Partial(first[1] - first[0], first[1] - first[0], None, None, 5.0, None, 1), 5.0)
    assert d.in_flight == ahead[1] - ahead[0] and d.since == 5.0
    assert d.as_peer(scheduler.devices, 5.0).busy > 0


def test_a_heavy_refined_chunk_is_sliced_by_time() -> None:
    """jobs.counting.refine.next_slice: the rest in one launch where it fits the bound, else slices of half the
    bound at the measured rate (a stop request waits at most one), never more than MAX_SLICES."""
    from permenum.jobs.counting.refine import MAX_DEEPEN, MAX_SLICES, deepen, next_slice

    assert next_slice(0, 1000, 0, 0.0, 1.0, 2.0) == 1000  # expected to fit: one launch, as before slicing
    assert next_slice(0, 1000, 0, 0.0, None, 2.0) == 125  # rate unknown: an eighth measures it
    assert next_slice(0, 1000, 0, 0.0, 80.0, 2.0) == 125  # expected 40x the bound
    assert next_slice(125, 1000, 125, 10.0, 80.0, 2.0) == 16  # 0.08 s a state: 1 s holds 12, the floor is 16
    assert next_slice(125, 1000, 125, 0.5, 80.0, 2.0) == 250  # 0.004 s a state: 1 s holds 250
    assert next_slice(500, 1000, 500, 0.5, None, 2.0) == 500  # the rest fits: all of it
    assert next_slice(990, 1000, 10, 100.0, None, 2.0) == 10  # never past the end
    assert next_slice(0, 10, 0, 0.0, None, 2.0) == 1 and -(-1000 // MAX_SLICES) == 16
    assert deepen(None, 2.0) == 1.0 and deepen(0.5, 2.0) == 1.0 and deepen(3.0, 2.0) == 3.0
    assert deepen(1e6, 2.0) == MAX_DEEPEN


def test_a_first_slice_gives_the_chunk_refined_meanwhile_an_expectation() -> None:
    """A refined chunk's measuring slice tells how long the next chunk, claimed before any chunk ended,
    should take, so that it is staged whole where it fits; the first chunk's end replaces that guess."""
    scheduler, _ = _scheduler([1.0], 1000, costs=np.full(1000, 2.0))
    first, second = scheduler.claim(0), scheduler.claim(0)
    assert first == (0, 64) and second == (64, 128) and scheduler.expected_seconds(0, *second) is None
    scheduler.advance(0, *first, 9, 800, 100, Partial(1, 1, None, None, 0.5, None, 1), 100)
    # the slice: 100 of 800 fine states, an eighth of 128 units of work, in 0.5 s: 32 units a second,
    # a guess, so twice what it suggests
    assert scheduler.devices[0].slice_rate == pytest.approx(32)
    assert scheduler.expected_seconds(0, *second) == pytest.approx(2 * 128 / 32)
    scheduler.finish(0, *first, Partial(2, 2, None, None, 1.0, None, 1), 1.0)  # 128 units in 1.0 s
    assert scheduler.expected_seconds(0, *second) == pytest.approx(1.0)
    scheduler.advance(0, *second, 9, 800, 100, Partial(1, 1, None, None, 4.0, None, 1), 100)
    assert scheduler.devices[0].slice_rate == pytest.approx(32)  # no guess once a rate is measured


def test_an_open_chunk_is_kept_and_claimed_whole_on_resume() -> None:
    """A refined chunk counted in part stays open (depth, fine states counted, their sums) through a
    checkpoint's JSON; the resumed ledger hands it out whole and counts it once when it ends."""
    ledger = ChunkLedger(10, 0, Partial(classes=None, nodes=None, solutions=None), {})
    assert ledger.claim(4) == (0, 4) and ledger.claim(3) == (4, 7)
    ledger.advance(4, 7, 9, 100, 30, Partial(5, 5, None, None, 1.0, None, 1))
    ledger.advance(4, 7, 9, 100, 60, Partial(7, 7, None, None, 1.0, None, 1))
    ledger.finish(0, 4, Partial(11, 11, None, None, 1.0, None, 1))
    assert not ledger.complete and ledger.prefix_end == 4
    resumed = ChunkLedger.resumed(10, ledger.prefix_end, ledger.prefix.as_json(), ledger.ahead_json(),
                                  ledger.open_json())
    assert resumed.open[4].fine_done == 60 and resumed.open[4].depth == 9 and resumed.open[4].sums.weighted == 12
    before = ChunkLedger.resumed(10, 0, Partial().as_json(), [], ledger.open_json())
    assert before.claim(100) == (0, 4) and before.claim(1) == (4, 7)  # no chunk reaches into an open one
    assert resumed.claim(2) == (4, 7)  # whole, as it was refined, whatever size is asked
    assert resumed.claim(100) == (7, 10)
    resumed.finish(7, 10, Partial(2, 2, None, None, 1.0, None, 1))
    assert not resumed.complete  # the open chunk is not done
    resumed.finish(4, 7, Partial(3, 3, None, None, 1.0, None, 1))  # its last slice
    assert resumed.complete and resumed.prefix.weighted == 11 + 5 + 7 + 3 + 2


def test_a_chunk_done_in_an_earlier_attempt_is_not_handed_out_once_folded_in() -> None:
    """A resumed ledger skips a chunk an earlier attempt finished beyond the prefix; once the gap before it is
    counted the prefix folds it in, and a claim made after that (a device asking again once free) must not
    find it unclaimed: it was counted again, and the task never completed."""
    ledger = ChunkLedger(10, 0, Partial(classes=None, nodes=None, solutions=None), {})
    ledger.finish(5, 10, Partial(5, 5, None, None, 1.0, None, 1))  # the earlier attempt's chunk beyond
    assert ledger.claim(8) == (0, 5)
    ledger.finish(0, 5, Partial(5, 5, None, None, 1.0, None, 1))
    assert ledger.complete and ledger.claim(8) is None


def test_a_partition_starts_at_the_rate_its_predecessors_measured() -> None:
    """RateBook: the second partition's first chunk holds half the bound's work at the first's rate, not
    the first-chunk size a task without a known rate starts with."""
    book, drained = RateBook(), []
    clock = Clock()

    def partition() -> Scheduler:
        devices = [DeviceState("gpu0", True, ChunkSizer(2.0, 64, 1), 64)]
        scheduler = Scheduler(devices, StopRule(threading.Event()), clock, rates=book,
                              on_drained=lambda: drained.append(clock.now))
        scheduler.open(ChunkLedger(100000, 0, Partial(classes=None, nodes=None, solutions=None), {}),
                       WorkIndex(None, 100000))
        return scheduler

    first = partition()
    assert first.claim(0) == (0, 64)
    first.finish(0, 0, 64, Partial(64, 64, None, None, 0.064, None, 1), 0.064)  # 1000 states a second
    assert not drained
    while (chunk := first.claim(0)) is not None:
        first.finish(0, *chunk, Partial(classes=None, nodes=None, solutions=None), (chunk[1] - chunk[0]) / 1000)
    first.leave(0)  # the device thread leaves again when it ends: the run hears of it once
    assert len(drained) == 1 and book.get("gpu0") == pytest.approx(1000, rel=0.01)
    second = partition()
    assert second.claim(0) == (0, pytest.approx(1000, rel=0.01))  # half of the 2 s bound at 1000 a second


@pytest.mark.parametrize("symmetry", ["edges", "dihedral", "mirror", "none"])
def test_a_resumed_chunk_is_refined_to_the_same_fine_states(symmetry: str) -> None:
    """jobs.counting.refine: refining a chunk again to the depth its first refinement reached (a resumed open chunk)
    gives the same fine states -- made on the device (ChildBatch) or on the host alike -- at every size,
    near the leaves too, where a rung's states stop having two rows open."""
    from permenum.jobs.counting.refine import RefiningSolver
    from permenum.poolgen.generate import climb
    from permenum.problems import get_problem
    from permenum.problems.base import ChildBatch

    problem = get_problem("nqueens")
    kinds = set()
    for n in range(5, 13):
        pool = climb(problem, n, 64, 4.0, symmetry).states
        for target in (2, 50, 3000, 10 ** 6):
            solver = RefiningSolver(lambda depth: None, "", problem, n, symmetry, target, threading.Lock())  # type: ignore[arg-type, return-value]
            for chunk in (pool, pool.take(slice(0, max(1, len(pool) // 7)))):
                fine = solver.refine(chunk)
                again = solver.refine(chunk, depth=fine.depth)
                kinds.add(type(fine).__name__)
                assert type(again) is type(fine) and len(again) == len(fine), (n, target)
                a, b = (x.parents if isinstance(x, ChildBatch) else x for x in (fine, again))
                np.testing.assert_array_equal(a.prefix, b.prefix)
    assert kinds == {"ChildBatch", "StateBatch"}  # both kinds of fine states occur


@pytest.mark.parametrize("ahead", [False, True])
@pytest.mark.parametrize("devices", [2, 4, 8])
def test_devices_end_together_when_the_estimates_are_off(devices: int, ahead: bool) -> None:
    """The pool's estimates are samples, not costs: with the true cost of every run of 20 neighbouring
    states (a subtree) off by one log-normal factor (sigma 0.7: 2x heavier or lighter than estimated is
    common), chunks that shrink toward the end keep the devices' ends within 5% of the ideal (with whole
    PHACT shares: 7-25% past it). Claimed ahead, a chunk waits for the one its device counts: its share
    counts that wait (without it, 12-24% past the ideal on 2, 4 and 8 devices)."""
    rng = np.random.default_rng(7)
    total = 4000
    estimates = rng.uniform(0.5, 1.5, total)
    true = estimates * np.repeat(rng.lognormal(0.0, 0.7, total // 20), 20)
    rates = [1000.0] * devices
    clock = Clock()
    states = [DeviceState(f"dev{k}", True, ChunkSizer(1e9, 40, 1), 40) for k in range(devices)]
    scheduler = Scheduler(states, StopRule(threading.Event()), clock)
    scheduler.open(ChunkLedger(total, 0, Partial(classes=None, nodes=None, solutions=None), {}), WorkIndex(estimates, total))
    chunks, ends = _simulate(scheduler, clock, rates, true, ahead)
    assert sorted(s for _, s, _ in chunks)[0] == 0 and scheduler.ledger is not None and scheduler.ledger.complete
    ideal = true.sum() / sum(rates)
    assert max(ends) < 1.05 * ideal, (max(ends), ideal)


def test_a_least_chunk_keeps_the_tail_from_crumbling() -> None:
    """Shares halved toward the end make ever smaller chunks, each with its host work (a refined GPU chunk:
    0.05-0.2 s); a least chunk (DeviceState.least_seconds) cuts their number and keeps the ends together."""
    rng = np.random.default_rng(7)
    total = 4000
    estimates = rng.uniform(0.5, 1.5, total)
    true = estimates * np.repeat(rng.lognormal(0.0, 0.7, total // 20), 20)
    ideal = true.sum() / 4000.0
    counts = []
    for least in (0.0, ideal / 64):
        clock = Clock()
        states = [DeviceState(f"dev{k}", True, ChunkSizer(1e9, 40, 1), 40, least_seconds=least) for k in range(4)]
        scheduler = Scheduler(states, StopRule(threading.Event()), clock)
        scheduler.open(ChunkLedger(total, 0, Partial(classes=None, nodes=None, solutions=None), {}),
                       WorkIndex(estimates, total))
        chunks, ends = _simulate(scheduler, clock, [1000.0] * 4, true, ahead=True)
        assert scheduler.ledger is not None and scheduler.ledger.complete and max(ends) < 1.05 * ideal
        counts.append(len(chunks))
    assert counts[1] < 0.7 * counts[0], counts


def test_the_next_task_starts_once_every_state_is_claimed() -> None:
    """``on_drained`` (the local executor's cue to start the next partition) comes when every state is
    claimed, while the devices count their last chunks -- not when the last one ends: a device whose claim
    ahead was deferred still holds a chunk then."""
    rng = np.random.default_rng(7)
    total = 4000
    estimates = rng.uniform(0.5, 1.5, total)
    true = estimates * np.repeat(rng.lognormal(0.0, 0.7, total // 20), 20)
    clock, drained, ideal = Clock(), [], true.sum() / 4000.0
    states = [DeviceState(f"dev{k}", True, ChunkSizer(1e9, 40, 1), 40, least_seconds=ideal / 64) for k in range(4)]
    scheduler = Scheduler(states, StopRule(threading.Event()), clock, on_drained=lambda: drained.append(clock.now))
    scheduler.open(ChunkLedger(total, 0, Partial(classes=None, nodes=None, solutions=None), {}), WorkIndex(estimates, total))
    _, ends = _simulate(scheduler, clock, [1000.0] * 4, true, ahead=True)
    assert len(drained) == 1 and drained[0] < max(ends) - ideal / 64, (drained, max(ends))
