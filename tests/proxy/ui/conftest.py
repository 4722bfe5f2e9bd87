"""The real app (lifespan running, DuckDB in a temp TENURE_HOME) behind Starlette's TestClient."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from proxy.app import create_app
from proxy.runtime import Runtime
from proxy.settings import Settings
from tests.proxy.ui import seed

T = TypeVar("T")
_META_TOKEN = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


class UI:
    """A running app and a client; `on_store` runs a function on the app's store thread."""

    def __init__(self, app: Starlette, client: TestClient, settings: Settings) -> None:
        self.app = app
        self.client = client
        self.settings = settings

    @property
    def runtime(self) -> Runtime:
        runtime: Runtime = self.app.state.runtime
        return runtime

    def on_store(self, fn: Callable[[BeliefStore], T]) -> T:
        rt = self.runtime
        assert self.client.portal is not None
        return self.client.portal.call(rt.thread.run, fn, rt.store)

    def belief(self, belief_id: str) -> Belief:
        return self.on_store(lambda s: s.get(belief_id))

    def csrf(self, path: str = "/beliefs") -> str:
        """Load a page (which sets the CSRF cookie) and return the token its forms carry."""
        page = self.client.get(path)
        found = _META_TOKEN.search(page.text)
        assert found, page.text[:500]
        return found.group(1)

    def form(self, path: str, data: dict[str, str] | None = None, **kw: Any) -> Any:
        """Post a form the way the page does (token included), without following redirects."""
        fields = {"csrf_token": self.csrf(), **(data or {})}
        return self.client.post(path, data=fields, follow_redirects=False, **kw)


@pytest.fixture
def make_ui(tmp_path: Path) -> Iterator[Callable[..., UI]]:
    """`make_ui(beliefs=[...], **settings)`: the app over a fresh store seeded with `beliefs`."""
    with ExitStack() as stack:

        def make(beliefs: list[Belief] | None = None, **overrides: Any) -> UI:
            values: dict[str, Any] = {"upstream_url": "http://127.0.0.1:9", "extract_workers": 0}
            values.update(overrides)
            home = tmp_path / "home"
            settings = Settings.load(environ={"TENURE_HOME": str(home)}, **values)
            home.mkdir(parents=True, exist_ok=True)
            with open_store(settings.db_path) as store:
                for belief in beliefs or []:
                    store.create(belief)
            app = create_app(settings)
            client = stack.enter_context(TestClient(app, base_url="http://localhost"))
            return UI(app, client, settings)

        yield make


@pytest.fixture
def ui(make_ui: Callable[..., UI]) -> UI:
    """The app over the seed beliefs, with `b-postgres` superseded by `b-postgres-17`."""
    ui = make_ui(beliefs=seed.ALL)
    ui.on_store(lambda s: s.supersede("b-postgres", seed.POSTGRES_17, reason="billing upgrade"))
    return ui
