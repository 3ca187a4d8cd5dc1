"""`permenum estimate`: what a full run would cost, before it is paid for.

The coarse pool's cost estimates (poolgen.cost: Knuth's random probes, in estimated nodes) say how the
work is spread, not what a node costs on a device. A short timed sample fixes the scale: seeded random
blocks of the pool's states (each block put back in tree order, refined to the device's grain --
Problem.sample_states_per_lane where a run's would make a small block's states too light -- and
counted like a task's chunk, jobs.counting.refine; the last block takes what the budget has left) are counted until ``sample_seconds`` of kernel or
``max_fraction`` of the estimated work, and the device's seconds per estimated node over the sample
(a ratio estimator: measured seconds / estimated nodes of the same states) times the pool's estimated
nodes is the prediction (a sample goes on past ``max_fraction`` until it holds MIN_SAMPLE_SECONDS of
kernel: shorter ones time noise). The blocks' spread gives its statistical error.

Larger sizes are projected from two things: each one's own tree, the estimated nodes of the coarse pool
`pool` would make there (host work only: seconds, not a sample), and the device's seconds per estimated
node, whose drift a size is fitted over the sample's size and the FIT_SIZES - 1 below it, each from its
own sample (``Growth``: a line through their logarithms). Neither alone will do. A constant growth of the
predicted seconds (the model before, fitted over those sizes) misses that the tree's growth a size itself
grows: N-Queens' estimated nodes grow 9.9x a size from 24 to 26 and 10.9x from 26 to 28, and a fit of
9.21x over 21-24 projected N=28 at 2.1 H100-years where the measured kernel times of 20-23 and the
published counts say about 4. The Knuth estimate at one fixed cost per node (the model before that)
misses that a node's cost grows: fc's about 1.08x an order (Costas 30 at 1.55 H100-years against 2.5-3.3
from the measured growth). bench/NOTES.md, 2026-11-27 at the commit that made this so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from permenum.errors import UserError
from permenum.jobs.counting.refine import RefiningSolver
from permenum.poolgen.cost import default_probes, estimate_costs
from permenum.poolgen.generate import climb
from permenum.poolgen.write import DEFAULT_FACTOR, PoolSettings
from permenum.problems import Problem, StateBatch, get_problem
from permenum.solver.opencl import device_lanes, open_first
from permenum.solver.registry import make_solver, variant_for
from permenum.words import plural

#: The sizes whose predicted seconds the growth is fitted to: the sample's size and the ones below it (the
#: growth per size drifts up slowly, so the nearest sizes speak for the ones beyond).
FIT_SIZES = 4
#: The sizes `estimate` projects, the records' neighbourhood (N-Queens is known to 27, Costas to 29).
PROJECTED = {"nqueens": range(23, 29), "costas": range(21, 31)}
#: Kernel seconds a sample holds even past ``max_fraction``: shorter samples time noise (PoCL here, Costas
#: 14: a 10% sample is 35-60 ms of kernel, and the same command predicted 1.14x and 1.77x the run).
#: A run shorter than this is sampled whole, and its estimate is its count's own time.
MIN_SAMPLE_SECONDS = 0.5
#: A growth fitted to sizes shorter than this (predicted kernel seconds) is not projected: there launches and
#: timers, not the tree, set the time. Measured here (PoCL, 2-core EPYC), N-Queens 9-17: 5.5, 0.3, 0.8, 5.6,
#: 33, 59 ms, then 0.41, 1.8 s; below 0.1 s a size's time is 0.05x-9x the one below it (the estimated
#: nodes: 3.8x-7.8x), from 0.4 s on it follows them (7.0x, 4.4x against 6.2x, 6.5x). `estimate nqueens 14`
#: fitted 2.5x-3.2x a size to 11-14 and projected N=28 at 123 device-hours.
MIN_FIT_SECONDS = 0.2
#: How far the device's seconds per estimated node may drift a size over the fitted sizes (either way) before
#: the projection is called unreliable: it compounds over every projected size (1.12x over 8 sizes is 2.5x).
#: Measured: N-Queens on an H100 1.002x a size (21-24), Costas fc 1.053x (19-22), N-Queens on PoCL here 0.90x
#: (15-18) to 0.966x (16-19).
DRIFT_TOLERANCE = 1.12


@dataclass(frozen=True)
class Block:
    states: int
    estimated: float  # estimated nodes of its states
    seconds: float  # kernel seconds counting them


@dataclass
class Estimate:
    problem: str
    n: int
    symmetry: str
    device: str
    states: int  # the coarse pool's
    depth: int
    estimated_total: float  # estimated nodes of the whole pool
    blocks: list[Block] = field(default_factory=list)

    @property
    def seconds_per_node(self) -> float:
        return sum(b.seconds for b in self.blocks) / max(sum(b.estimated for b in self.blocks), 1e-300)

    @property
    def sampled_fraction(self) -> float:
        return sum(b.estimated for b in self.blocks) / max(self.estimated_total, 1e-300)

    @property
    def sample_seconds(self) -> float:
        return sum(b.seconds for b in self.blocks)

    @property
    def device_seconds(self) -> float:
        """Kernel seconds of a full run on this device."""
        return self.seconds_per_node * self.estimated_total

    @property
    def relative_error(self) -> float | None:
        """The standard error of the ratio estimate from the blocks' spread: 0 when the sample is the
        whole pool (nothing is extrapolated), None from fewer than 3 blocks."""
        if sum(b.states for b in self.blocks) == self.states:
            return 0.0
        if len(self.blocks) < 3:
            return None
        ratios = np.array([b.seconds / max(b.estimated, 1e-300) for b in self.blocks])
        weights = np.array([b.estimated for b in self.blocks])
        mean = float(np.average(ratios, weights=weights))
        var = float(np.average((ratios - mean) ** 2, weights=weights)) / (len(ratios) - 1)
        return float(np.sqrt(var)) / mean if mean > 0 else None


def _pool_of(problem_name: str, n: int, symmetry: str | None, seed: int) -> tuple[Problem, str, StateBatch, np.ndarray]:
    """The problem, the resolved symmetry, and the coarse pool `pool` would make at one partition with its costs."""
    settings = PoolSettings(problem_name, n, 1, seed=seed, symmetry=symmetry)
    settings.validate()
    problem = get_problem(problem_name)
    return (problem, settings.resolved_symmetry,
            *coarse_pool(problem, n, settings.resolved_symmetry, settings.target, seed))


def coarse_pool(problem: Problem, n: int, symmetry: str, target: int, seed: int) -> tuple[StateBatch, np.ndarray]:
    """The states `permenum pool` would make at ``target`` (one partition) and their cost estimates."""
    states = climb(problem, n, target, DEFAULT_FACTOR, symmetry).states
    return states, estimate_costs(problem, n, states, symmetry, default_probes(len(states)), seed)


def estimate(problem_name: str, n: int, device: str | None, sample_seconds: float, max_fraction: float,
             seed: int = 0, kernel: str | None = None, symmetry: str | None = None,
             min_sample_seconds: float = MIN_SAMPLE_SECONDS) -> Estimate:
    """Count a seeded random sample of the coarse pool on the device and scale it to the whole pool."""
    if sample_seconds <= 0 or not 0 < max_fraction <= 1:
        raise UserError(f"--sample-seconds must be positive and --max-fraction in (0, 1] "
                        f"(got {sample_seconds:g}, {max_fraction:g})")
    problem, symmetry, states, costs = _pool_of(problem_name, n, symmetry, seed)
    dev = open_first(device)
    ref = dev.ref
    solver = RefiningSolver(lambda depth: make_solver(problem.name, dev, n, depth, kernel, symmetry, False),
                            variant_for(problem.name, dev, kernel, symmetry), problem, n, symmetry,
                            (problem.sample_states_per_lane or problem.states_per_lane) * device_lanes(ref),
                            dev.launching)
    result = Estimate(problem.name, n, symmetry, ref.label, len(states), states.depth,
                      float(np.sum(costs, dtype=np.float64)))
    order = np.random.default_rng(seed).permutation(len(states))
    budget = max_fraction * result.estimated_total
    taken, size = 0, max(1, len(states) // 1024)
    while taken < len(states) and result.sample_seconds < sample_seconds:
        picked = order[taken:taken + size]
        if result.blocks and result.sample_seconds >= min_sample_seconds:
            # the last block takes what the budget has left (a larger launch: a truer rate)
            left = budget - sum(b.estimated for b in result.blocks)
            picked = picked[:int(np.searchsorted(np.cumsum(costs[picked], dtype=np.float64), left, "right"))]
            if len(picked) == 0:
                break
        rows = np.sort(picked)  # tree order inside the block, as in a partition
        estimated = float(np.sum(costs[rows], dtype=np.float64))
        out = solver.count(solver.refine(states.take(rows)))
        result.blocks.append(Block(len(rows), estimated, out.kernel_seconds))
        taken += len(rows)
        if result.sample_seconds * 4 < sample_seconds:
            size *= 2  # blocks grow while the sample is short: launches that fill the device
    return result


@dataclass(frozen=True)
class Growth:
    """A quantity growing by one factor a size (kernel seconds; seconds per estimated node): the least-squares
    line through their logarithms."""

    sizes: tuple[int, ...]
    seconds: tuple[float, ...]
    ratio: float  # the fitted factor from one size to the next
    log_seconds_at_zero: float

    @classmethod
    def fit(cls, points: Sequence[tuple[int, float]]) -> "Growth":
        """The line through (size, log seconds); two sizes at least, every one's seconds positive."""
        sizes, seconds = zip(*sorted(points)) if points else ((), ())
        if len(set(sizes)) < 2 or min(seconds) <= 0:
            raise UserError(f"a growth needs two sizes or more with positive seconds (got {list(points)})")
        slope, intercept = np.polyfit(np.array(sizes, dtype=np.float64), np.log(seconds), 1)
        return cls(tuple(sizes), tuple(seconds), float(np.exp(slope)), float(intercept))

    def seconds_at(self, n: int) -> float:
        return float(np.exp(self.log_seconds_at_zero + np.log(self.ratio) * n))


