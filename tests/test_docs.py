"""The reference under docs/ keeps step with the code: every setting, every header the gateway
reads or sets, every route and every CLI command and flag is documented."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.cli.main import build_parser
from proxy.gateway.routes import ProxyRoute
from proxy.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Standard headers the gateway reads (the x-… ones are found in the code).
READ_HEADERS = ("authorization", "origin", "sec-fetch-site", "host", "cookie")
_HEADER = re.compile(r"""b?["'](x-[a-z0-9-]*[a-z0-9])["']""", re.IGNORECASE)
_LINK = re.compile(r"\]\(((?:docs/)?[a-z-]+\.md)\)")


def doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def env_name(field: str) -> str:
    return '`[models."' if field == "models" else f"`TENURE_{field.upper()}`"


@pytest.mark.parametrize("field", list(Settings.model_fields))
def test_every_setting_is_documented(field: str) -> None:
    assert env_name(field) in doc("settings.md"), f"add {env_name(field)} to docs/settings.md"


def headers_in_code() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "proxy").rglob("*.py"):
        found.update(h.lower() for h in _HEADER.findall(path.read_text(encoding="utf-8")))
    return found


def test_the_header_scan_finds_the_identity_headers() -> None:
    assert {"x-tenure-user", "x-tenure-scope", "x-agent-id"} <= headers_in_code()


@pytest.mark.parametrize("header", sorted(headers_in_code() | set(READ_HEADERS)))
def test_every_header_is_documented(header: str) -> None:
    assert f"`{header}" in doc("headers.md").lower(), f"add {header} to docs/headers.md"


def routes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("home")
    app = create_app(Settings.load(environ={"TENURE_HOME": str(home)}))
    with TestClient(app):  # the routes are built once the lifespan has opened the store
        built = list(app.router.routes)
    assert len(built) > 20
    for route in built:
        if isinstance(route, ProxyRoute) or "{rest:path}" in getattr(route, "path", ""):
            continue  # the proxy's catch-all and the API's 404/405 answer
        if isinstance(route, Mount):
            yield f"`{route.path}`"
        elif isinstance(route, Route):
            for method in sorted((route.methods or set()) - {"HEAD"}):
                yield f"`{method} {route.path}`"


def test_every_route_is_documented(tmp_path_factory: pytest.TempPathFactory) -> None:
    text = doc("endpoints.md")
    missing = [r for r in routes(tmp_path_factory) if r not in text]
    assert not missing, f"add to docs/endpoints.md: {', '.join(missing)}"


def commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...]
) -> Iterator[tuple[str, list[str]]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        for name, sub in action.choices.items():
            yield from commands(sub, (*words, name))
    if not subs:
        flags = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
        yield " ".join(words), [f for f in flags if f != "--help"]


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^### ", text, flags=re.MULTILINE)[1:]
    return {p.split("\n", 1)[0].strip(): p for p in parts}


@pytest.mark.parametrize(
    ("command", "flags"), list(commands(build_parser(), ("tenure",))), ids=lambda v: str(v)
)
def test_every_command_and_flag_is_documented(command: str, flags: list[str]) -> None:
    section = sections(doc("cli.md")).get(command)
    assert section is not None, f"add a '### {command}' section to docs/cli.md"
    missing = [f for f in flags if f not in section]
    assert not missing, f"document {', '.join(missing)} under '### {command}' in docs/cli.md"


def test_links_between_pages_resolve() -> None:
    pages = [ROOT / "README.md", *DOCS.glob("*.md")]
    for page in pages:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            base = ROOT if target.startswith("docs/") else page.parent
            assert (base / target).exists(), f"{page.name} links to missing {target}"


def test_the_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 120
