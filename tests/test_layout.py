"""The house's layout holds: imports follow the flow (pool -> task -> result -> ledger) and no module's
imports come back to it. Read from the sources (every import, a function's own included; those under
``if TYPE_CHECKING:`` only name types and are left out), not by importing them."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import tomllib
from pathlib import Path

COUNTING = "permenum.jobs.counting"
LEDGER = "permenum.jobs.ledger"
#: what counts: the ledger reads the counting flow's files (results, solutions, claims), never these
SCHEDULING = {f"{COUNTING}.{m}" for m in ("task", "schedule", "chunking", "partial", "rate_hints", "refine",
                                           "device_loop", "device_process", "children")}


def _sources() -> dict[str, Path]:
    """Every module of the packages pyproject.toml installs (package-dir maps folders outside permenum/), by name."""
    packages = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    found: dict[str, Path] = {}
    for name in packages:
        package = importlib.import_module(name)
        found[name] = Path(package.__file__)
        for info in pkgutil.iter_modules(package.__path__, f"{name}."):
            if not info.ispkg:
                found[info.name] = Path(info.module_finder.path) / f"{info.name.rpartition('.')[2]}.py"  # type: ignore[union-attr]
    return found


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(name: str, path: Path, modules: set[str]) -> set[str]:
    """The permenum modules ``name`` imports: ``from a.b import c`` is a.b.c where that is a module, else a.b."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
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
    wrong = {m: sorted(graph[m] & SCHEDULING) for m in ledger}
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
