"""No import circle in localeval: each module's imports of localeval modules form a graph
without cycles, at import time (top-level imports) and at all (imports inside functions too,
which are lazy but still tie two modules to each other: the caller that holds both links them).
The subpackages form one too (docs/development.md draws it), and no module reaches into another
package's underscore names: what a package offers the others is its public names."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PACKAGE = Path(__file__).resolve().parents[1] / "localeval"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.Module, top_level_only: bool) -> list[ast.stmt]:
    """The import statements of a module: its top level, or everywhere but `if TYPE_CHECKING:`
    blocks (which are not run)."""
    if top_level_only:
        return tree.body
    found: list[ast.stmt] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _package(module: str) -> str:
    """The package a module belongs to: a subpackage of localeval (`localeval.run`) for the modules
    in it, and a module at the package root (`localeval.cli`, `localeval.errors`) on its own."""
    if MODULES[module].name == "__init__.py":
        return module
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else module


def _graph(top_level_only: bool = True) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        found: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")), top_level_only):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("localeval"):
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in MODULES)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in MODULES)
        graph[name] = found - {name}
    return graph


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, targets in _graph(top_level_only=False).items():
        graph.setdefault(_package(name), set()).update(_package(t) for t in targets if t in MODULES)
    return {name: targets - {name} for name, targets in graph.items()}


def _private_reaches(name: str, source: str) -> list[str]:
    """Where the module `name`, whose text is `source`, uses an underscore name of another package: imports it
    (`from localeval.x.y import _name`, or a private module) or reads it off a module it imported
    (`y._name`). Dunder names are not private."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # local name -> the localeval module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("localeval"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                target = full if full in MODULES else node.module
                if full in MODULES:
                    imported[alias.asname or alias.name] = full
                if target in MODULES and _private(alias.name) and _package(target) != _package(name):
                    found.append(f"{name}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.asname:
                    imported[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported and _private(node.attr):
            target = imported[node.value.id]
            if _package(target) != _package(name):
                found.append(f"{name}: {node.value.id}.{node.attr} ({target})")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in sorted(graph.get(name, ())):
            if state.get(target) == "open":
                cycles.append([*path[path.index(target):], target])
            elif target in graph and target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return [" -> ".join(cycle) for cycle in cycles]


def test_no_module_of_localeval_imports_itself_back_at_import_time():
    assert not _cycles(_graph()), _cycles(_graph())


def test_no_module_of_localeval_imports_itself_back_even_inside_a_function():
    assert not _cycles(_graph(top_level_only=False)), _cycles(_graph(top_level_only=False))


def test_the_packages_of_localeval_import_each_other_without_a_cycle():
    assert not _cycles(_package_graph()), _cycles(_package_graph())


def test_no_module_of_localeval_uses_another_packages_underscore_names():
    found = [reach for name, path in sorted(MODULES.items()) for reach in _private_reaches(name, path.read_text(encoding="utf-8"))]
    assert not found, found


def test_the_private_name_check_sees_an_import_and_an_attribute_but_not_its_own_package():
    source = "from localeval.data.jsonl import _parse_line\nfrom localeval.data import jsonl\njsonl._looks_utf16\nfrom localeval.stats.ppi import _x\n"
    assert _private_reaches("localeval.stats.summary", source) == [
        "localeval.stats.summary: from localeval.data.jsonl import _parse_line",
        "localeval.stats.summary: jsonl._looks_utf16 (localeval.data.jsonl)",
    ]


def test_a_run_of_the_id_metric_never_imports_numpy(tmp_path):
    import subprocess
    import sys

    data = tmp_path / "d.jsonl"
    data.write_text('{"retrieved_context_ids": [1], "reference_context_ids": [1]}\n')
    code = (
        "import sys\nfrom localeval.cli import cli\ntry:\n"
        f"    cli.main(['score', {str(data)!r}, '-m', 'id_context_recall', '-q'], standalone_mode=False)\n"
        "finally:\n    print('numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_the_public_names_resolve_and_load_nothing_until_used():
    import subprocess
    import sys

    import localeval

    assert localeval.__all__ == sorted(set(localeval.__all__))
    for name in localeval.__all__:
        assert getattr(localeval, name).__module__.startswith("localeval.")
    assert {"evaluate", "score_file"} <= set(localeval.__all__) and "score" not in localeval.__all__  # one entry point for samples, one for files
    code = "import sys, localeval\nprint(sorted(m for m in sys.modules if m.startswith('localeval')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['localeval']"
