"""Welch and Lempel-Golomb constructions against a brute-force enumeration and their definitions."""

from __future__ import annotations

import random
import time
from functools import cache
from math import gcd

import pytest

from permenum.problems.costas_constructions import (
    GaloisField,
    constructed_arrays,
    golomb_arrays,
    golomb_arrays_over,
    missing_constructions,
    prime_power,
    primitive_polynomials,
    welch_arrays,
)
from permenum.problems.costas_symmetry import inverse, is_costas, representative, symmetries
from tests.conftest import published

Perm = tuple[int, ...]


@cache
def all_costas(n: int) -> frozenset[Perm]:
    """Every Costas array of order n by backtracking: no row difference twice at one column distance."""
    found: set[Perm] = set()
    rows: list[int] = []
    seen: list[set[int]] = [set() for _ in range(n)]  # seen[d]: row differences of columns d apart

    def extend() -> None:
        k = len(rows)
        if k == n:
            found.add(tuple(rows))
            return
        for r in range(n):
            if r in rows or any(r - rows[k - d] in seen[d] for d in range(1, k + 1)):
                continue
            for d in range(1, k + 1):
                seen[d].add(r - rows[k - d])
            rows.append(r)
            extend()
            rows.pop()
            for d in range(1, k + 1):
                seen[d].remove(r - rows[k - d])

    extend()
    return frozenset(found)


def is_prime(p: int) -> bool:
    return p >= 2 and all(p % d for d in range(2, p))


def phi(m: int) -> int:
    return sum(1 for e in range(1, m + 1) if gcd(e, m) == 1)


def primitive_roots(p: int) -> list[int]:
    return [g for g in range(1, p) if len({pow(g, i, p) for i in range(p - 1)}) == p - 1]


@pytest.mark.parametrize("n", range(1, 11))
def test_brute_force_matches_the_published_counts(n: int) -> None:
    assert len(all_costas(n)) == published("costas_total", n)


@pytest.mark.parametrize("n", range(1, 11))
def test_constructions_are_costas_arrays_of_the_brute_force(n: int) -> None:
    built = constructed_arrays(n)
    assert built == welch_arrays(n) | golomb_arrays(n)
    assert all(is_costas(a) for a in built)
    assert built <= all_costas(n)
    assert bool(built) == (is_prime(n + 1) or prime_power(n + 2) is not None)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 9, 10])
def test_missing_constructions_sees_whole_classes(n: int) -> None:
    everything = all_costas(n)
    built = constructed_arrays(n)
    assert built
    assert missing_constructions(n, everything) == []
    reps = {representative(a) for a in everything}
    assert missing_constructions(n, reps) == []  # one array per class, as the canonical search keeps
    others = [max(symmetries(a)) for a in reps]  # or any other member of the class
    assert missing_constructions(n, others) == []
    assert missing_constructions(n, []) == sorted(built)
    for dropped in sorted({representative(a) for a in built}):
        members = set(symmetries(dropped))
        rest = [a for a in everything if a not in members]
        expected = sorted(a for a in built if a in members)
        assert expected and missing_constructions(n, rest) == expected


def test_missing_constructions_rejects_another_order() -> None:
    with pytest.raises(ValueError, match="order 4 among those of order 6"):
        missing_constructions(6, [(0, 1, 3, 2)])


@pytest.mark.parametrize("p", [2, 3, 5, 7, 11, 13])
def test_welch_from_the_definition(p: int) -> None:
    expected = {tuple(pow(g, i + c, p) - 1 for i in range(p - 1)) for g in primitive_roots(p) for c in range(p - 1)}
    assert welch_arrays(p - 1) == expected
    assert len(expected) == phi(p - 1) * (p - 1)


@pytest.mark.parametrize("q", [3, 5, 7, 11, 13])
def test_golomb_from_the_definition_for_prime_q(q: int) -> None:
    roots = primitive_roots(q)
    expected = set()
    for alpha in roots:
        for beta in roots:
            row = [next(j for j in range(1, q - 1) if (pow(alpha, i, q) + pow(beta, j, q)) % q == 1) for i in range(1, q - 1)]
            expected.add(tuple(j - 1 for j in row))
    assert golomb_arrays(q - 2) == expected


