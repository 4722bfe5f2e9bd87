"""The users' personas: every one held in memory (read on every proxied request), written
through the store's transactions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import as_utc
from beliefs.model.persona import Persona, PersonaSource
from beliefs.store.connection import Connection
from beliefs.store.database import BeliefDatabase


class PersonaHolding(BeliefDatabase):
    """The personas table and its in-memory copy, which changes only at commit."""

    def __init__(
        self, conn: Connection, path: Path | str, *, read_only: bool, index: BeliefIndex
    ) -> None:
        super().__init__(conn, path, read_only=read_only, index=index)
        self._personas: dict[str, Persona | None] = {}

    def get_persona(self, user_id: str) -> Persona | None:
        """From memory (all personas load on open): it is read on every proxied request."""
        return self._personas.get(user_id)

    def load_personas(self, where: str = "", params: Sequence[Any] = ()) -> None:
        """Read the personas (`where` narrows them) into memory."""
        rows = self.conn.execute(
            f"SELECT user_id, text, source, inputs_hash, updated_at FROM personas {where}",
            list(params),
        ).fetchall()
        for row in rows:
            self._personas[row[0]] = Persona(
                user_id=row[0],
                text=row[1],
                source=row[2],
                inputs_hash=row[3],
                updated_at=as_utc(row[4]),
            )

    def refresh_personas(self, user_ids: Sequence[str]) -> None:
        """Re-read these users' personas (another replica changed them)."""
        for user_id in user_ids:
            self._personas.pop(user_id, None)
        self.load_personas("WHERE user_id IN (SELECT unnest(?::VARCHAR[]))", [list(user_ids)])

    def set_persona(
        self, user_id: str, text: str, *, source: PersonaSource, inputs_hash: str | None = None
    ) -> Persona:
        persona = Persona(user_id=user_id, text=text, source=source, inputs_hash=inputs_hash)
        self.set_personas([persona])
        return persona

    def set_personas(self, personas: Sequence[Persona]) -> None:
        """Store several users' personas in one statement (one user at most once)."""
        if not personas:
            return
        marks = ", ".join("(?, ?, ?, ?, ?)" for _ in personas)
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO personas (user_id, text, source, inputs_hash, updated_at) "
                f"VALUES {marks}",
                [
                    value
                    for p in personas
                    for value in (p.user_id, p.text, p.source, p.inputs_hash, p.updated_at)
                ],
            )
            written = {persona.user_id: persona for persona in personas}
            for user_id in written:
                self.note_change("persona", user_id)
            self.after_commit(lambda: self._personas.update(written))
