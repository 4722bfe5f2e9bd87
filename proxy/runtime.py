"""The resources of a running gateway, opened and closed by the app's lifespan, and the
collaborators the settings describe (the model client, extraction's config, compaction's parts),
which CLI commands build the same way."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlsplit

from beliefs.context.tokens import token_counter
from beliefs.documents import MIGRATIONS as DOCUMENT_TABLES
from beliefs.index.semantic import enable as enable_semantic
from beliefs.model.errors import BeliefError
from beliefs.opening import open_store
from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from beliefs.text.lexicon import warm as warm_lexicon
from compaction import CompactionConfig, CompactionScheduler, Compactor, PersonaKeeper
from extractor.config import ExtractionConfig
from extractor.jobs import JobQueue
from extractor.journal import journal_of
from extractor.llm import ChatModel, LiteLLMChatModel
from extractor.structured import CallOptions
from extractor.worker import ExtractionWorkers
from proxy.gateway.background import StoreWriter
from proxy.gateway.chat_commands import LOAD_SQL, ChatStates
from proxy.gateway.counters import Counters
from proxy.gateway.loop_memory import LoopMemories
from proxy.gateway.memory import MemoryBuilder
from proxy.gateway.replicas import Follower
from proxy.gateway.side_calls import SeenMessages
from proxy.gateway.tables import MIGRATIONS as GATEWAY_TABLES
from proxy.gateway.upstream_pool import UpstreamPool
from proxy.settings import Settings

log = logging.getLogger("tenure.proxy")

# Extraction waits (a few seconds at most) while this many proxied requests are in flight: on
# a small machine its model calls and merges would otherwise take CPU from live requests.
BUSY_IN_FLIGHT = 4


@dataclass
class Runtime:
    """The running server's resources: one per app, opened and closed by the lifespan (no
    globals). The app's routes are built from them, each given what it uses; the proxy paths
    read theirs from the app's state."""

    settings: Settings
    store: BeliefStore
    thread: StoreThread
    async_store: AsyncStore  # the store as the API, UI and MCP handlers are given it
    upstream: UpstreamPool
    writer: StoreWriter
    memory: MemoryBuilder
    loops: LoopMemories  # each typed message's memory, for the requests of its tool loop
    chat_states: ChatStates
    counters: Counters
    jobs: JobQueue
    workers: ExtractionWorkers | None
    persona: PersonaKeeper
    compactor: Compactor
    scheduler: CompactionScheduler
    owns_store: bool
    owns_upstream: bool
    llm: ChatModel  # the one model client, shared by extraction and compaction
    own_llm: LiteLLMChatModel | None = None
    seen: SeenMessages = field(default_factory=SeenMessages)  # user messages extracted
    starting: asyncio.Task[None] | None = None  # starts the workers once the index is full
    follower: Follower | None = None  # other replicas' writes, on a PostgreSQL store

    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        store: BeliefStore | None = None,
        upstream: UpstreamPool | None = None,
        llm: ChatModel | None = None,
    ) -> Runtime:
        """Open the store (unless given), the upstream pool, the writer and the workers.

        Raises:
            StoreLocked: another process holds the database.
        """
        owns_store = store is None
        if store is None:
            store = settings_store(settings)
        # The in-memory mirror is long-lived: keep the collector from rescanning it (p99).
        gc.collect()
        gc.freeze()
        thread = StoreThread(store)
        counters = Counters()
        chat_states = ChatStates()
        await thread.run(store.ensure_schema, GATEWAY_TABLES)
        await thread.run(store.ensure_schema, DOCUMENT_TABLES)
        chat_states.load(await thread.run(lambda: store.execute(LOAD_SQL).fetchall()))
        pool = upstream or UpstreamPool(
            connect_timeout=settings.upstream_connect_timeout,
            read_timeout=settings.upstream_timeout,
            max_connections=settings.upstream_max_connections,
        )
        jobs, writer = await open_queue(settings, thread, counters)
        own_llm = None
        if llm is None:
            llm = own_llm = chat_model_for(settings)
        workers = extraction_workers(settings, thread, jobs, llm, counters)
        parts = compaction_parts(settings, thread, llm)
        # Extraction and compaction read the index on the store thread: started before it is
        # full they would hold that thread (and the turn writes behind it) until it is.
        # LiteLLM (~150 MB resident, seconds of interpreter time) is imported ahead only when a
        # live request may need it (a routed model); extraction and compaction, in the
        # background, import it at their first model call, so an idle server never holds it.
        warm = own_llm if settings.models else None
        starting = asyncio.create_task(
            start_when_loaded(
                store, workers, parts.scheduler, semantic=settings.semantic, llm=warm
            ),
            name="tenure-start-workers",
        )
        follower = None
        if store.feed is not None and settings.database_url:
            follower = Follower(settings.database_url, thread, store)
            follower.start()
        runtime = cls(
            settings=settings,
            store=store,
            thread=thread,
            async_store=AsyncStore(thread),
            upstream=pool,
            writer=writer,
            memory=MemoryBuilder(store, thread, settings, counters, persona=parts.persona),
            loops=LoopMemories(thread, writer),
            chat_states=chat_states,
            counters=counters,
            jobs=jobs,
            workers=workers,
            persona=parts.persona,
            compactor=parts.compactor,
            scheduler=parts.scheduler,
            owns_store=owns_store,
            owns_upstream=upstream is None,
            llm=llm,
            own_llm=own_llm,
            follower=follower,
        )
        runtime.starting = starting
        await runtime._warm()
        return runtime

    async def _warm(self) -> None:
        """Fill the index (in the background when the store was opened so), then wait for the
        workers' start when it is already full."""
        if self.store.load_pending:
            # Last, so start-up's own work (imports, word lists) does not share the processor
            # with the load: /healthz answers as soon as the port does.
            self.store.load_in_background(prepare=warm_retrieval)
        else:
            warm_retrieval()
        if self.store.index.ready.is_set() and self.starting is not None:
            await self.starting

    async def close(self) -> None:
        """Stop the workers, write every queued record and job, then close what was opened."""
        if self.starting is not None and not self.starting.done():
            self.starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.starting
        await self.scheduler.stop()  # a run in progress is cancelled; each cluster is atomic
        await self.persona.close()
        if self.workers is not None:
            try:
                await self.workers.stop()
            except Exception:
                log.exception("extraction workers did not stop cleanly")
        if self.own_llm is not None:
            with contextlib.suppress(Exception):
                await self.own_llm.aclose()
        await self.writer.stop()
        if self.follower is not None:
            self.follower.stop()
        if self.owns_upstream:
            await self.upstream.close()
        self.thread.close()
        if self.owns_store:
            with contextlib.suppress(Exception):
                self.store.close()