def growth(result: Estimate, estimate_at: Callable[[int], Estimate]) -> tuple[Growth | None, list[Estimate]]:
    """The growth of predicted kernel seconds over ``result``'s size and the FIT_SIZES - 1 below it (as far
    down as the problem goes), each of those estimated by ``estimate_at``; and their estimates. None where
    fewer than two of them took any time (the smallest sizes)."""
    lowest = max(get_problem(result.problem).min_n, result.n - FIT_SIZES + 1)
    below = [estimate_at(m) for m in range(lowest, result.n)]
    fitted = [(e.n, e.device_seconds) for e in (*below, result) if e.device_seconds > 0]
    return (Growth.fit(fitted) if len(fitted) >= 2 else None), below


def cost_growth(fitted: Sequence[Estimate]) -> Growth:
    """The drift of the device's seconds per estimated node over the fitted sizes (those that took time)."""
    return Growth.fit([(e.n, e.seconds_per_node) for e in fitted if e.device_seconds > 0])


def tree_nodes(problem_name: str, n: int, symmetry: str | None, seed: int) -> float:
    """The estimated nodes of size n's whole tree: its coarse pool's cost estimates, summed (host work only:
    3-4 s for N-Queens 23-28, 9-13 s for Costas 24-30 on a 2-core EPYC)."""
    _, _, _, costs = _pool_of(problem_name, n, symmetry, seed)
    return float(np.sum(costs, dtype=np.float64))


