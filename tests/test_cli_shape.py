"""The command's shape: help on every option, choices that match the registries, renamed spellings that still
work and say so, one wording for "not a run directory", and a command layer that imports only downward."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner
import pytest

from permenum.cli import options
from permenum.cli.app import all_commands, cli



def _commands() -> list[click.Command]:
    found: list[click.Command] = []
    for command in all_commands():
        found += list(command.commands.values()) if isinstance(command, click.Group) else [command]
    return found


def test_every_option_has_help_and_every_command_a_whole_summary() -> None:
    bare = [f"{c.name} {p.opts[0]}" for c in _commands() for p in c.params
            if isinstance(p, click.Option) and not p.hidden and not p.help]
    assert bare == []

    def groups(group: click.Group, path: list[str]) -> list[tuple[list[str], click.Group]]:
        """Every group's path from the top: a nested group (`cluster`) lists its commands' summaries too."""
        named = {n: group.get_command(click.Context(group), n) for n in group.list_commands(click.Context(group))}
        nested = [(path + [n], c) for n, c in named.items() if isinstance(c, click.Group)]
        return [(path, group)] + [g for p, c in nested for g in groups(c, p)]

    found = groups(cli, [])
    assert len(found) > 1, "no nested group found to check"
    for path, group in found:
        listing = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80).output
        commands = listing[listing.index("Commands:"):]
        assert "..." not in commands and all(name in commands for name in group.list_commands(click.Context(group))), \
            (path, commands)


def test_listed_choices_are_the_registries() -> None:
    from permenum.problems import PROBLEMS
    from permenum.solver.registry import KERNELS

    assert set(options.PROBLEMS) == set(PROBLEMS)
    assert {k: set(v) for k, v in options.SYMMETRIES.items()} == {k: set(p.symmetry_modes) for k, p in PROBLEMS.items()}
    assert {k: set(v) for k, v in options.KERNELS.items()} == {k: set(v) for k, v in KERNELS.items()}
    for name, problem in PROBLEMS.items():  # the help names each problem's default symmetry
        assert f"{name} {problem.default_symmetry} (default)" in options.SYMMETRY_HELP


def test_every_option_follows_the_one_table_of_names() -> None:
    """Each option name and short flag means one thing in every command (options.NAMES); the run directory is
    the argument RUN wherever a command takes one; old spellings are only accepted, never declared."""
    seen: dict[str, str] = {}
    for command in _commands():
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        for p in command.params:
            if isinstance(p, click.Argument):
                continue
            assert not p.hidden, f"{command.name} {p.opts}: an old spelling goes in Renaming's table, not an option"
            longs = [o for o in p.opts + p.secondary_opts if o.startswith("--")]
            shorts = [o for o in p.opts + p.secondary_opts if not o.startswith("--")]
            assert longs and all(o in options.NAMES for o in longs), f"{command.name} {p.opts}: not in options.NAMES"
            expected = {options.NAMES[o][0] for o in longs} - {None}
            assert set(shorts) == expected, f"{command.name} {longs[0]}: short flag {shorts}, the table says {expected}"
            for short in shorts:
                assert seen.setdefault(short, longs[0]) == longs[0], f"{short} means {seen[short]} and {longs[0]}"
        names = [a.human_readable_name.strip("[]") for a in arguments]
        assert not {"DIR", "OUT", "RUN_DIR"} & set(names), (command.name, names)
        for old, new in getattr(command, "renamed", {}).items():
            declared = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
            assert old not in declared, f"{command.name}: {old} is both an option and an old spelling"
            assert new in declared or new in names, f"{command.name}: {old} -> {new}, which it does not have"
    shorts = [s for s, _ in (v for v in options.NAMES.values()) if s] + ["-h"]
    assert len({s.lower() for s in shorts}) == len(shorts), "two short flags differ by case only"
    sbatch = {"-p": "--partition", "-t": "--time", "-A": "--account"}  # SLURM's own shorts keep SLURM's meaning
    assert all(options.NAMES[long][0] == short for short, long in sbatch.items())


def test_the_run_directory_is_the_argument_run_and_n_is_shown_required() -> None:
    usage = {c.name: c.collect_usage_pieces(click.Context(c)) for c in all_commands() if not isinstance(c, click.Group)}
    assert usage["pool"][-2:] == ["N", "RUN"]
    assert usage["enumerate"][-1] == usage["search"][-1] == "[RUN]"
    for name in ("run", "task", "submit", "resubmit", "status", "collect", "verify", "report", "arrays", "merge"):
        assert "RUN" in usage[name], (name, usage[name])


def test_submit_partitions_is_not_taken_for_the_slurm_queue(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    cli("pool", "nqueens", 8, tmp_path / "run", "--num-partitions", 2, check=True)
    proc = cli("submit", tmp_path / "run", "--partitions", "0-1", "--dry-run")
    assert "did you mean" not in proc.stderr.lower() and "Possible options" not in proc.stderr
    assert "note: --partitions is now --only" in proc.stderr
    assert "--array=0-1" in proc.stdout + proc.stderr or proc.returncode == 0, proc.stderr


def test_old_spellings_still_work_and_say_so(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    proc = cli("pool", "nqueens", "--n", 8, "--out", run, "--partitions", 2, check=True)
    assert "2 partitions" in proc.stdout
    assert "--n N is now the argument N" in proc.stderr and "--partitions is now --num-partitions" in proc.stderr
    assert "--out RUN is now the argument RUN" in proc.stderr
    for old in ("-P", "--shards"):
        proc = cli("pool", "nqueens", 8, tmp_path / old, old, 3, check=True)
        assert "3 partitions" in proc.stdout and f"note: {old} is now --num-partitions" in proc.stderr
    proc = cli("task", run, "--partition", 1, check=True)
    assert "--partition is now --index" in proc.stderr and "partition 1:" in proc.stdout
    proc = cli("task", run, "--shard", 0, check=True)
    assert "--shard is now --index" in proc.stderr and "partition 0:" in proc.stdout
    both = cli("pool", "nqueens", 8, "--n", 8, "--out", run)
    assert both.returncode == 2 and "given twice" in both.stderr
    proc = cli("status", run, "--shards", "0-1", check=True)
    assert "note: --shards is now --only" in proc.stderr and "partitions 0-1 (2 of the pool's 2)" in proc.stdout
    proc = cli("run", run, check=True)
    assert f"next: `permenum collect {run}`" in proc.stdout


def test_old_spellings_of_the_sbatch_and_search_options_are_renamed() -> None:
    """-T (--throttle), search-task -t/--task, estimate -G, enumerate/search --run-dir: parsed as their new
    names (no run: these commands need SLURM, a device or a search run)."""
    from permenum.cli.app import cli as group

    cases = [(["resubmit", "R", "-T", "2"], "throttle", 2), (["search-task", "R", "-t", "3"], "index", 3),
             (["search-task", "R", "--task", "3"], "index", 3), (["estimate", "nqueens", "8", "-G", "4"], "gpus", 4),
             (["enumerate", "nqueens", "8", "--run-dir", "R"], "run_dir", "R"),
             (["search", "costas", "8", "--run-dir", "R"], "run_dir", "R"),
             (["verify", "R", "--shards", "1,2"], "listed", "1,2"), (["verify", "R", "--partitions", "1"], "listed", "1")]
    for args, name, value in cases:
        command = group.get_command(click.Context(group), args[0])
        with command.make_context(args[0], args[1:]) as ctx:
            assert ctx.params[name] == value, (args, ctx.params)


@pytest.mark.parametrize("command", [["status"], ["collect"], ["report"], ["submit", "--dry-run"], ["resubmit"],
                                     ["verify", "--check"], ["run"], ["task", "--index", "0"], ["arrays"]])
def test_one_wording_for_not_a_run_directory(tmp_path: Path, cli, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    proc = cli(command[0], tmp_path / "nothing here", *command[1:])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'nothing here'} is not a run directory: it has no "
                                                "manifest.json (`permenum pool` writes one)"]


def test_a_command_imports_only_its_own_module(tmp_path: Path) -> None:
    """permenum.cli.app names the commands and imports one when it runs (each command's start was about 100 ms
    longer with all 17 imported); a scan of a run's results in partition order leaves pyarrow.compute (35-60
    ms) unimported."""
    import subprocess
    import sys

    from permenum.jobs.local import run_local
    from permenum.layout import RunLayout
    from permenum.poolgen.write import PoolSettings, write_pool
    from permenum.task_options import TaskOptions

    run = tmp_path / "run"
    write_pool(RunLayout(run), PoolSettings("nqueens", 6, 2))
    assert not run_local(RunLayout(run), 1, TaskOptions(device="cpu"), show_progress=False).failed
    code = ("import sys\n"
            "from permenum.without_pandas import WithoutPandas\n"
            "sys.meta_path.insert(0, WithoutPandas())  # as the command's process (permenum.launch)\n"
            "import permenum.cli.app\n"
            "from permenum.layout import RunLayout\n"
            "from permenum.records import load_manifest\n"
            "from permenum.result_index import scan_results\n"
            "layout = RunLayout(sys.argv[1])\n"
            "assert sorted(scan_results(layout, load_manifest(layout)).done) == [0, 1]\n"
            "loaded = [m for m in ('permenum.cli.task', 'permenum.cli.submit', 'permenum.cli.cluster', "
            "'pyarrow.compute') if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    proc = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
