"""The algebraic Costas constructions, as internal evidence for a full enumeration.

Where no published count exists for order n, a full run can still be checked against the arrays
that theory says must be there: every exponential Welch array (order p-1, p prime) and every
Lempel-Golomb array (order q-2, q a prime power) is a Costas array, so each one must be among the
arrays the run found. Arrays are tuples of n ints, the 0-based row of each column.

Only these two families are built. The arrays made from them by adding or removing corner dots
(Welch W0 of order p, W2/W3 of orders p-2, p-3; Golomb G3/G4 of orders q-3, q-4 where
alpha + beta = 1) exist only for some of the parameters and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from math import gcd
from typing import Iterable, Iterator, Sequence

from permenum.problems.costas_symmetry import Perm, representative


def prime_power(q: int) -> tuple[int, int] | None:
    """(p, k) with q = p**k and p prime, or None."""
    if q < 2:
        return None
    p = next(d for d in range(2, q + 1) if q % d == 0)  # the smallest factor is prime
    k = 0
    while q % p == 0:
        q, k = q // p, k + 1
    return (p, k) if q == 1 else None


def _times_x(coeffs: tuple[int, ...], modulus: tuple[int, ...], p: int) -> tuple[int, ...]:
    """coeffs * x modulo the monic x^k + modulus[k-1] x^(k-1) + ... + modulus[0], over GF(p)."""
    top = coeffs[-1]
    shifted = (0,) + coeffs[:-1]
    return tuple((c - top * m) % p for c, m in zip(shifted, modulus))


def _code(coeffs: Sequence[int], p: int) -> int:
    """An element's int: its coefficients (lowest degree first) as base-p digits."""
    return sum(c * p**t for t, c in enumerate(coeffs))


def _powers_of_x(p: int, modulus: tuple[int, ...]) -> list[int] | None:
    """x^0, x^1, ... x^(q-2) as codes if x generates all q-1 nonzero residues, else None.

    Then the residues mod f form a field: the units of a ring of q elements number at most q-1,
    with equality only when every nonzero element is a unit. So this one walk both tests f
    (primitive, hence irreducible) and gives the exp table.
    """
    q = p ** len(modulus)
    one = (1,) + (0,) * (len(modulus) - 1)
    powers: list[int] = []
    e = one
    while len(powers) < q - 1:
        powers.append(_code(e, p))
        e = _times_x(e, modulus, p)
        if e == one:
            break
    return powers if len(powers) == q - 1 and e == one else None


def primitive_polynomials(p: int, k: int) -> Iterator[tuple[int, ...]]:
    """The monic primitive polynomials of degree k over GF(p), as their lower coefficients.

    Found by search, in lexicographic order of (modulus[k-1], ..., modulus[0]); degree 10 over
    GF(2) (q = 1024) takes a few ms.
    """
    for high_first in product(range(p), repeat=k):
        modulus = tuple(reversed(high_first))
        if modulus[0] != 0 and _powers_of_x(p, modulus) is not None:
            yield modulus


