"""No import circle in localeval: each module's top-level imports of localeval modules form a
graph without cycles (imports inside functions are deliberate, lazy, and left out)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "localeval"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # top level only; `if TYPE_CHECKING:` blocks are not run
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("localeval"):
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in modules)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in modules)
        graph[name] = found - {name}
    return graph


def test_no_module_of_localeval_imports_itself_back_at_import_time():
    graph = _graph()
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
    assert not cycles, [" -> ".join(cycle) for cycle in cycles]