def project(cost: Growth, sizes: Sequence[int], nodes_at: Callable[[int], float]) -> list[tuple[int, float, float]]:
    """(size, its tree's estimated nodes, predicted kernel seconds) for each of ``sizes``: the nodes at the
    seconds per estimated node that ``cost`` (cost_growth of the fitted sizes) gives that size."""
    return [(m, nodes, nodes * cost.seconds_at(m)) for m in sizes for nodes in (nodes_at(m),)]


def doubts(growth: Growth, cost: Growth, fitted: Sequence[Estimate]) -> str | None:
    """Why a projection from ``fitted`` (the estimates ``growth`` and ``cost``, cost_growth, were fitted to) is
    not to be trusted, in words; None where nothing speaks against it. Sizes under MIN_FIT_SECONDS time
    launches, not the search, and a cost per estimated node that drifts more than DRIFT_TOLERANCE a size times
    something else too."""
    why = []
    short = [e for e in fitted if e.device_seconds < MIN_FIT_SECONDS]
    if short:
        why.append(f"{plural(len(short), 'size')} of the fit took under {MIN_FIT_SECONDS:g} s of kernel ("
                   + ", ".join(f"{e.n}: {e.device_seconds:.2g} s" for e in short) + "), where launches and timers, "
                   "not the search, set the time")
    drift = cost.ratio
    if not 1 / DRIFT_TOLERANCE <= drift <= DRIFT_TOLERANCE:
        why.append(f"the device's seconds per estimated node drift {drift:.3f}x a size over them (the kernel seconds "
                   f"{growth.ratio:.2f}x, the search tree's estimated nodes {growth.ratio / drift:.2f}x), more than the "
                   f"{DRIFT_TOLERANCE:g}x a projection carries")
    return "; ".join(why) or None
