"""No import circle in localeval: each module's imports of localeval modules form a graph
without cycles, at import time (top-level imports) and at all (imports inside functions too,
which are lazy but still tie two modules to each other: the caller that holds both links them)."""

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


def _graph(top_level_only: bool = True) -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")), top_level_only):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("localeval"):
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in modules)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in modules)
        graph[name] = found - {name}
    return graph


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
