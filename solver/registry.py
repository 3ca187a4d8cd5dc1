"""Which kernel wrapper runs which problem: the one place the task asks for a solver.

A problem's solver is a class with ``variants`` (the kernel builds a user may choose with --kernel),
a ``build`` classmethod, and instances that count a StateBatch and name the ``variant`` they run.
Adding a problem adds one line to SOLVERS.
"""

from __future__ import annotations

from typing import Protocol

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.problems.base import ChildBatch
from permenum.solver.costas import CostasKernel
from permenum.solver.nqueens import NQueensKernel
from permenum.solver.opencl import BatchCounts, DeviceContext, Staged


class Solver(Protocol):
    variant: str  # the kernel build it runs (recorded in every result)
    builds: tuple[str, ...]  # solver.opencl.build_id of each program it built (recorded in every result)

    def __call__(self, batch: StateBatch | ChildBatch) -> BatchCounts: ...  # stage, then run

    def stage(self, batch: StateBatch | ChildBatch) -> Staged: ...  # its inputs uploaded: any thread

    def run(self, staged: Staged) -> BatchCounts: ...  # counted: the device's own thread


class SolverClass(Protocol):
    variants: tuple[str, ...]

    @staticmethod
    def default_variant(dev: DeviceContext, symmetry: str) -> str: ...

    def check(self, variant: str, symmetry: str) -> None: ...

    def build(self, dev: DeviceContext, n: int, depth: int, symmetry: str, variant: str | None,
              count_nodes: bool) -> Solver: ...


SOLVERS: dict[str, SolverClass] = {
    "nqueens": NQueensKernel,
    "costas": CostasKernel,
}
KERNELS: dict[str, tuple[str, ...]] = {name: cls.variants for name, cls in SOLVERS.items()}


def check_kernel(problem: str, variant: str, symmetry: str) -> None:
    """Refuse, before anything runs, a variant the problem does not have or that cannot serve the symmetry mode."""
    if problem not in SOLVERS:
        raise UserError(f"no kernel for problem {problem!r}")
    SOLVERS[problem].check(variant, symmetry)


def make_solver(problem: str, dev: DeviceContext, n: int, depth: int, variant: str | None, symmetry: str,
                count_nodes: bool = False) -> Solver:
    """The problem's kernel built for this device, size, pool depth and symmetry (``variant`` None: the device's default)."""
    if problem not in SOLVERS:
        raise UserError(f"no kernel for problem {problem!r}")
    return SOLVERS[problem].build(dev, n, depth, symmetry, variant, count_nodes)


def variant_for(problem: str, dev: DeviceContext, variant: str | None, symmetry: str) -> str:
    """The kernel build ``make_solver`` gives on this device (``variant`` None: the default for the device and
    the pool's symmetry mode)."""
    return variant or SOLVERS[problem].default_variant(dev, symmetry)
