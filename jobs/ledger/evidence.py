"""Internal evidence for a finished run, where no published count may exist (Costas orders 30 and up).

Four checks that need nothing from outside the run: every stored array is a Costas array (host code,
independent of the kernels); its classes, each counted once at its representative, times their orbit
sizes give the run's total; every member of those classes that the search finds is stored (an array
taken away with its raw count leaves its class's orbit with a gap); and every array the algebraic constructions guarantee for the order
(exponential Welch of order p-1, Lempel-Golomb of order q-2) is among them, as the arrays of orders
27-29 were checked when they were first enumerated.
"""

from __future__ import annotations

from dataclasses import dataclass

from permenum.jobs.counting.solutions import stored_arrays
from permenum.layout import RunLayout
from permenum.problems.costas_constructions import golomb_arrays, missing_constructions, welch_arrays
from permenum.problems.costas_symmetry import symmetries


@dataclass(frozen=True)
class CostasEvidence:
    classes: int  # distinct classes among the stored arrays (each checked)
    orbit_total: int  # the sum of their orbit sizes
    total: int  # what the run counted
    counted_classes: int | None  # what the run counted as classes
    welch: int  # constructed arrays of this order (all members of their classes)
    golomb: int
    missing: list[tuple[int, ...]]  # constructed arrays the run did not find
    not_costas: list[tuple[int, ...]]  # stored arrays that fail the check (a faulty kernel or a damaged file)
    missing_members: list[tuple[int, ...]]  # of stored classes, found by the search, stored nowhere

    @property
    def sound(self) -> bool:
        return (self.orbit_total == self.total and not self.missing and not self.not_costas
                and not self.missing_members and (self.counted_classes is None or self.counted_classes == self.classes))

    def describe(self) -> str:
        made = " and ".join(f"{k} {name}" for k, name in ((self.welch, "Welch"), (self.golomb, "Lempel-Golomb")) if k)
        made += " arrays of this order"
        line = (f"{self.classes} classes, each array checked; classes x orbit sizes = {self.orbit_total} "
                f"({'=' if self.orbit_total == self.total else 'DIFFERS FROM'} the total {self.total})")
        if self.not_costas:
            line += f"; {len(self.not_costas)} stored arrays are NOT Costas arrays, e.g. {list(self.not_costas[0])}"
        if self.missing_members:
            line += (f"; {len(self.missing_members)} members of the stored classes that the search finds are stored "
                     f"NOWHERE, e.g. {list(self.missing_members[0])}")
        if self.counted_classes is not None and self.counted_classes != self.classes:
            line += f"; the results count {self.counted_classes} classes: DIFFERENT"
        if self.welch + self.golomb == 0:
            return line + "; none of the families built here (exponential Welch, Lempel-Golomb) gives this order"
        if self.missing:
            return line + f"; {len(self.missing)} of the {made} MISSING, e.g. {list(self.missing[0])}"
        return line + f"; all {made} present"


def costas_evidence(layout: RunLayout, n: int, total: int, counted_classes: int | None) -> CostasEvidence:
    """The checks on a complete Costas run's stored arrays (stored_arrays refuses an incomplete run)."""
    stored = stored_arrays(layout, expand=False)  # each array checked there
    representatives = stored.arrays
    orbit_total = sum(len(set(symmetries(r))) for r in representatives)
    return CostasEvidence(len(representatives), orbit_total, total, counted_classes, len(welch_arrays(n)),
                          len(golomb_arrays(n)), missing_constructions(n, representatives), stored.not_costas,
                          stored.missing_members)


#: problem -> its evidence from a finished run's own files (`collect` prints it); problems without one have none.
EVIDENCE = {"costas": costas_evidence}


def run_evidence(layout: RunLayout, problem: str, n: int, total: int, classes: int | None) -> CostasEvidence | None:
    """The problem's evidence for a finished run, None where it has none."""
    check = EVIDENCE.get(problem)
    return None if check is None else check(layout, n, total, classes)