def settings_store(settings: Settings) -> BeliefStore:
    """The store the settings name (created under TENURE_HOME when it is new)."""
    settings.home.mkdir(parents=True, exist_ok=True)
    return open_store(
        settings.store_location,
        replica=settings.replica_id,
        bound=settings.index_max_beliefs,
    )


async def open_queue(
    settings: Settings, thread: StoreThread, counters: Counters
) -> tuple[JobQueue, StoreWriter]:
    """The extraction job queue (with the journal's jobs replayed) and the started writer."""
    store = thread.store
    # On PostgreSQL another replica's running job is its own until its lease runs out; the
    # lease is renewed every third of it until the job's result is written, so it only has to
    # outlast a silence (twice the extraction timeout, and a margin, is generous).
    lease = settings.extract_lease or settings.extract_timeout * 2 + 30
    shared = store.dialect == "postgresql"
    holder = store.feed.origin if store.feed is not None else None
    jobs = JobQueue(store, lease_s=lease if shared else 0.0, holder=holder)
    journal = journal_of(settings.home, enabled=settings.journal)
    if journal is not None:
        await thread.run(journal.recover, jobs.replay)
    writer = StoreWriter(thread, counters, jobs, max_kept=settings.write_keep_max, journal=journal)
    writer.start()
    return jobs, writer


def extraction_workers(
    settings: Settings, thread: StoreThread, jobs: JobQueue, llm: ChatModel, counters: Counters
) -> ExtractionWorkers | None:
    """The extraction workers (not started), or None when TENURE_EXTRACT_WORKERS is 0."""
    if settings.extract_workers <= 0:
        return None
    warn_if_keyless(settings)
    return ExtractionWorkers(
        thread,
        jobs,
        llm,
        extraction_config(settings),
        busy=lambda: counters.in_flight >= BUSY_IN_FLIGHT,
        min_rate=settings.extract_min_rate,
        backlog_max=settings.extract_backlog_max,
    )


async def start_when_loaded(
    store: BeliefStore,
    workers: ExtractionWorkers | None,
    scheduler: CompactionScheduler,
    *,
    semantic: bool,
    llm: LiteLLMChatModel | None = None,
) -> None:
    """Switch on semantic recall and start extraction and compaction once the store's index
    is full (each takes the index's lock, which the loader holds until then). The import of
    `llm`'s LiteLLM (seconds of interpreter time, on a thread) starts then too, so it does not
    slow start-up."""
    await wait_loaded(store)
    await asyncio.to_thread(release_freed_memory)  # what the load decoded and dropped
    if llm is not None:
        llm.warm_up()
    if semantic and store.index.semantic is None:
        try:
            await asyncio.to_thread(enable_semantic, store.index)  # loads the encoder
        except BeliefError as exc:  # name recall still works; extraction must still start
            log.error("semantic recall is off: %s", exc.message)
    if workers is not None:
        await workers.start()
    scheduler.start()


