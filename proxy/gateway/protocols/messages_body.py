"""The checks shared by the protocols whose request holds a list of chat `messages`."""

from __future__ import annotations

from typing import Any

from proxy.errors import bad_field
from proxy.gateway.request_body import expect


def check_head(body: dict[str, Any]) -> None:
    """Check `model`, `messages`, `stream` and `metadata` (the protocol checks its own fields
    next, then `check_messages` each message).

    Raises:
        ProxyError: 400 naming the first wrong field.
    """
    expect(body, "model", str, required=True)
    if not body["model"].strip():
        raise bad_field("model", "'model' is empty; name the model to answer, e.g. \"gpt-4o-mini\"")
    expect(body, "messages", list, required=True)
    expect(body, "stream", bool)
    expect(body, "metadata", dict)


def check_messages(body: dict[str, Any]) -> None:
    """Check that each message is an object with a string `role`.

    Raises:
        ProxyError: 400 naming the first wrong message.
    """
    for i, message in enumerate(body["messages"]):
        if not isinstance(message, dict):
            raise bad_field(
                f"messages[{i}]", f"'messages[{i}]' must be an object, got {type(message).__name__}"
            )
        if not isinstance(message.get("role"), str):
            raise bad_field(f"messages[{i}].role", f"'messages[{i}].role' must be a string")
