"""One chat request reads top-down through proxy/gateway/: traced through the real app, a call
never goes back up into a gateway file that is already on the stack (no callbacks into a
caller's file), and the gateway's modules import one another in layers (no cycle)."""

from __future__ import annotations

import ast
import asyncio
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

GATEWAY = Path(__file__).resolve().parents[2] / "proxy" / "gateway"
ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}


def _gateway_file(frame: FrameType) -> str | None:
    path = Path(frame.f_code.co_filename)
    return path.name if path.parent == GATEWAY else None


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
    # The trace saw the request's whole way: in at the route, out at the provider, the turn
    # handed to the store.
    assert {"routes.py", "forward.py", "upstream_pool.py", "turns.py"} <= set(tracer.files)
    assert tracer.reentries == []


def _gateway_imports(path: Path) -> set[str]:
    """The gateway modules `path` imports when it loads (not those under TYPE_CHECKING)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module == "proxy.gateway":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("proxy.gateway."):
            found.add((node.module or "").split(".")[2])
    return found


def test_the_gateway_modules_import_one_another_in_layers() -> None:
    imports = {path.stem: _gateway_imports(path) for path in GATEWAY.glob("*.py")}
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