def release_freed_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc keeps them otherwise): the
    index's load leaves tens of MB of freed row buffers behind. Nothing elsewhere."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


def warm_retrieval() -> None:
    """Load what a turn's retrieval needs (the word lists, ~1 s; the tokenizer) before the
    first turn rather than inside its time budget; with a background load, on its thread."""
    warm_lexicon()
    token_counter()


async def wait_loaded(store: BeliefStore) -> None:
    """Return once the store's index is full (checked off the loop's critical path)."""
    while not store.index.ready.is_set():
        await asyncio.sleep(0.05)


# -- the collaborators settings describe: the model client, extraction's config, compaction --


def chat_model_for(settings: Settings) -> LiteLLMChatModel:
    """The real model client: TENURE_EXTRACT_API_BASE/KEY, else the upstream's (or a route's)
    URL and key. One is built at start-up and shared by extraction and compaction."""
    own = settings.extract_model is None
    routes = {r.litellm_model: (r.api_base, r.api_key) for r in settings.models.values()}
    # LiteLLM appends /v1/messages itself; the gateway's Anthropic base ends in /v1.
    anthropic_base = (settings.anthropic_upstream_url or settings.upstream_url).removesuffix("/v1")
    routes["anthropic/"] = (
        anthropic_base,
        settings.anthropic_upstream_api_key or settings.upstream_api_key,
    )
    return LiteLLMChatModel(
        api_base=settings.extract_api_base or (settings.upstream_url if own else None),
        api_key=settings.extract_api_key or (settings.upstream_api_key if own else None),
        timeout=settings.extract_timeout,
        routes=routes if own else None,
    )


def warn_if_keyless(settings: Settings) -> None:
    """Extraction never uses a client's key: without one of its own, a provider that wants a
    key refuses every call and memory never forms. A server on this machine may need none."""
    base = settings.extract_api_base or settings.upstream_url
    local = urlsplit(base).hostname in ("127.0.0.1", "localhost", "::1")
    own = settings.extract_model is None  # else LiteLLM may read the provider's own variable
    if settings.extract_api_key or settings.upstream_api_key or local or not own:
        return
    log.warning(
        "extraction calls %s without a key (a client's key is never kept): set "
        "TENURE_UPSTREAM_API_KEY or TENURE_EXTRACT_API_KEY, or memory will not form",
        base,
    )


def extraction_config(settings: Settings) -> ExtractionConfig:
    return ExtractionConfig(
        model=settings.extract_model,
        routes={name: route.litellm_model for name, route in settings.models.items()},
        workers=settings.extract_workers,
        max_attempts=settings.extract_max_attempts,
        backoff_s=settings.extract_backoff_s,
        backoff_max_s=settings.extract_backoff_max_s,
        breaker_threshold=settings.breaker_threshold,
        breaker_cooldown_s=settings.breaker_cooldown_s,
        canary=settings.extract_canary,
        batch_turns=settings.extract_batch_turns,
        batch_chars=settings.extract_batch_chars,
        always_write_confirm=settings.always_write_confirm,
        call=CallOptions(
            max_tokens=settings.extract_max_tokens,
            max_tokens_retry=max(settings.extract_max_tokens * 2, 4096),
            output_mode=settings.extract_output_mode,
            schema=settings.extract_schema,
            rules=settings.extract_rules_in,
        ),
    )


@dataclass
class CompactionParts:
    persona: PersonaKeeper
    compactor: Compactor
    scheduler: CompactionScheduler
    own_llm: LiteLLMChatModel | None  # the client made here (its caller closes it), or None


def configured_model(settings: Settings) -> str | None:
    """TENURE_COMPACTION_MODEL, else TENURE_EXTRACT_MODEL; None means the user's own model."""
    return settings.compaction_model or settings.extract_model


def compaction_config(settings: Settings) -> CompactionConfig:
    return CompactionConfig(
        grace=timedelta(hours=settings.compaction_grace_hours),
        cooldown_s=settings.compaction_cooldown_s,
        model=configured_model(settings),
    )


def compaction_parts(
    settings: Settings, thread: StoreThread, llm: ChatModel | None = None
) -> CompactionParts:
    """The extractor's LLM boundary serves compaction too: the gateway passes its one shared
    client; a CLI command without one gets its own."""
    own = None
    if llm is None:
        llm = own = chat_model_for(settings)
    persona = PersonaKeeper(thread, llm=llm, model=configured_model(settings))
    compactor = Compactor(thread, llm=llm, config=compaction_config(settings), persona=persona)
    scheduler = CompactionScheduler(compactor, settings.compaction_interval)
    return CompactionParts(persona, compactor, scheduler, own)
