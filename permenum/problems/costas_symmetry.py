"""The 8 symmetries of the square acting on Costas arrays, written independently of the kernel.

Used to check every array the kernel reports, to count each class once (at its representative), and
to expand a class.
A permutation ``p`` maps column i to row p[i].
"""

from __future__ import annotations

from typing import Sequence

Perm = tuple[int, ...]


def is_costas(p: Sequence[int]) -> bool:
    """All n(n-1)/2 displacement vectors (j-i, p[j]-p[i]) distinct, and p a permutation."""
    n = len(p)
    if sorted(p) != list(range(n)):
        return False
    seen = set()
    for i in range(n):
        for j in range(i + 1, n):
            v = (j - i, p[j] - p[i])
            if v in seen:
                return False
            seen.add(v)
    return True


def inverse(p: Sequence[int]) -> list[int]:
    """The transpose: column of each row. ValueError when p is not a permutation of 0..n-1 (a damaged or
    faulty array has no transpose; is_costas says False for it)."""
    if sorted(p) != list(range(len(p))):
        raise ValueError(f"{list(p)} is not a permutation of 0..{len(p) - 1}")
    inv = [0] * len(p)
    for c, r in enumerate(p):
        inv[r] = c
    return inv


def symmetries(p: Sequence[int]) -> list[Perm]:
    """The images of p under the dihedral group of the square (with repeats when p is symmetric)."""
    n = len(p)
    inv = inverse(p)
    flips = []
    for q in (tuple(p), tuple(inv)):  # identity and the main-diagonal transpose
        flips += [q, tuple(q[::-1]), tuple(n - 1 - r for r in q), tuple(n - 1 - r for r in q[::-1])]
    return flips


def edge_offsets(p: Sequence[int]) -> list[int]:
    """Column 0 and n-1 dots from top and bottom, row 0 and n-1 dots from left and right."""
    n = len(p)
    inv = inverse(p)
    return [p[0], n - 1 - p[0], p[-1], n - 1 - p[-1], inv[0], n - 1 - inv[0], inv[-1], n - 1 - inv[-1]]


def is_canonical(p: Sequence[int]) -> bool:
    """Whether the canonical search finds p: p[0] the smallest edge offset and, with a corner dot, row 1
    in no column 2..p[1]-1 (p no larger than its transpose at column 1). Every representative is."""
    return p[0] == min(edge_offsets(p)) and not (len(p) > 2 and p[0] == 0 and 2 <= inverse(p)[1] < p[1])


def representative(p: Sequence[int]) -> Perm:
    """The smallest of p's images: the one array its class is counted at.

    Its first entry is the smallest edge offset (the images' first entries are the 8 edge offsets),
    so the canonical search always finds it."""
    return min(symmetries(p))


def class_share(p: Sequence[int]) -> tuple[int, int]:
    """(arrays, classes) counted at p: its class's size and 1 where p is the representative, else (0, 0).

    Each class is counted once, wherever its representative is found, so every partition's counts
    are whole numbers and their sums are the total and the number of classes."""
    if tuple(p) != representative(p):
        return 0, 0
    return len(set(symmetries(p))), 1
