"""Identity and scope resolution from headers, metadata, the user field and the URL."""

from __future__ import annotations

import pytest

from proxy.errors import ProxyError
from proxy.identity import Identity, resolve_identity


def resolve(
    headers: dict[str, str] | None = None,
    body: dict[str, object] | None = None,
    url_scope: str | None = None,
) -> Identity:
    return resolve_identity(headers or {}, body or {}, url_scope=url_scope, default_user="me")


def test_precedence_header_metadata_user_default() -> None:
    body = {"user": "u-field", "metadata": {"tenure_user": "u-meta", "agent_id": "a-meta"}}
    assert resolve({"x-tenure-user": "u-head"}, body).user_id == "u-head"
    assert resolve({}, body).user_id == "u-meta"
    assert resolve({}, body).agent_id == "a-meta"
    assert resolve({}, {"user": "u-field"}).user_id == "u-field"
    assert resolve({}, {"metadata": {"user_id": "anthropic-user"}}).user_id == "anthropic-user"
    assert resolve().user_id == "me" and resolve().agent_id is None
    assert resolve({"x-agent-id": "cline"}).agent_id == "cline"


def test_scopes_union_defaults_and_chat_scopes() -> None:
    identity = resolve(
        {"x-tenure-scope": "Domain:Code, project:billing"},
        {"metadata": {"tenure_scope": "domain:writing"}},
        url_scope="project:billing",
    )
    assert identity.scopes == ("domain:code", "project:billing", "domain:writing")
    assert identity.all_scopes[-1] == "user:universal"
    assert resolve().scoped((), ("domain:code",)).scopes == ("domain:code",)
    assert resolve(url_scope="domain:x").scoped(("project:y",), ("domain:z",)).scopes == (
        "domain:x",
        "project:y",
    )


def test_controls() -> None:
    identity = resolve({"x-tenure-incognito": "1", "x-tenure-no-extract": "yes"})
    assert identity.incognito and identity.no_extract and not identity.no_inject


@pytest.mark.parametrize(
    ("headers", "url_scope", "param"),
    [
        ({"x-tenure-scope": "planet:mars"}, None, "X-Tenure-Scope"),
        ({}, "not a scope", "URL scope"),
        ({"x-tenure-user": "x" * 201}, None, "X-Tenure-User"),
    ],
)
def test_bad_values_name_their_source(
    headers: dict[str, str], url_scope: str | None, param: str
) -> None:
    with pytest.raises(ProxyError) as caught:
        resolve(headers, url_scope=url_scope)
    assert caught.value.status == 400 and caught.value.param == param
