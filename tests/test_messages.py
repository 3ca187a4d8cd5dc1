"""Small things a user reads: counted nouns ("1 partition"), a negative size, an unfinished verification."""

from __future__ import annotations

from pathlib import Path

from permenum.words import plural


def test_plural_counts_one_as_one() -> None:
    assert [plural(k, "partition") for k in (0, 1, 2)] == ["0 partitions", "1 partition", "2 partitions"]
    assert plural(1, "partition", False) == "partition" and plural(3, "state", False) == "states"


def test_a_run_of_one_partition_reads_in_the_singular(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    pooled = cli("pool", "nqueens", 6, "-P", 1, "--out", run, check=True).stdout
    assert "1 partition in" in pooled and "1 partitions" not in pooled
    status = cli("status", run, check=True).stdout
    assert f"{run}: 1 partition," in status
    refused = cli("arrays", run)
    assert refused.returncode == 2 and f"{run} is a run of nqueens" in refused.stderr
