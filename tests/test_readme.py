"""The README cannot go stale: every `permenum ...` line it quotes parses (options, choices, arguments),
its ledger table lists the ledger's columns, and its pandas, DuckDB and polars one-liners sum a real
ledger to the run's total."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from permenum.cli.app import cli
from permenum.jobs.collect import LEDGER_COLUMNS, collect
from permenum.layout import RunLayout
from tests.conftest import published

README = Path(__file__).resolve().parents[1] / "README.md"


def _code_lines() -> list[str]:
    """The lines of the README's code blocks, comments after `  #` dropped."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", README.read_text(), re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


#: Where a shell line runs permenum: at its start, inside `$(...)` or after `;`, `&` or `|`, past variable
#: assignments (`CUDA_VISIBLE_DEVICES=0`) and wrappers (`timeout -s USR1 3500`, `nohup`, `env`), never as part of
#: a path or a name (`.venv/bin/permenum`, `permenum/cli/`, `permenum.total`).
_INVOCATION = re.compile(r"(?:^|\$\(|[;&|]\s*)(?:\w+=\S*\s+)*"
                         r"(?:(?:nohup|env|time|exec|timeout(?:\s+-\S+(?:\s+\w+)?)*\s+\d\S*)\s+)*"
                         r"(permenum\s[^)`;&|]+)")


def _invocations(text: str) -> list[str]:
    """The permenum command lines one shell line (or backquoted span) runs."""
    return [m.group(1).strip() for m in _INVOCATION.finditer(" ".join(text.split()))]


def _command_lines() -> list[str]:
    """Every permenum command line the README quotes: in code blocks and in backquotes in the text."""
    lines = [command for line in _code_lines() for command in _invocations(line)]
    prose = re.sub(r"```.*?```", "", README.read_text(), flags=re.S)
    spans = [span for span in re.findall(r"`([^`]+)`", prose) if "\\|" not in span]  # `a\|b`: a table cell's choices
    inline = [command for span in spans for command in _invocations(span)]
    # a command named alone (`permenum task`) or with a placeholder in capitals (`permenum run RUN`,
    # `permenum COMMAND --help`) is a mention, not a line
    lines += [m for m in inline if len(m.split()) > 2 and not re.search(r"\b[A-Z][A-Z_]+\b", m)]
    return sorted(set(lines))


@pytest.mark.parametrize(("text", "found"), [
    ('eval "$(permenum cluster up)"', ["permenum cluster up"]),
    ("timeout -s USR1 3500 permenum run q23 --device gpu", ["permenum run q23 --device gpu"]),
    ("CUDA_VISIBLE_DEVICES=0 timeout 600 permenum run q12", ["permenum run q12"]),
    ("permenum pool nqueens 8 q8 && permenum run q8", ["permenum pool nqueens 8 q8", "permenum run q8"]),
    (".venv/bin/permenum", []), ("permenum/cli/<command>.py", []), ("permenum.total", []),
    ("echo permenum run q12", []), ("grep permenum", []),
])
def test_invocations_are_found_behind_prefixes_and_only_there(text: str, found: list[str]) -> None:
    assert _invocations(text) == found


def test_the_readme_quotes_commands() -> None:
    assert len(_command_lines()) >= 20


@pytest.mark.parametrize("line", _command_lines())
def test_every_quoted_command_line_parses(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = shlex.split(line)[1:]
    command: click.Command = cli
    ctx = None
    while isinstance(command, click.Group) and args and args[0] in command.commands:
        ctx = click.Context(command, info_name=args[0], parent=ctx)
        command, args = command.commands[args[0]], args[1:]
    assert command is not cli, line
    with command.make_context(command.name, list(args), parent=ctx):  # parses and checks every value
        pass
    assert "note:" not in capsys.readouterr().err, f"{line}: an old spelling"


def test_the_ledger_table_lists_every_column_with_its_unit() -> None:
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in README.read_text().splitlines()
            if line.startswith("| `")]
    units = {row[0].strip("`"): row[2] for row in rows if len(row) == 4}  # column | type | unit | meaning
    assert {c.name: c.unit for c in LEDGER_COLUMNS} == {c.name: units.get(c.name) for c in LEDGER_COLUMNS}


def test_the_one_liners_sum_a_real_ledger(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    cli("pool", "nqueens", 10, "--num-partitions", 3, run, check=True)
    cli("run", run, check=True)
    total = collect(RunLayout(run)).total
    assert total == published("nqueens_total", 10)
    one_liners = [line for line in _code_lines() if line.startswith("python -c")]
    assert len(one_liners) == 4
    outputs = []
    for line in one_liners:
        argv = shlex.split(line.replace("RUN/", f"{run}/"))
        proc = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (line, proc.stderr)
        outputs.append(proc.stdout.strip())
    assert outputs == [str(total)] * 3 + ["b'true'"]
    import pyarrow.parquet as pq

    keys = {k.decode() for k in pq.read_schema(run / "ledger.parquet").metadata} - {"pandas", "ARROW:schema"}
    assert keys and all(f"`{key}`" in README.read_text() for key in keys), keys
