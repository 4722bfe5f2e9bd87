"""Extraction workers: drain the job table, call the model, land each job in one transaction."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

import tenacity

from beliefs.models import utcnow
from beliefs.thread import StoreThread
from extractor.apply import land
from extractor.breaker import CircuitBreaker
from extractor.errors import ExtractionOutputInvalid
from extractor.jobs import Job, JobQueue
from extractor.known import touched_beliefs
from extractor.llm import ChatModel, LiteLLMChatModel, complete_structured
from extractor.merge import visible_scopes
from extractor.prompts import build_messages
from extractor.redact import redact
from extractor.schema import ExtractionOutput
from extractor.turn import Turn

log = logging.getLogger("tenure.extractor")


class ExtractionSettings(Protocol):
    """The settings the workers read (the gateway's `Settings` satisfies it)."""

    @property
    def upstream_url(self) -> str: ...
    @property
    def upstream_api_key(self) -> str | None: ...
    @property
    def extract_model(self) -> str | None: ...
    @property
    def extract_api_base(self) -> str | None: ...
    @property
    def extract_api_key(self) -> str | None: ...
    @property
    def extract_workers(self) -> int: ...
    @property
    def extract_max_attempts(self) -> int: ...
    @property
    def extract_timeout(self) -> float: ...
    @property
    def extract_backoff_s(self) -> float: ...
    @property
    def extract_backoff_max_s(self) -> float: ...
    @property
    def breaker_threshold(self) -> int: ...
    @property
    def breaker_cooldown_s(self) -> float: ...


def model_for(settings: ExtractionSettings, turn: Turn) -> str:
    """TENURE_EXTRACT_MODEL, else the turn's own model at the upstream (OpenAI protocol)."""
    return settings.extract_model or f"openai/{turn.model}"


def chat_model_for(settings: ExtractionSettings) -> LiteLLMChatModel:
    """The real model: TENURE_EXTRACT_API_BASE/KEY, else the upstream's URL and key."""
    own = settings.extract_model is None
    return LiteLLMChatModel(
        api_base=settings.extract_api_base or (settings.upstream_url if own else None),
        api_key=settings.extract_api_key or (settings.upstream_api_key if own else None),
        timeout=settings.extract_timeout,
    )


class ExtractionWorkers:
    """`extract_workers` tasks draining the queue; started and stopped by the app lifespan."""

    def __init__(
        self,
        store_thread: StoreThread,
        queue: JobQueue,
        llm: ChatModel | None,
        settings: ExtractionSettings,
        *,
        breaker: CircuitBreaker | None = None,
        poll_s: float = 0.5,
    ) -> None:
        self.thread = store_thread
        self.queue = queue
        self._own_llm: LiteLLMChatModel | None = None
        if llm is None:  # the real model: ours to close
            llm = self._own_llm = chat_model_for(settings)
        self.llm: ChatModel = llm
        self.settings = settings
        self.breaker = breaker or CircuitBreaker(
            settings.breaker_threshold, settings.breaker_cooldown_s
        )
        self.poll_s = poll_s
        self._backoff = tenacity.wait_exponential(
            multiplier=settings.extract_backoff_s, max=settings.extract_backoff_max_s
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._wake: asyncio.Event | None = None
        self._unlisten: Callable[[], None] | None = None
        self._stopping = False
        self.processed = 0

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        wake = self._wake = asyncio.Event()
        self._stopping = False

        def wake_up() -> None:
            loop.call_soon_threadsafe(wake.set)

        self._unlisten = self.queue.on_enqueue(wake_up)
        self._tasks = [
            asyncio.create_task(self._loop(), name=f"tenure-extractor-{n}")
            for n in range(self.settings.extract_workers)
        ]

    async def stop(self) -> None:
        """Cancel the workers; a job cut off mid-call goes back to pending, nothing half-written."""
        self._stopping = True
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        # Runs after any store call still in flight (the store thread is FIFO), so a claim that
        # finished after its caller was cancelled is handed back too.
        await self.thread.run(self.queue.release_claimed)
        if self._own_llm is not None:
            await self._own_llm.aclose()

    def breaker_state(self) -> dict[str, Any]:
        return {**self.breaker.state(), "workers": len(self._tasks)}

    async def run_once(self) -> bool:
        """Claim and process one due job; False when there was none (or the breaker is open)."""
        if self.breaker.retry_in() > 0:
            return False  # jobs wait, they do not fail, while the model is cooling down
        job = await self.thread.run(self.queue.claim)
        if job is None:
            return False
        if not self.breaker.allow():  # another worker holds the half-open probe
            await self.thread.run(self.queue.release, job.id)
            return False
        try:
            await self._process(job)
        except asyncio.CancelledError:
            raise  # stop() hands the job back
        except Exception as exc:
            await self._retry_or_park(job, _describe(exc), None)
            raise
        self.processed += 1
        return True

    async def drain(self) -> int:
        """Process due jobs until none is left; returns how many (tests and benchmarks)."""
        n = 0
        while await self.run_once():
            n += 1
        return n

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                worked = await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # background work never dies; the failure is logged
                log.exception("extraction worker error")
                worked = False
            if not worked:
                await self._idle()

    async def _idle(self) -> None:
        timeout = self.poll_s
        wait = self.breaker.retry_in()
        if wait > 0:
            timeout = min(max(wait, 0.01), 5.0)
        assert self._wake is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()

    async def _process(self, job: Job) -> None:
        turn = job.turn
        model = model_for(self.settings, turn)
        touched = await self.thread.run(touched_beliefs, self.queue.store, turn)
        messages = build_messages(turn, touched, visible_scopes(turn))
        try:
            result = await asyncio.wait_for(
                complete_structured(self.llm, messages, ExtractionOutput, model=model),
                self.settings.extract_timeout,
            )
        except ExtractionOutputInvalid as exc:
            self.breaker.record_success()  # the model answered; the answer was unusable
            log.warning("job %s: %s", job.id, exc.message)
            await self.thread.run(self.queue.fail, job.id, exc.message, exc.raw_output, None)
            return
        except Exception as exc:
            error = _describe(exc)
            self.breaker.record_failure(error)
            await self._retry_or_park(job, error, None)
            return
        self.breaker.record_success()
        try:
            await self.thread.run(
                land, self.queue.store, self.queue, job, result.value, model=model, now=utcnow()
            )
        except Exception as exc:  # the transaction rolled back: nothing of this job was written
            log.exception("job %s: could not write its beliefs", job.id)
            await self._retry_or_park(job, _describe(exc), result.raw_output)

    async def _retry_or_park(self, job: Job, error: str, raw_output: str | None) -> None:
        retry_at = self.retry_at(job.attempts)
        log.warning(
            "job %s attempt %d failed: %s (%s)",
            job.id,
            job.attempts,
            error,
            f"retry at {retry_at.isoformat()}" if retry_at else "parked as failed",
        )
        await self.thread.run(self.queue.fail, job.id, error, raw_output, retry_at)

    def retry_at(self, attempts: int, now: datetime | None = None) -> datetime | None:
        """When the next attempt may run (exponential backoff), or None once attempts run out."""
        if attempts >= self.settings.extract_max_attempts:
            return None
        state = tenacity.RetryCallState(tenacity.Retrying(), None, (), {})
        state.attempt_number = max(1, attempts)
        return (now or utcnow()) + timedelta(seconds=self._backoff(state))


def _describe(exc: BaseException) -> str:
    text = str(exc) or "no detail"
    if isinstance(exc, TimeoutError):
        text = "the extraction model did not answer in time"
    return redact(f"{type(exc).__name__}: {text}")[:2000]
