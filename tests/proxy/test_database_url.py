"""TENURE_DATABASE_URL picks the backend: unset, the DuckDB file in TENURE_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.settings import Settings, SettingsError


def test_unset_means_the_duckdb_file_in_home(tmp_path: Path) -> None:
    settings = Settings.load(environ={"TENURE_HOME": str(tmp_path)})
    assert (settings.backend, settings.store_location) == ("duckdb", tmp_path / "tenure.duckdb")


def test_a_postgresql_url_is_the_store(tmp_path: Path) -> None:
    url = "postgresql://app:pw@db.internal:5432/tenure"
    settings = Settings.load(environ={"TENURE_HOME": str(tmp_path), "TENURE_DATABASE_URL": url})
    assert (settings.backend, settings.store_location) == ("postgresql", url)
    assert "pw" not in repr(settings)


def test_another_url_is_refused_by_name_without_its_password(tmp_path: Path) -> None:
    env = {"TENURE_HOME": str(tmp_path), "TENURE_DATABASE_URL": "mysql://app:pw@db/tenure"}
    with pytest.raises(SettingsError, match="TENURE_DATABASE_URL") as err:
        Settings.load(environ=env)
    assert "postgresql://" in str(err.value) and ":pw@" not in str(err.value)
