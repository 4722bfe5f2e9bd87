"""Serving the persona to requests and regenerating it in the background when its inputs change.

The request path never waits: it gets the stored text (stale text serves while a regeneration
runs) or, before one is stored, the deterministic summary computed from the in-memory index.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from beliefs.model.persona import Persona, PersonaSource
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction.model import ChatModel, ask
from compaction.persona import deterministic_text, fit, inputs_hash, persona_inputs, sentence
from compaction.prompts import PersonaReply, build_persona_messages

log = logging.getLogger("tenure.compaction")
MAX_SERVED = 50_000  # users whose served persona is kept


class PersonaKeeper:
    """One per server (or CLI command); `model` is the configured model name, if any."""

    def __init__(
        self, thread: StoreThread, *, llm: ChatModel | None = None, model: str | None = None
    ) -> None:
        self._thread = thread
        self._store = thread.store
        self._llm = llm
        self._model = model
        self._tasks: dict[str, asyncio.Task[Persona | None]] = {}
        self._checked: dict[str, int] = {}  # user -> the user's version when last compared
        # user -> ((the user's version, stored persona), text, what it covers): the request path's
        # answer, kept until either changes (working it out reads every belief of the user)
        self._served: dict[str, tuple[tuple[int, object], str, frozenset[str] | None]] = {}
        # user -> (text, source, inputs hash, who waits): regenerated personas not stored yet
        self._writes: dict[str, tuple[str, PersonaSource, str, list[asyncio.Future[Persona]]]] = {}
        self._writer: asyncio.Task[None] | None = None

    def text_for(self, user_id: str) -> str:
        """The persona to inject now; schedules a regeneration if its inputs changed."""
        stored = self._store.get_persona(user_id)
        if stored is not None and stored.source == "operator":
            return stored.text
        version = self._store.index.user_version(user_id)
        if stored is not None and self._checked.get(user_id) == version:
            return stored.text
        inputs = persona_inputs(self._store.index.records(user_id))
        digest = inputs_hash(inputs)
        self._checked[user_id] = version
        if stored is not None and stored.inputs_hash == digest:
            return stored.text
        self.schedule(user_id, use_model=stored is not None and stored.source == "generated")
        return stored.text if stored is not None else deterministic_text(inputs)

    def persona_for(self, user_id: str) -> tuple[str, frozenset[str] | None]:
        """The persona text and which universal pinned beliefs it covers (None: all).

        An operator's persona speaks for all of them. A summary covers the pinned beliefs
        whose sentence it carries; a model's text is not checked, so it covers none and those
        beliefs also go to the pinned layer.
        """
        version = self._store.index.user_version(user_id)
        served = self._served.get(user_id)
        if served is not None and served[0] == (version, _kept(self._store.get_persona(user_id))):
            return served[1], served[2]
        text = self.text_for(user_id)
        stored = self._store.get_persona(user_id)
        covers: frozenset[str] | None
        if stored is not None and stored.source == "operator":
            covers = None
        elif stored is not None and stored.source == "generated":
            covers = frozenset()
        else:
            inputs = persona_inputs(self._store.index.records(user_id))
            covers = frozenset(b.id for b in inputs if b.pinned and sentence(b) in text)
        if len(self._served) >= MAX_SERVED:
            self._served.clear()
        self._served[user_id] = ((version, _kept(stored)), text, covers)
        return text, covers

    def schedule(self, user_id: str, *, use_model: bool) -> None:
        """Regenerate in the background unless a regeneration for the user is running."""
        if user_id in self._tasks:
            return
        task = asyncio.create_task(
            self.refresh(user_id, use_model=use_model), name=f"tenure-persona-{user_id}"
        )
        self._tasks[user_id] = task
        task.add_done_callback(lambda t: self._done(user_id, t))

    def _done(self, user_id: str, task: asyncio.Task[Persona | None]) -> None:
        self._tasks.pop(user_id, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("persona regeneration for %s failed: %s", user_id, task.exception())

    async def wait(self) -> None:
        """Until the background regenerations scheduled so far are done (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)

    async def close(self) -> None:
        tasks = [*self._tasks.values(), *([self._writer] if self._writer else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def refresh(
        self,
        user_id: str,
        *,
        use_model: bool = True,
        force: bool = False,
        model: str | None = None,
    ) -> Persona | None:
        """Regenerate and store the persona if its inputs changed (or `force`).

        Uses the model when asked and one is configured, else (or when the model fails) the
        deterministic summary. An operator-set persona is returned untouched.
        """
        inputs = persona_inputs(self._store.index.records(user_id))
        digest = inputs_hash(inputs)
        stored = self._store.get_persona(user_id)
        if stored is not None and stored.source == "operator":
            return stored
        if not force and stored is not None and stored.inputs_hash == digest:
            return stored
        text = deterministic_text(inputs)
        source: PersonaSource = "deterministic"
        model = model or self._model
        if use_model and self._llm is not None and model and inputs:
            try:
                reply = await ask(
                    self._llm,
                    build_persona_messages(inputs),
                    PersonaReply,
                    model=model,
                    name="persona",
                )
                text = fit(reply.text)
                source = "generated"
            except Exception as exc:  # the deterministic summary stands in
                log.warning("persona model for %s failed (%s); using the summary", user_id, exc)
        return await self._write(user_id, text, source, digest)

    async def _write(self, user_id: str, text: str, source: PersonaSource, digest: str) -> Persona:
        """Store the persona with every other one regenerated meanwhile: one transaction on
        the store thread for a batch, not one per user (a gateway that starts serving many
        users writes each one's first summary)."""
        done: asyncio.Future[Persona] = asyncio.get_running_loop().create_future()
        earlier = self._writes.get(user_id)
        self._writes[user_id] = (text, source, digest, [*(earlier[3] if earlier else ()), done])
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_all(), name="tenure-persona-writes")
        return await done

    async def _write_all(self) -> None:
        while self._writes:
            batch, self._writes = self._writes, {}
            try:
                stored = await self._thread.run(
                    _store_unless_operator,
                    self._store,
                    {
                        user: (text, source, digest)
                        for user, (text, source, digest, _) in batch.items()
                    },
                )
            except Exception as exc:
                for *_, waiting in batch.values():
                    for done in waiting:
                        if not done.done():
                            done.set_exception(exc)
                continue
            for user_id, (*_, waiting) in batch.items():
                for done in waiting:
                    if not done.done():
                        done.set_result(stored[user_id])


def _store_unless_operator(
    store: BeliefStore, personas: dict[str, tuple[str, PersonaSource, str]]
) -> dict[str, Persona]:
    """Store each user's persona, unless an operator has set that user's."""
    out: dict[str, Persona] = {}
    new: list[Persona] = []
    for user_id, (text, source, digest) in personas.items():
        current = store.get_persona(user_id)
        if current is not None and current.source == "operator":
            out[user_id] = current
        else:
            out[user_id] = Persona(user_id=user_id, text=text, source=source, inputs_hash=digest)
            new.append(out[user_id])
    store.set_personas(new)
    return out


def _kept(persona: Persona | None) -> object:
    """What of a stored persona the served answer depends on."""
    return None if persona is None else (persona.text, persona.source)
