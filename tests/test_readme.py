"""The README cannot go stale: every `permenum ...` line it quotes parses (options, choices, arguments), its
ledger table lists the ledger's columns, and every code block runs as written with what the plain install
brings (its local flows and its one-liners), or, where it needs system packages, a cluster or GPUs, is
checked by bash's parser (HOW says which, per section)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import pyarrow.parquet as pq

from permenum.cli.app import cli
from permenum.ledger_rows import LEDGER_COLUMNS

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
    while isinstance(command, click.Group) and args and args[0] in command.list_commands(click.Context(command)):
        ctx = click.Context(command, info_name=args[0], parent=ctx)
        command, args = command.get_command(ctx, args[0]), args[1:]
    assert command is not cli, line
    with command.make_context(command.name, list(args), parent=ctx):  # parses and checks every value
        pass
    assert "note:" not in capsys.readouterr().err, f"{line}: an old spelling"


def test_the_ledger_table_lists_every_column_with_its_unit() -> None:
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in README.read_text().splitlines()
            if line.startswith("| `")]
    units = {row[0].strip("`"): row[2] for row in rows if len(row) == 4}  # column | type | unit | meaning
    assert {c.name: c.unit for c in LEDGER_COLUMNS} == {c.name: units.get(c.name) for c in LEDGER_COLUMNS}


#: How each section's code blocks are tested: "run" as written, one after another in one folder, with only what
#: `scripts/install.sh` brings (the test venv's extras are hidden: see _plain_python); "syntax" by `bash -n`.
HOW = {
    "Install and test (Debian 12, Python 3.11)": "syntax",  # apt installs; scripts/test.sh runs this very suite
    "Quick start on one machine": "run",
    "Quick start on a SLURM cluster": "syntax",  # the same flow runs on a real cluster in tests/test_slurm_flow.py
    "A record campaign": "syntax",  # GPUs and a cluster
    "Several sites": "syntax",  # two sites (scp, rsync)
    "The ledger": "run",  # over the quick start's q12, as RUN
}


def _blocks() -> list[tuple[str, str]]:
    """Every code block of the README with the heading of its section."""
    found, heading = [], ""
    for part in re.split(r"(```[a-z]*\n.*?```)", README.read_text(), flags=re.S):
        if part.startswith("```"):
            found.append((heading, part.split("\n", 1)[1].removesuffix("```")))
        else:
            heading = next((h for h in reversed(re.findall(r"^#+ (.+)$", part, re.M))), heading)
    return found


def test_every_block_is_tested_one_way_or_the_other() -> None:
    assert {heading for heading, _ in _blocks()} == set(HOW)


@pytest.mark.parametrize("block", [text for heading, text in _blocks() if HOW.get(heading) == "syntax"])
def test_blocks_that_need_a_cluster_or_root_parse_in_bash(block: str) -> None:
    proc = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True)
    assert proc.returncode == 0, (block, proc.stderr)


def _plain_python(tmp_path: Path) -> Path:
    """A `python` that imports only what the plain install brings: the test extras (pandas, DuckDB, polars,
    pytest) raise ImportError, so a README example that needs them fails here as after `install.sh`."""
    from importlib.metadata import requires

    base = {re.split(r"[<>=\[; ]", r)[0].lower() for r in requires("permenum") or [] if "extra ==" not in r}
    test_only = {re.split(r"[<>=\[; ]", r)[0].lower() for r in requires("permenum") or [] if 'extra == "test"' in r}
    hidden = sorted((test_only - base) | {"pandas", "duckdb", "polars"})
    site = tmp_path / "plain-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {hidden!r}:\n"
        "            raise ImportError(f'{name} is not part of the plain install')\n"
        "sys.meta_path.insert(0, _Hide())\n")
    return site


@pytest.mark.slow
def test_the_local_blocks_run_as_written(tmp_path: Path) -> None:
    """The quick start's blocks, then the ledger's one-liners over its q12 (as RUN), each run by bash exactly as
    the README prints it, with `.venv/bin` on PATH and nothing the test extras bring."""
    import os

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(_plain_python(tmp_path)), "COLUMNS": "200"}
    work = tmp_path / "work"
    work.mkdir()
    outputs = []
    for heading, block in _blocks():
        if HOW[heading] != "run":
            continue
        if heading == "The ledger":
            (work / "RUN").symlink_to("q12")
        proc = subprocess.run(["bash", "-e"], input=block, cwd=work, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, (block, proc.stdout, proc.stderr)
        outputs.append(proc.stdout)
    enumerated, steps, ledger = outputs  # what the README says each prints
    assert "total 365596" in enumerated and "matches the published count 365596" in enumerated
    assert "34714 states at depth 8 (" in steps and "8 partitions in q12" in steps and "total 14200 from 8/8 partitions" in steps
    assert "2/2 partitions agree" in steps and (work / "q12.png").exists()
    assert ledger.split() == ["14200", "b'true'"]
    keys = {k.decode() for k in pq.read_schema(work / "q12" / "ledger.parquet").metadata} - {"pandas", "ARROW:schema"}
    assert keys and all(f"`{key}`" in README.read_text() for key in keys), keys


def test_the_plain_python_hides_the_test_extras(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "PYTHONPATH": str(_plain_python(tmp_path))}
    proc = subprocess.run([sys.executable, "-c", "import pandas"], env=env, capture_output=True, text=True)
    assert proc.returncode != 0 and "not part of the plain install" in proc.stderr
    subprocess.run([sys.executable, "-c", "import pyarrow.compute, numpy, matplotlib"], env=env, check=True)


def test_the_readme_says_where_each_commands_code_is() -> None:
    """It said `permenum/cli/<command>.py`, which merge, same-pool, arrays, resubmit and search-task are not."""
    from permenum.cli.app import all_commands

    text = " ".join(README.read_text().split())
    assert "`permenum/cli/<command>.py`" not in text or all(
        c.callback.__module__ == f"permenum.cli.{c.name}" for c in all_commands())
    assert "the module of `permenum/cli/` that `permenum/cli/app.py` names for it (`COMMANDS`)" in text
