"""Counted nouns in messages: "1 partition", "3 partitions", never "1 partitions"."""

from __future__ import annotations


def plural(count: int, noun: str, with_count: bool = True) -> str:
    """``noun`` for ``count`` of it (an English plural by ``s``), led by the count unless ``with_count`` is
    False: ``plural(1, "state")`` is "1 state", ``plural(2, "partition", False)`` is "partitions"."""
    word = noun if count == 1 else noun + "s"
    return f"{count} {word}" if with_count else word
