"""Small things a user reads: counted nouns ("1 partition"), a negative size, an unfinished verification."""

from __future__ import annotations

from pathlib import Path

from permenum.words import plural


def test_plural_counts_one_as_one() -> None:
    assert [plural(k, "partition") for k in (0, 1, 2)] == ["0 partitions", "1 partition", "2 partitions"]
    assert plural(1, "partition", False) == "partition" and plural(3, "state", False) == "states"


def test_a_run_of_one_partition_reads_in_the_singular(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    pooled = cli("pool", "nqueens", 6, run, "--num-partitions", 1, check=True).stdout
    assert "1 partition in" in pooled and "1 partitions" not in pooled
    status = cli("status", run, check=True).stdout
    assert f"{run}: 1 partition," in status
    refused = cli("arrays", run)
    assert refused.returncode == 2 and f"{run} is a run of nqueens" in refused.stderr


def test_a_negative_size_is_named_as_a_size_not_an_option(cli) -> None:  # type: ignore[no-untyped-def]
    for command in (("enumerate", "nqueens", "-3"), ("pool", "costas", "-1", "x")):
        proc = cli(*command)
        assert proc.returncode == 2 and proc.stderr.startswith(f"error: {command[2]} is not a size: N is a whole number"), proc.stderr
        assert "No such option" not in proc.stderr


def test_a_check_before_any_recount_says_none_is_done_yet(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 8, run, "--num-partitions", 3, check=True)
    cli("run", run, check=True)
    assert "3/3 partitions agree" in cli("verify", run, "--sample", 1, check=True).stdout
    for result in (run / "verify").glob("*/results/*.json"):
        result.unlink()  # as a submitted verification before its tasks ran
    proc = cli("verify", run, "--check")
    assert proc.returncode == 1 and "0 of 3 partitions re-counted yet" in proc.stdout and "agree" not in proc.stdout


def test_an_order_no_family_built_here_gives_says_so() -> None:
    from permenum.jobs.ledger.evidence import CostasEvidence

    line = CostasEvidence(10, 60, 60, None, 0, 0, [], [], []).describe()
    assert line.endswith("none of the families built here (exponential Welch, Lempel-Golomb) gives this order")


def test_a_costas_report_titles_its_classes_and_evidence_and_plots_the_format_named(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "costas", 8, run, "--num-partitions", 2, check=True)
    cli("run", run, check=True)
    refused = cli("report", run, "--plot", tmp_path / "x.txt")
    assert refused.returncode == 2 and "--plot" in refused.stderr and ".svg" in refused.stderr
    assert not (tmp_path / "x.txt").exists() and len(refused.stderr.strip().splitlines()) == 1
    proc = cli("report", run, "--plot", tmp_path / "r.svg", check=True, env={"COLUMNS": "300"})
    title = proc.stdout.splitlines()[0]
    assert title.startswith("costas n=8: run ") and title.rstrip().endswith("total 444, 60 classes"), title
    assert "evidence" in proc.stdout and "sound: 60 classes, each array checked" in " ".join(proc.stdout.split())
    assert (tmp_path / "r.svg").read_text().lstrip().startswith("<?xml")
