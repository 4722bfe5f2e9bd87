"""Chat command parsing and the state they set (pure functions)."""

from __future__ import annotations

from proxy.gateway.chat_commands import ChatCommand, ChatState, apply_command, parse_command


def test_parse() -> None:
    assert parse_command("  !scope domain:code ") is not None
    command = parse_command("!INJECT off")
    assert command is not None and (command.name, command.argument) == ("inject", "off")
    assert parse_command("!scoped thing") is None
    assert parse_command("please !scope x") is None
    # Any whitespace separates a command from its argument.
    for text in ("!inject\toff", "!inject\noff", "!inject\u00a0off", "!INJECT   off"):
        assert parse_command(text) == ChatCommand("inject", "off"), text
    assert parse_command("!scope\tdomain:code, project:billing") == ChatCommand(
        "scope", "domain:code, project:billing"
    )
    # Talk that starts with a command word is not a command.
    assert parse_command("!extract the tables from this PDF please") is None
    assert parse_command("!scope of this project is too big") is None
    assert parse_command("!") is None
    # One word is a command, right or wrong (a wrong one is answered).
    assert parse_command("!extract maybe") == ChatCommand("extract", "maybe")
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
