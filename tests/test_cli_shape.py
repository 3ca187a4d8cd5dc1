"""The command's shape: help on every option, choices that match the registries, renamed spellings that still
work and say so, one wording for "not a run directory", and a command layer that imports only downward."""

from __future__ import annotations

import ast
from pathlib import Path

import click
from click.testing import CliRunner
import pytest

from permenum.cli import options
from permenum.cli.app import COMMANDS, cli

CLI_DIR = Path(__file__).resolve().parents[1] / "permenum" / "cli"


def _commands() -> list[click.Command]:
    found: list[click.Command] = []
    for command in COMMANDS:
        found += list(command.commands.values()) if isinstance(command, click.Group) else [command]
    return found


def test_every_option_has_help_and_every_command_a_whole_summary() -> None:
    bare = [f"{c.name} {p.opts[0]}" for c in _commands() for p in c.params
            if isinstance(p, click.Option) and not p.hidden and not p.help]
    assert bare == []

    def groups(group: click.Group, path: list[str]) -> list[tuple[list[str], click.Group]]:
        """Every group's path from the top: a nested group (`cluster`) lists its commands' summaries too."""
        nested = [(path + [n], c) for n, c in group.commands.items() if isinstance(c, click.Group)]
        return [(path, group)] + [g for p, c in nested for g in groups(c, p)]

    found = groups(cli, [])
    assert len(found) > 1, "no nested group found to check"
    for path, group in found:
        listing = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80).output
        commands = listing[listing.index("Commands:"):]
        assert "..." not in commands and all(name in commands for name in group.commands), (path, commands)


def test_listed_choices_are_the_registries() -> None:
    from permenum.problems import PROBLEMS
    from permenum.solver.registry import KERNELS

    assert set(options.PROBLEMS) == set(PROBLEMS)
    assert {k: set(v) for k, v in options.SYMMETRIES.items()} == {k: set(p.symmetry_modes) for k, p in PROBLEMS.items()}
    assert {k: set(v) for k, v in options.KERNELS.items()} == {k: set(v) for k, v in KERNELS.items()}
    for name, problem in PROBLEMS.items():  # the help names each problem's default symmetry
        assert f"{name} {problem.default_symmetry} (default)" in options.SYMMETRY_HELP


def test_old_spellings_still_work_and_say_so(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    proc = cli("pool", "nqueens", "--n", 8, "--out", run, "--partitions", 2, check=True)
    assert "2 partitions" in proc.stdout
    assert "--n N is now the argument N" in proc.stderr and "--partitions is now --shards" in proc.stderr
    proc = cli("task", run, "--partition", 1, check=True)
    assert "--partition is now --shard" in proc.stderr and "partition 1:" in proc.stdout
    both = cli("pool", "nqueens", 8, "--n", 8, "--out", run)
    assert both.returncode == 2 and "given twice" in both.stderr
    proc = cli("run", run, check=True)
    assert f"next: `permenum collect {run}`" in proc.stdout


@pytest.mark.parametrize("command", [["status"], ["collect"], ["report"], ["submit", "--dry-run"], ["resubmit"],
                                     ["verify", "--check"], ["run"], ["task", "--shard", "0"], ["arrays"]])
def test_one_wording_for_not_a_run_directory(tmp_path: Path, cli, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    proc = cli(command[0], tmp_path / "nothing here", *command[1:])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'nothing here'} is not a run directory: it has no "
                                                "manifest.json (`permenum pool` writes one)"]


def _imports(path: Path) -> set[str]:
    """The permenum.cli modules a module imports (at any depth of its code)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("permenum.cli."):
            found.add(node.module.removeprefix("permenum.cli."))
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("permenum.cli.") for a in node.names if a.name.startswith("permenum.cli.")}
    return found


def test_the_command_layer_imports_only_downward() -> None:
    layers = {"common": 0, "options": 1, "runner": 2, "app": 4}  # every command module is layer 3
    modules = {p.stem: p for p in CLI_DIR.glob("*.py") if p.stem not in ("__init__", "__main__")}
    assert {"common", "options", "runner", "app", "pool", "run", "collect", "verify"} <= set(modules)
    for name, path in modules.items():
        level = layers.get(name, 3)
        for imported in _imports(path):
            assert layers.get(imported, 3) < level, f"permenum.cli.{name} imports permenum.cli.{imported}"
    assert not any(p.exists() for p in CLI_DIR.parent.glob("cli_*.py"))
