"""One chat request reads top-down through proxy/gateway/: traced through the real app, a call
never goes back up into a gateway file that is already on the stack (no callbacks into a
caller's file); the gateway's modules import one another in layers (no cycle), none of them
imports the runtime (the app hands the gateway its collaborators), and what is particular to
one protocol stays in its adapter (proxy/gateway/protocols/) and the route table."""

from __future__ import annotations

import ast
import asyncio
import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
import pytest

from beliefs.opening import open_store
from proxy.app import create_app
from proxy.settings import Settings
from tests.fakes.upstream import FakeUpstream
from tests.proxy import beliefs_seed as seed

GATEWAY = Path(__file__).resolve().parents[3] / "proxy" / "gateway"
ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}


def _gateway_file(frame: FrameType) -> str | None:
    """The frame's file under proxy/gateway/ (`handler.py`, `protocols/responses.py`), or None."""
    path = Path(frame.f_code.co_filename)
    return path.relative_to(GATEWAY).as_posix() if path.is_relative_to(GATEWAY) else None


class Tracer:
    """Follows the calls of one asyncio task and notes every entry into a gateway file that
    is already on the stack below another gateway file."""

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.stack: list[str | None] = []
        self.files: list[str] = []  # gateway files in the order they were first entered
        self.reentries: list[str] = []

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return") or asyncio.current_task() is not self.task:
            return
        if event == "return":
            if self.stack:
                self.stack.pop()
            return
        name = _gateway_file(frame)
        if name is not None:
            layers: list[str] = []
            for below in self.stack:
                if below is not None and (not layers or layers[-1] != below):
                    layers.append(below)
            if name in layers and layers[-1] != name:
                path = " > ".join(layers)
                self.reentries.append(f"{path} > {name}:{frame.f_code.co_name}")
            if name not in self.files:
                self.files.append(name)
        self.stack.append(name)


async def _trace(settings: Settings, path: str, body: dict[str, Any]) -> tuple[int, Tracer]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            task = asyncio.current_task()
            assert task is not None
            tracer = Tracer(task)
            sys.setprofile(tracer)
            try:
                resp = await client.post(path, json=body, headers=ALICE)
            finally:
                sys.setprofile(None)
    assert resp.headers["x-tenure-injected"] != "0"  # memory was placed: the whole path ran
    return resp.status_code, tracer


QUESTION = "Which pg version?"
ADAPTERS = {
    "chat": "protocols/chat_completions.py",
    "messages": "protocols/anthropic_messages.py",
    "responses": "protocols/responses.py",
}
CASES = {
    "chat": ("/v1/chat/completions", {"messages": [{"role": "user", "content": QUESTION}]}),
    "messages": (
        "/v1/messages",
        {"max_tokens": 64, "messages": [{"role": "user", "content": QUESTION}]},
    ),
    "responses": ("/v1/responses", {"input": QUESTION}),
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_chat_request_never_calls_back_into_a_gateway_file_above_it(
    tmp_path: Path, upstream: FakeUpstream, case: str, stream: bool
) -> None:
    home = tmp_path / "home"
    settings = Settings.load(
        environ={"TENURE_HOME": str(home)},
        upstream_url=upstream.url,
        anthropic_upstream_url=upstream.url,
        extract_workers=0,
        retrieval_timeout_ms=5000,
    )
    home.mkdir(parents=True)
    with open_store(settings.db_path) as store:
        for belief in seed.ALL:
            store.create(belief)
    path, body = CASES[case]
    status, tracer = asyncio.run(
        _trace(settings, path, {"model": "gpt-4o-mini", "stream": stream, **body})
    )
    assert status == 200
    # The trace saw the request's whole way: in at the route, through the handler and the
    # protocol's adapter, out at the provider, the turn handed to the store's writer.
    way = {"routes.py", "handler.py", ADAPTERS[case], "forward.py", "upstream_pool.py"}
    assert way | {"capture.py", "background.py"} <= set(tracer.files)
    assert tracer.reentries == []


def _module(path: Path) -> str:
    """`handler`, `protocols.responses`: a gateway module's name below proxy.gateway."""
    return ".".join(path.relative_to(GATEWAY).with_suffix("").parts)


def _gateway_imports(path: Path) -> set[str]:
    """The gateway modules `path` imports when it loads (not those under TYPE_CHECKING)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        if node.module != "proxy.gateway" and not node.module.startswith("proxy.gateway."):
            continue
        below = node.module.removeprefix("proxy.gateway").lstrip(".")
        if below == "" or (GATEWAY / below.replace(".", "/")).is_dir():
            found |= {".".join(filter(None, (below, alias.name))) for alias in node.names}
        else:
            found.add(below)
    return found


def _gateway_modules() -> list[Path]:
    return sorted(GATEWAY.rglob("*.py"))


def test_the_gateway_modules_import_one_another_in_layers() -> None:
    imports = {_module(path): _gateway_imports(path) for path in _gateway_modules()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import cycle: {' -> '.join((*path, module))}"
        if module in done:
            return
        for imported in sorted(imports.get(module, ())):
            visit(imported, (*path, module))
        done.add(module)

    for module in sorted(imports):
        visit(module, ())
    assert len(done) == len(imports) > 20
    assert "protocols.chat_completions" in imports["routes"]  # the walk sees the adapters


def _imported(tree: ast.AST) -> set[str]:
    """Every module an import statement anywhere in `tree` names (TYPE_CHECKING ones too)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_no_gateway_module_imports_the_runtime() -> None:
    """The app's lifespan builds the gateway's collaborators (`parts.Gateway`) and hands them
    to the proxy route: the gateway never reaches back for the runtime."""
    importers = [
        _module(path)
        for path in _gateway_modules()
        if "proxy.runtime" in _imported(ast.parse(path.read_text()))
    ]
    assert importers == []


# Protocol names in code (identifiers and string literals; prose in comments and docstrings
# may name a protocol as an example).
PROTOCOL_NAME = re.compile(r"anthropic|responses", re.IGNORECASE)
# Modules outside protocols/ that may still name one, and why.
PROTOCOL_NAMES_ALLOWED = {
    "routes": "the route table: which path is served by which adapter",
}


def _code_names(tree: ast.Module) -> set[str]:
    """The identifiers a module defines or uses and its string literals (not docstrings)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg is not None:
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.add(node.module)
        elif isinstance(node, ast.Constant) and id(node) not in docstrings:
            value = node.value
            if isinstance(value, bytes):
                names.add(value.decode("latin-1"))
            elif isinstance(value, str):
                names.add(value)
    return names


def test_protocol_names_stay_in_the_adapters() -> None:
    """A new protocol is one adapter module and a line of the route table: the handler, the
    forwarding, the capture and the writer know no protocol by name."""
    named = {
        _module(path): sorted(
            n for n in _code_names(ast.parse(path.read_text())) if PROTOCOL_NAME.search(n)
        )
        for path in _gateway_modules()
        if path.relative_to(GATEWAY).parts[0] != "protocols"
    }
    outside = {module: names for module, names in named.items() if names}
    assert set(outside) <= set(PROTOCOL_NAMES_ALLOWED), outside
    assert "routes" in outside  # the check reads what it should: the route table names them
