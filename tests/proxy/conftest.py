"""A real gateway (uvicorn on a free port, lifespan running) over the stand-in provider."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anthropic
import openai
import pytest
import uvicorn

from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from proxy.app import create_app
from proxy.gateway.upstream_pool import UpstreamPool
from proxy.runtime import Runtime
from proxy.settings import Settings
from tests.fakes.upstream import FakeUpstream

T = TypeVar("T")


class Gateway:
    """A running gateway; `url` is its base (no /v1), `v1` the OpenAI base URL."""

    def __init__(
        self,
        settings: Settings,
        store: BeliefStore,
        llm: Any = None,
        upstream: UpstreamPool | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self._pool = upstream  # given ones are the test's to close
        self._app = create_app(settings, store=store, llm=llm, upstream=upstream)
        self._clients: list[openai.OpenAI | anthropic.Anthropic] = []
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app, log_level="warning", lifespan="on", server_header=False, date_header=False
        )
        self._server = uvicorn.Server(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_until_complete, args=(self._server.serve(sockets=[sock]),)
        )
        self._thread.start()
        deadline = time.monotonic() + 120  # a bound for a hang; a loaded machine is slow
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the gateway did not start")
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def v1(self) -> str:
        return f"{self.url}/v1"

    def openai(self, api_key: str = "sk-client") -> openai.OpenAI:
        """An `openai` SDK client on this gateway, closed when the gateway stops."""
        client = openai.OpenAI(base_url=self.v1, api_key=api_key, max_retries=0)
        self._clients.append(client)
        return client

    def anthropic(self, api_key: str = "sk-ant-client") -> anthropic.Anthropic:
        """An `anthropic` SDK client (it appends /v1/messages itself)."""
        client = anthropic.Anthropic(base_url=self.url, api_key=api_key, max_retries=0)
        self._clients.append(client)
        return client

    @property
    def runtime(self) -> Runtime:
        runtime: Runtime = self._app.state.runtime
        return runtime

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the gateway's event loop."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    def on_store(self, fn: Callable[[BeliefStore], T]) -> T:
        """Run `fn(store)` on the store thread (DuckDB is not thread-safe)."""
        return self.call(self.runtime.thread.run(fn, self.store))

    def rows(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        return self.on_store(lambda s: s.execute(sql, params or []).fetchall())

    def settle(self, until: Callable[[], bool] | None = None, timeout: float = 5.0) -> None:
        """Wait for the background writes of finished requests (and `until`, if given)."""
        deadline = time.monotonic() + timeout
        while True:
            self.call(self.runtime.writer.flush())
            if until is None or until():
                if until is None:
                    time.sleep(0.05)
                    self.call(self.runtime.writer.flush())
                return
            if time.monotonic() > deadline:
                raise AssertionError("the expected background write did not happen")
            time.sleep(0.02)

    def stop(self) -> None:
        if self._loop.is_closed():
            return
        for client in self._clients:
            client.close()
        if self._pool is not None:
            self.call(self._pool.close())
        self._server.should_exit = True
        self._thread.join(10)
        self._loop.close()


@pytest.fixture
def gateway_backend() -> str:
    """The store under `make_gateway`: DuckDB; a module that overrides this fixture with
    `BOTH_BACKENDS` runs its tests on PostgreSQL too."""
    return "duckdb"


BOTH_BACKENDS = pytest.fixture(params=["duckdb", "postgresql"], name="gateway_backend")(
    lambda request: request.param
)


@pytest.fixture
def make_gateway(
    tmp_path: Path, upstream: FakeUpstream, gateway_backend: str, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Gateway]]:
    """`make_gateway(beliefs=[...], **settings)` starts a gateway over a fresh store."""
    started: list[tuple[Gateway, BeliefStore]] = []

    def make(
        beliefs: list[Belief] | None = None,
        persona: str = "",
        llm: Any = None,
        pool: UpstreamPool | None = None,
        **overrides: Any,
    ) -> Gateway:
        # A generous retrieval budget: a loaded test machine must not drop memory by chance.
        values: dict[str, Any] = {
            "upstream_url": upstream.url,
            "extract_workers": 0,
            "retrieval_timeout_ms": 5000,
        }
        if gateway_backend == "postgresql":
            values["database_url"] = request.getfixturevalue("pg_url")
        values.update(overrides)
        settings = Settings.load(environ={"TENURE_HOME": str(tmp_path / "home")}, **values)
        settings.home.mkdir(parents=True, exist_ok=True)
        store = open_store(settings.store_location, bound=settings.index_max_beliefs)
        for belief in beliefs or []:
            store.create(belief)
        if persona:
            for user in {b.user_id for b in beliefs or []} or {settings.default_user}:
                store.set_persona(user, persona, source="operator")
        gateway = Gateway(settings, store, llm, pool)
        started.append((gateway, store))
        return gateway

    yield make
    for gateway, store in started:
        gateway.stop()
        store.close()


@pytest.fixture
def gateway(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway()


@contextmanager
def no_request_to(upstream: FakeUpstream) -> Iterator[None]:
    before = len(upstream.requests)
    yield
    assert len(upstream.requests) == before, "the request reached the upstream"
