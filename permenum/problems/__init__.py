"""The problem registry: one module per problem."""

from __future__ import annotations

from permenum.errors import UserError
from permenum.problems.base import Problem, StateBatch
from permenum.problems.costas import Costas
from permenum.problems.nqueens import NQueens

PROBLEMS: dict[str, Problem] = {p.name: p for p in (NQueens(), Costas())}


def get_problem(name: str) -> Problem:
    try:
        return PROBLEMS[name]
    except KeyError:
        raise UserError(f"unknown problem {name!r} (choose from {', '.join(sorted(PROBLEMS))})") from None


__all__ = ["PROBLEMS", "Problem", "StateBatch", "get_problem"]
