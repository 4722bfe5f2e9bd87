"""A PostgreSQL store that cannot be reached says why, at once, not that a pool timed out."""

from __future__ import annotations

import pytest

from beliefs.model.errors import BeliefError
from beliefs.opening import open_store
from tests.postgres_server import PostgresServer


def test_a_refused_connection_names_its_cause(postgres: PostgresServer) -> None:
    with pytest.raises(BeliefError) as caught:
        open_store(postgres.url("no_such_database"))
    message = caught.value.message
    assert 'database "no_such_database" does not exist' in message
    assert "pool initialization incomplete" not in message
    assert "TENURE_DATABASE_URL" in message