@dataclass(frozen=True)
class GaloisField:
    """GF(p^k) as polynomials in x modulo a primitive polynomial; x is the generator.

    Elements are ints 0..q-1 (coefficients as base-p digits, so for k = 1 the residue itself);
    multiplication goes through the exp/log tables of x.
    """

    p: int
    k: int
    modulus: tuple[int, ...]
    exp: tuple[int, ...]  # exp[e] = x^e, e in 0..q-2
    log: dict[int, int]

    @classmethod
    def of_order(cls, q: int, modulus: tuple[int, ...] | None = None) -> GaloisField:
        """The field of q elements, with the first primitive polynomial found unless one is given."""
        pk = prime_power(q)
        if pk is None:
            raise ValueError(f"no field has {q} elements: {q} is not a prime power")
        p, k = pk
        if modulus is None:
            modulus = next(primitive_polynomials(p, k))
        powers = _powers_of_x(p, modulus) if len(modulus) == k else None
        if powers is None:
            raise ValueError(f"{modulus} is not the lower coefficients of a primitive degree-{k} polynomial over GF({p})")
        return cls(p, k, modulus, tuple(powers), {v: e for e, v in enumerate(powers)})

    @property
    def order(self) -> int:
        return self.p**self.k

    def add(self, a: int, b: int) -> int:
        p, total, place = self.p, 0, 1
        for _ in range(self.k):
            total += (a % p + b % p) % p * place
            a, b, place = a // p, b // p, place * p
        return total

    def neg(self, a: int) -> int:
        p, total, place = self.p, 0, 1
        for _ in range(self.k):
            total += (-a) % p * place
            a, place = a // p, place * p
        return total

    def mul(self, a: int, b: int) -> int:
        if a == 0 or b == 0:
            return 0
        return self.exp[(self.log[a] + self.log[b]) % (self.order - 1)]

    def primitive_exponents(self) -> list[int]:
        """The e with x^e primitive: those prime to q-1."""
        m = self.order - 1
        return [e for e in range(m) if gcd(e, m) == 1]


def welch_arrays(n: int) -> set[Perm]:
    """Every exponential Welch array W1 of order n when n+1 = p is prime, else the empty set.

    Column i (0..p-2) has row g^(i+c) mod p, less one, for each primitive root g mod p and shift
    c in 0..p-2: phi(p-1) * (p-1) distinct arrays (the array gives back g^c and g).
    """
    p = n + 1
    if prime_power(p) != (p, 1):
        return set()
    field = GaloisField.of_order(p)  # k = 1: the codes are residues, x is a primitive root
    return {tuple(field.exp[e * (i + c) % n] - 1 for i in range(n)) for e in field.primitive_exponents() for c in range(n)}


def golomb_arrays_over(field: GaloisField) -> set[Perm]:
    """The Lempel-Golomb arrays of order q-2 built in this representation of GF(q).

    For primitive alpha = x^a and beta = x^b, column i has row j (1..q-2) with alpha^i + beta^j = 1:
    j = log_x(1 - x^(a i)) / b mod q-1 (a Zech logarithm; 1 - alpha^i is never 0 or 1 there).
    """
    m = field.order - 1
    one = field.exp[0]
    zech = [0] + [field.log[field.add(one, field.neg(field.exp[e]))] for e in range(1, m)]
    exponents = field.primitive_exponents()
    return {tuple(zech[a * i % m] * pow(b, -1, m) % m - 1 for i in range(1, m)) for a in exponents for b in exponents}


def golomb_arrays(n: int) -> set[Perm]:
    """Every Lempel-Golomb array of order n when n+2 = q is a prime power, else the empty set.

    One per pair of primitive elements (alpha, beta) of GF(q), alpha == beta the Lempel arrays.
    The pair (alpha^p, beta^p) gives the same array (Frobenius), so q = p^k gives phi(q-1)^2 / k
    distinct arrays (the tests check that count up to q = 32). The family does not depend on the
    field's representation: an isomorphism maps primitive elements to primitive elements.
    """
    if n < 1 or prime_power(n + 2) is None:
        return set()
    return golomb_arrays_over(GaloisField.of_order(n + 2))


def constructed_arrays(n: int) -> set[Perm]:
    """Welch and Lempel-Golomb arrays of order n: the ones any full enumeration must contain."""
    return welch_arrays(n) | golomb_arrays(n)


def missing_constructions(n: int, found: Iterable[Sequence[int]]) -> list[Perm]:
    """The constructed arrays of order n not in ``found`` closed under the 8 symmetries, sorted.

    A canonical-mode run stores only some members of each class, so classes are compared through
    their representatives. An empty list is the evidence a run passes.
    """
    classes: set[Perm] = set()
    for a in found:
        if len(a) != n:
            raise ValueError(f"an array of order {len(a)} among those of order {n}: {tuple(a)}")
        classes.add(representative(a))
    return sorted(a for a in constructed_arrays(n) if representative(a) not in classes)
