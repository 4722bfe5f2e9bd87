"""beliefs/ is layered: each sub-package imports only itself and the layers below it, no two
of its modules import each other in a circle, and its modules and functions stay small.

Imports are read with `ast` wherever they are written: at the top, under `if TYPE_CHECKING:`
and inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "beliefs"
# Lowest first: a layer may import itself and those before it.
LAYERS = ("model", "text", "index", "search", "context", "store", "documents")
# Modules directly in beliefs/ (evaluation, opening, the package's exports) sit above every layer.
TOP = len(LAYERS)
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# No exceptions: a module or function over its limit is split, not listed here.
LONG_MODULES: set[str] = set()
LONG_FUNCTIONS: set[tuple[str, str]] = set()


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def imported(tree: ast.AST, known: set[str]) -> set[str]:
    """The beliefs modules `tree` imports, anywhere in it (`from beliefs.store import
    migrations` names the module beliefs.store.migrations)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "beliefs")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "beliefs":
                continue
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.add(full if full in known else node.module)
    return out


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    found = modules(root)
    known = set(found)
    return {
        name: imported(ast.parse(path.read_text(encoding="utf-8")), known) - {name}
        for name, path in found.items()
    }


def rank(name: str) -> int:
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return TOP  # beliefs itself, or a module directly in it


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    wrong = []
    for name, targets in edges.items():
        for target in targets:
            if rank(target) > rank(name):
                wrong.append(f"{name} imports {target}")
    return sorted(wrong)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, found by depth-first search (each reported from where it closed)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(edges.get(name, ())):
            if target not in edges:
                continue
            if state.get(target) == 1:
                found.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)
    return found


def test_every_layer_has_a_rank() -> None:
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(LAYERS)


def test_each_layer_imports_only_itself_and_layers_below() -> None:
    assert upward_imports(graph()) == []


def test_no_import_cycle_between_modules() -> None:
    assert cycles(graph()) == []


def test_no_module_over_the_line_limit() -> None:
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert set(long) <= LONG_MODULES, long


def test_no_function_over_the_line_limit() -> None:
    long = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[(name, node.name)] = lines
    assert set(long) <= LONG_FUNCTIONS, long


# The checks themselves, on small packages written for them: each must catch what it is for.


def write_package(root: Path, files: dict[str, str]) -> Path:
    base = root / "beliefs"
    for layer in LAYERS:
        (base / layer).mkdir(parents=True, exist_ok=True)
        (base / layer / "__init__.py").write_text("")
    (base / "__init__.py").write_text("")
    for relative, text in files.items():
        (base / relative).write_text(text)
    return base


@pytest.mark.parametrize(
    "text",
    [
        "from beliefs.store.database import BeliefDatabase\n",
        "if TYPE_CHECKING:\n    from beliefs.store import database\n",
        "def late():\n    import beliefs.context.render\n",
        "from beliefs.opening import open_store\n",
    ],
    ids=["top-level", "type-checking", "in-a-function", "the-top"],
)
def test_an_upward_import_is_caught(tmp_path: Path, text: str) -> None:
    base = write_package(
        tmp_path,
        {
            "index/belief_index.py": text,
            "store/database.py": "",
            "context/render.py": "",
            "opening.py": "",
        },
    )
    assert upward_imports(graph(base)) != []


def test_a_downward_import_is_allowed(tmp_path: Path) -> None:
    base = write_package(
        tmp_path,
        {
            "store/database.py": "from beliefs.index import belief_index\n",
            "index/belief_index.py": "from beliefs.model.models import Belief\n",
            "model/models.py": "",
            "opening.py": "from beliefs.store.database import BeliefDatabase\n",
        },
    )
    edges = graph(base)
    assert edges["beliefs.store.database"] == {"beliefs.index.belief_index"}
    assert upward_imports(edges) == []


def test_an_import_cycle_is_caught(tmp_path: Path) -> None:
    base = write_package(
        tmp_path,
        {
            "store/feed.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from beliefs.store.database import BeliefDatabase\n"
            ),
            "store/database.py": "from beliefs.store.feed import ChangeFeed\n",
        },
    )
    assert cycles(graph(base)) == [
        ["beliefs.store.database", "beliefs.store.feed", "beliefs.store.database"]
    ]
