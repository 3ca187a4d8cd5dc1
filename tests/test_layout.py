"""The house's layout holds: imports follow the flow (pool -> task -> result -> ledger) and no module's
imports come back to it. Read from the sources (every import, a function's own included; those under
``if TYPE_CHECKING:`` only name types and are left out), not by importing them."""

from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]

COUNTING = "permenum.jobs.counting"
LEDGER = "permenum.jobs.ledger"
#: what of the counting flow the ledger may import: the owners of the files it reads (solutions, claims), the
#: partition's reader (stream) and the task's environment rules; never the task or its scheduling
READABLE = {f"{COUNTING}.{m}" for m in ("solutions", "claims", "stream", "environment")}


def _package_dirs() -> dict[str, Path]:
    """Each package pyproject.toml installs and its folder in this checkout (package-dir maps folders outside
    permenum/): read from the files, not imported, so an installed copy elsewhere cannot stand in for them."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped: dict[str, str] = setup["package-dir"]
    dirs = {}
    for name in setup["packages"]:
        base = max((k for k in mapped if name == k or name.startswith(k + ".")), key=len)
        dirs[name] = ROOT / mapped[base] / Path(*name[len(base):].split(".")[1:])
    return dirs


def _sources() -> dict[str, Path]:
    """Every module of the installed packages, by name."""
    found: dict[str, Path] = {}
    for name, folder in _package_dirs().items():
        found[name] = folder / "__init__.py"
        found.update({f"{name}.{f.stem}": f for f in folder.glob("*.py") if f.name != "__init__.py"})
    return found


def test_every_package_of_the_checkout_is_installed() -> None:
    """A folder with an __init__.py that pyproject.toml does not list imports in an editable install and is
    missing from a built one."""
    dirs = _package_dirs()
    assert all((d / "__init__.py").is_file() for d in dirs.values()), dirs
    present = {init.parent for folder in dirs.values() for init in folder.rglob("__init__.py")}
    assert present <= set(dirs.values()), sorted(str(p) for p in present - set(dirs.values()))


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(name: str, path: Path, modules: set[str]) -> set[str]:
    """The permenum modules ``name`` imports: ``from a.b import c`` is a.b.c where that is a module, else a.b."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                visit(ast.Module(body=child.orelse, type_ignores=[]))  # the else runs; the if names types only
                continue
            if isinstance(child, ast.Import):
                out.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - child.level + 1] + ([base] if base else []))
                for alias in child.names:
                    out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return {m for m in out if m in modules and m != name}


@functools.cache
def _graph() -> dict[str, set[str]]:
    sources = _sources()
    return {name: _imports(name, path, set(sources)) for name, path in sources.items()}


def test_the_counting_flow_never_imports_the_ledger_nor_the_commands_above_it() -> None:
    graph = _graph()
    counting = [m for m in graph if m.startswith(COUNTING)]
    assert len(counting) >= 14, counting  # the package is there, with its modules
    above = (LEDGER, "permenum.jobs.local", "permenum.jobs.search", "permenum.jobs.estimate", "permenum.cli")
    wrong = {m: sorted(d for d in graph[m] if d.startswith(above)) for m in counting}
    assert not {m: d for m, d in wrong.items() if d}


def test_the_ledger_reads_what_was_counted_without_importing_the_counting() -> None:
    graph = _graph()
    ledger = [m for m in graph if m.startswith(LEDGER)]
    assert len(ledger) >= 5, ledger
    wrong = {m: sorted(d for d in graph[m] if d.startswith(COUNTING) and d not in READABLE) for m in ledger}
    assert not {m: d for m, d in wrong.items() if d}


def test_no_module_imports_come_back_to_it() -> None:
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep):] + [dep])
            elif dep not in state:
                walk(dep, path + [dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_command_layer_imports_only_downward() -> None:
    """permenum/cli: common, options and runner below the commands, app above them; no command imports
    another (a command's module is layer 3)."""
    layers = {"common": 0, "options": 1, "runner": 2, "app": 4}
    cli = {m.removeprefix("permenum.cli."): deps for m, deps in _graph().items()
           if m.startswith("permenum.cli.") and m != "permenum.cli.__main__"}
    assert {"common", "options", "runner", "app", "pool", "run", "collect", "verify"} <= set(cli)
    for name, deps in cli.items():
        for imported in (d.removeprefix("permenum.cli.") for d in deps if d.startswith("permenum.cli.")):
            assert layers.get(imported, 3) < layers.get(name, 3), f"permenum.cli.{name} imports permenum.cli.{imported}"
    assert not list((ROOT / "permenum").glob("cli_*.py"))  # the single-file commands before permenum/cli/