@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9, 16, 25, 27, 29, 32])
def test_golomb_count(q: int) -> None:
    """phi(q-1)^2 pairs; the k pairs of one Frobenius orbit (alpha^(p^t), beta^(p^t)) give one array."""
    p, k = prime_power(q)  # type: ignore[misc]
    assert len(golomb_arrays(q - 2)) == phi(q - 1) ** 2 // k


@pytest.mark.parametrize("q", [4, 5, 7, 8, 9, 16, 25, 27])
def test_golomb_over_every_representation(q: int) -> None:
    """Costas, non-empty, Lempel arrays (alpha == beta) symmetric, the same whatever primitive polynomial."""
    arrays = golomb_arrays(q - 2)
    assert arrays and all(is_costas(a) for a in arrays)
    p, k = prime_power(q)  # type: ignore[misc]
    moduli = list(primitive_polynomials(p, k))
    for modulus in (moduli[0], moduli[-1]):
        assert golomb_arrays_over(GaloisField.of_order(q, modulus)) == arrays
    assert any(list(a) == inverse(a) for a in arrays)  # Lempel (alpha == beta): its own transpose


@pytest.mark.parametrize("q", [2, 3, 4, 8, 9, 25, 27, 49, 64, 81, 125, 243, 1024])
def test_field_axioms(q: int) -> None:
    field = GaloisField.of_order(q)
    assert field.order == q and sorted(field.exp) == list(range(1, q))  # x generates every unit
    zero, one = 0, field.exp[0]
    rng = random.Random(q)
    for _ in range(300):
        a, b, c = (rng.randrange(q) for _ in range(3))
        assert field.add(a, field.neg(a)) == zero and field.add(a, zero) == a
        assert field.add(a, b) == field.add(b, a) and field.mul(a, b) == field.mul(b, a)
        assert field.mul(a, field.add(b, c)) == field.add(field.mul(a, b), field.mul(a, c))
        assert field.mul(a, one) == a
    total = zero
    for _ in range(field.p):
        total = field.add(total, one)
    assert total == zero  # characteristic p


def test_primitive_polynomials_agree_with_known_counts() -> None:
    """phi(p^k - 1) / k primitive polynomials of degree k over GF(p)."""
    for p, k in ((2, 1), (2, 2), (2, 3), (2, 4), (2, 5), (3, 1), (3, 2), (3, 3), (5, 1), (5, 2), (7, 2)):
        assert len(list(primitive_polynomials(p, k))) == phi(p**k - 1) // k, (p, k)


def test_primitive_polynomials_mean_what_they_say() -> None:
    """Lower coefficients of the monic polynomial: x - g for each primitive root g; over GF(3) the
    primitive quadratics are x^2 + x + 2 and x^2 + 2x + 2."""
    for p in (5, 7, 11):
        assert sorted(primitive_polynomials(p, 1)) == sorted(((-g) % p,) for g in primitive_roots(p))
    assert sorted(primitive_polynomials(3, 2)) == [(2, 1), (2, 2)]


def test_not_a_field_is_refused() -> None:
    with pytest.raises(ValueError, match="not a prime power"):
        GaloisField.of_order(12)
    with pytest.raises(ValueError, match="not the lower coefficients of a primitive"):
        GaloisField.of_order(9, (1, 0))  # x^2 + 1 is irreducible over GF(3), but x has order 4


def test_prime_power_against_trial() -> None:
    for q in range(-3, 300):
        expected = next(((p, k) for p in range(2, max(q, 2) + 1) if is_prime(p) for k in range(1, 10) if p**k == q), None)
        assert prime_power(q) == expected, q


@pytest.mark.parametrize("n", [0, 8, 20, 24, 32, 33])
def test_neither_family(n: int) -> None:
    assert welch_arrays(n) == golomb_arrays(n) == constructed_arrays(n) == set()
    assert missing_constructions(n, []) == []


def test_largest_orders_quickly() -> None:
    start = time.perf_counter()
    welch, golomb = welch_arrays(30), golomb_arrays(30)  # p = 31, q = 32 = 2^5
    assert len(welch) == phi(30) * 30 and golomb
    assert all(is_costas(a) for a in welch | golomb)
    assert time.perf_counter() - start < 10  # well under 1 s alone; generous for a loaded machine
