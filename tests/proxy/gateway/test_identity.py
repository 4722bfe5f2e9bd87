"""Identity and scope resolution from headers, metadata, the user field and the URL."""

from __future__ import annotations

import json

import pytest

from proxy.errors import ProxyError
from proxy.gateway.identity import Identity, resolve_identity, stable_client_id


def resolve(
    headers: dict[str, str] | None = None,
    body: dict[str, object] | None = None,
    url_scope: str | None = None,
    *,
    trust: bool = True,
    mapped: dict[str, str] | None = None,
) -> Identity:
    return resolve_identity(
        headers or {},
        body or {},
        url_scope=url_scope,
        default_user="me",
        trust_client_ids=trust,
        client_users=mapped,
    )


def test_precedence_header_metadata_user_default() -> None:
    body = {"user": "u-field", "metadata": {"tenure_user": "u-meta", "agent_id": "a-meta"}}
    assert resolve({"x-tenure-user": "u-head"}, body).user_id == "u-head"
    assert resolve({}, body).user_id == "u-meta"
    assert resolve({}, body).agent_id == "a-meta"
    assert resolve({}, {"user": "u-field"}).user_id == "u-field"
    assert resolve({}, {"safety_identifier": "u-safe"}).user_id == "u-safe"
    assert resolve({}, {"metadata": {"user_id": "anthropic-user"}}).user_id == "anthropic-user"
    assert resolve().user_id == "me" and resolve().agent_id is None


def test_client_ids_count_only_when_trusted_or_mapped() -> None:
    for body in (
        {"user": "u-field"},
        {"safety_identifier": "hash-per-user"},
        {"metadata": {"user_id": "session-123"}},
    ):
        assert resolve({}, body, trust=False).user_id == "me"
    mapped = {"u-field": "alice"}
    assert resolve({}, {"user": "u-field"}, trust=False, mapped=mapped).user_id == "alice"
    assert resolve({}, {"user": "u-field"}, trust=True, mapped=mapped).user_id == "alice"
    # Tenure's own ids are never subject to the rule.
    assert resolve({"x-tenure-user": "bob"}, {"user": "u-field"}, trust=False).user_id == "bob"
    body = {"metadata": {"tenure_user": "carol"}}
    assert resolve({}, body, trust=False).user_id == "carol"


CLAUDE_DEVICE = "d" * 64


def claude_code_user_id(session: str, account: str = "") -> str:
    return json.dumps(
        {"device_id": CLAUDE_DEVICE, "account_uuid": account, "session_id": session},
        separators=(",", ":"),
    )


def test_claude_code_sessions_share_a_user_its_device_or_account() -> None:
    sessions = [claude_code_user_id(f"0000000{n}-aaaa-bbbb-cccc-dddddddddddd") for n in (1, 2)]
    users = {resolve({}, {"metadata": {"user_id": s}}).user_id for s in sessions}
    assert users == {CLAUDE_DEVICE}
    account = "5f0c1a2b-0000-4000-8000-123456789abc"
    signed_in = claude_code_user_id("s-1", account)
    assert resolve({}, {"metadata": {"user_id": signed_in}}).user_id == account
    legacy = f"user_{CLAUDE_DEVICE}_account__session_0a1b2c3d-0000-4000-8000-aaaaaaaaaaaa"
    assert resolve({}, {"metadata": {"user_id": legacy}}).user_id == f"user_{CLAUDE_DEVICE}"
    # The operator maps the device, not the session, to a user.
    mapped = {CLAUDE_DEVICE: "alice"}
    assert resolve(
        {}, {"metadata": {"user_id": sessions[0]}}, trust=False, mapped=mapped
    ).user_id == ("alice")
    assert stable_client_id("{not json device_id") == "{not json device_id"
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
