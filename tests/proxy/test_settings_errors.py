"""A bad setting names where it was set; a misspelled key or variable gets a "did you mean"."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.cli.main import main
from proxy.settings import Settings, SettingsError


def test_a_bad_value_in_config_toml_names_the_file_not_the_variable(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('port = "abc"\n', encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        Settings.load(environ={"TENURE_HOME": str(tmp_path)})
    message = str(caught.value)
    assert f"setting port (in {tmp_path / 'config.toml'}) = 'abc'" in message
    assert "TENURE_PORT" not in message


def test_a_bad_variable_names_the_variable_without_pydantics_prefix(tmp_path: Path) -> None:
    env = {"TENURE_HOME": str(tmp_path), "TENURE_UPSTREAM_URL": "ftp://x"}
    with pytest.raises(SettingsError) as caught:
        Settings.load(environ=env)
    message = str(caught.value)
    assert message.startswith("setting upstream_url (TENURE_UPSTREAM_URL) = 'ftp://x': 'ftp")
    assert "Value error" not in message


def test_an_unknown_key_gets_a_did_you_mean_not_every_key(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("extract_worker = 2\n", encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        Settings.load(environ={"TENURE_HOME": str(tmp_path)})
    message = str(caught.value)
    assert "unknown setting 'extract_worker'" in message
    assert "did you mean 'extract_workers'?" in message
    assert "upstream_url" not in message  # not the whole list of keys


def test_a_misspelled_variable_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TENURE_HOME", str(tmp_path))
    monkeypatch.setenv("TENURE_EXTRACT_WORKER", "2")
    monkeypatch.setenv("TENURE_PORT", "5800")  # a real one: no warning
    monkeypatch.setenv("TENURE_COMPILE", "0")  # the install's (`TENURE_COMPILE=0 make serve`)
    assert main(["rules", "list"]) == 0
    err = capsys.readouterr().err
    assert (
        "warning: TENURE_EXTRACT_WORKER is not a Tenure setting and is ignored; "
        "did you mean TENURE_EXTRACT_WORKERS?"
    ) in err
    assert "TENURE_PORT" not in err and "TENURE_HOME" not in err
    assert "TENURE_COMPILE" not in err
