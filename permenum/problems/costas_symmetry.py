"""The 8 symmetries of the square acting on Costas arrays, written independently of the kernel.

Used to check every array the kernel reports, to count each class once (at its representative, or in
the centre mode at its smallest reading), and to expand a class.
A permutation ``p`` maps column i to row p[i].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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


def reading_order(n: int) -> list[int]:
    """The centre mode's columns in the order its states place them and its rule reads them: the centre
    out, the two columns of each distance side by side (odd n: m, m-1, m+1, ...; even n: m0, m1, m0-1,
    m1+1, ...). The column and row reflections map the set of its first k columns onto itself."""
    m, order = (n - 1) // 2, []
    if n % 2 == 0:
        for s in range(n // 2):
            order += [m - s, m + 1 + s]
    else:
        order = [m]
        for s in range(1, n // 2 + 1):
            order += [m - s, m + s]
    return order


def reading(p: Sequence[int]) -> Perm:
    """p's rows in the reading order: what the centre mode compares its images by."""
    return tuple(p[c] for c in reading_order(len(p)))


def centre_class_share(p: Sequence[int]) -> tuple[int, int]:
    """The centre mode's class_share: (class size, 1) where p's reading is the smallest of its 8 images'
    readings, else (0, 0). That image reads no larger than its reflections, so the centre search finds
    it (its rule keeps an array whose reading is the smallest of its 4 reflections); the transposes it
    does not cut, so a class is found once or twice, and counted once."""
    images = symmetries(p)
    if reading(p) != min(reading(q) for q in images):
        return 0, 0
    return len(set(images)), 1


def is_centre_canonical(p: Sequence[int]) -> bool:
    """Whether the centre search finds p: its reading no larger than those of its reflections H, V and HV."""
    own = reading(p)
    return all(own <= reading(q) for q in symmetries(p)[1:4])


def found_by(symmetry: str) -> Callable[[Sequence[int]], bool]:
    """Which arrays a whole search in this symmetry mode finds (every array with no reduction)."""
    return {"canonical": is_canonical, "centre": is_centre_canonical}.get(symmetry, lambda p: True)


def share_in(symmetry: str) -> Callable[[Sequence[int]], tuple[int, int]]:
    """(arrays, classes) counted at an array found in this symmetry mode: each class once."""
    return centre_class_share if symmetry == "centre" else class_share
