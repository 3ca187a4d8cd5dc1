"""Which kernel wrapper runs which problem: the one place the task asks for a solver."""

from __future__ import annotations

from typing import Callable, Protocol

from permenum.errors import UserError
from permenum.problems import StateBatch
from permenum.solver.costas import VARIANTS as COSTAS_VARIANTS, CostasKernel
from permenum.solver.nqueens import VARIANTS as NQ_VARIANTS, NQueensKernel
from permenum.solver.opencl import BatchCounts, DeviceContext


class Solver(Protocol):
    def __call__(self, batch: StateBatch) -> BatchCounts: ...


KERNELS: dict[str, tuple[str, ...]] = {"nqueens": tuple(NQ_VARIANTS), "costas": COSTAS_VARIANTS}


def make_solver(problem: str, dev: DeviceContext, n: int, depth: int, variant: str | None, symmetry: str,
                count_nodes: bool = False) -> Solver:
    factories: dict[str, Callable[[], Solver]] = {
        "nqueens": lambda: NQueensKernel(dev, n, depth, symmetry, variant, count_nodes),
        "costas": lambda: CostasKernel(dev, n, symmetry, count_nodes, variant=variant),
    }
    if problem not in factories:
        raise UserError(f"no kernel for problem {problem!r}")
    return factories[problem]()
