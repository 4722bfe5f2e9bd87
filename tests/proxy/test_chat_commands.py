"""Chat command parsing and the state they set (pure functions)."""

from __future__ import annotations

from proxy.chat_commands import ChatState, apply_command, parse_command


def test_parse() -> None:
    assert parse_command("  !scope domain:code ") is not None
    command = parse_command("!INJECT off")
    assert command is not None and (command.name, command.argument) == ("inject", "off")
    assert parse_command("!scoped thing") is None
    assert parse_command("please !scope x") is None
    assert parse_command("!unknown") is None


def test_apply() -> None:
    state = ChatState()
    command = parse_command("!scope domain:code project:billing")
    assert command is not None
    state, text = apply_command(state, command)
    assert state.scopes == ("domain:code", "project:billing") and "is now" in text
    cleared, _ = apply_command(state, parse_command("!scope clear"))  # type: ignore[arg-type]
    assert cleared.scopes == ()
    off, text = apply_command(state, parse_command("!extract off"))  # type: ignore[arg-type]
    assert not off.extract and off.inject and text.endswith("extraction is now off for this chat.")
    same, text = apply_command(off, parse_command("!inject sideways"))  # type: ignore[arg-type]
    assert same == off and "on or off" in text
