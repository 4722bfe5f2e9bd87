"""proxy's sub-packages import one another in layers: no cycle among the API, MCP, UI, CLI,
security, gateway and runtime (imports under TYPE_CHECKING count), and the ASGI scope keys
both the access middleware and the proxy paths use live in a module that imports neither."""

from __future__ import annotations

import ast
from pathlib import Path

PROXY = Path(__file__).resolve().parents[2] / "proxy"
PARTS = ("api", "mcp", "ui", "cli", "security", "gateway", "runtime")

# Modules allowed to import upward, by target part: none. The gateway is handed its
# collaborators and the browser check; a new entry here needs a reason.
PENDING: dict[str, str] = {}
PENDING_SECURITY: set[str] = set()


def _part(module: str) -> str | None:
    """The sub-package (or `runtime`) a `proxy.…` module belongs to."""
    names = module.split(".")
    if len(names) > 1 and names[0] == "proxy" and names[1] in PARTS:
        return names[1]
    return None


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports anywhere in it: at the top, in a function, or under
    TYPE_CHECKING (a name imported from a package counts as its module too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def part_edges() -> dict[str, dict[str, set[str]]]:
    """{importing part: {imported part: the importing files}}."""
    edges: dict[str, dict[str, set[str]]] = {part: {} for part in PARTS}
    for path in sorted(PROXY.rglob("*.py")):
        relative = path.relative_to(PROXY).as_posix()
        source = relative.split("/")[0].removesuffix(".py")
        if source not in PARTS:
            continue
        for module in imported_modules(path):
            target = _part(module)
            if target is not None and target != source:
                edges[source].setdefault(target, set()).add(relative)
    return edges


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph, or None."""
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for target in sorted(edges.get(node, ())):
            found = visit(target, (*path, node))
            if found is not None:
                return found
        done.add(node)
        return None

    for node in sorted(edges):
        found = visit(node, ())
        if found is not None:
            return found
    return None


def _without_pending(edges: dict[str, dict[str, set[str]]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source, targets in edges.items():
        graph[source] = set()
        for target, files in targets.items():
            allowed = {f for f in files if PENDING.get(f) == target}
            if target == "security":
                allowed |= files & PENDING_SECURITY
            if files - allowed:
                graph[source].add(target)
    return graph


def test_the_sub_packages_import_one_another_without_a_cycle() -> None:
    edges = part_edges()
    found = cycle(_without_pending(edges))
    assert found is None, f"import cycle among proxy's sub-packages: {' -> '.join(found or [])}"
    # The check sees the layers it is about: the API, UI and MCP import the gateway's parts.
    assert {"gateway", "security"} <= set(edges["api"]) and "api" in edges["ui"]


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_api_ui_and_mcp_handlers_never_take_the_runtime() -> None:
    for part in ("api", "mcp", "ui"):
        for path in (PROXY / part).rglob("*.py"):
            imports = imported_modules(path)
            assert "proxy.runtime.Runtime" not in imports, f"{path.name} takes the runtime"
            assert "proxy.app" not in imports


def test_the_scope_keys_import_nothing_of_the_gateway_or_security_at_run_time() -> None:
    tree = ast.parse((PROXY / "scopes.py").read_text(encoding="utf-8"))
    top = {
        node.module or ""
        for node in tree.body
        if isinstance(node, ast.ImportFrom)  # the TYPE_CHECKING block is an `if`, not here
    }
    assert not {m for m in top if m.startswith(("proxy.gateway", "proxy.security"))}
    for path in (PROXY / "gateway").glob("*.py"):
        imports = imported_modules(path)
        assert "proxy.security.middleware" not in imports, f"{path.name}: use proxy.scopes"
        assert not {"proxy.security.grants.grant_of", "proxy.security.grants.client_grant"} & (
            imports
        ), f"{path.name}: use proxy.scopes"
