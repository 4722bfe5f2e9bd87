"""Extraction workers: drain the job table, call the model, land each job in one transaction."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import tenacity

from beliefs.model.models import Belief, utcnow
from beliefs.store.connection import store_refused
from beliefs.store.thread import StoreThread
from extractor.apply import Landing, land_many
from extractor.batching import batch_note, conversation_batches
from extractor.breaker import CircuitBreaker, counts_as_outage
from extractor.canary import Canaries
from extractor.config import ExtractionConfig
from extractor.errors import ExtractionOutputInvalid, ExtractorError, ModelMisconfigured
from extractor.jobs import Job, JobQueue
from extractor.known import pointed_beliefs, touched_beliefs
from extractor.lease import LeaseKeeper
from extractor.llm import ChatModel
from extractor.merge import visible_scopes
from extractor.outcome import JobReport, Outcome, bounded, describe, named
from extractor.precheck import SKIPPED, nothing_to_remember
from extractor.prompts import build_batch_messages, build_messages
from extractor.redact import redact
from extractor.schema import ExtractionOutput
from extractor.structured import Structured, complete_structured

log = logging.getLogger("tenure.extractor")

_RATE_WINDOW_S = 5.0


class ExtractionWorkers:
    """Up to `extract_workers` extraction calls at once; finished jobs land in shared commits.

    Started and stopped by the app lifespan. Jobs wait (they are not claimed) while the
    circuit breaker is open; failed calls retry with exponential backoff, then park as failed.
    """

    def __init__(
        self,
        store_thread: StoreThread,
        queue: JobQueue,
        llm: ChatModel,
        config: ExtractionConfig,
        *,
        breaker: CircuitBreaker | None = None,
        poll_s: float = 0.5,
        busy: Callable[[], bool] | None = None,
        max_defer_s: float = 5.0,
        observe: Callable[[JobReport], None] | None = None,
        min_rate: float = 0.0,
        backlog_max: int = 0,
    ) -> None:
        self.thread = store_thread
        self.queue = queue
        self.llm = llm  # the shared client: its owner closes it
        self.config = config
        self.concurrency = max(1, config.workers)
        self.breaker = breaker or CircuitBreaker(
            config.breaker_threshold, config.breaker_cooldown_s
        )
        self.poll_s = poll_s
        self._backoff = tenacity.wait_exponential(
            multiplier=config.backoff_s, max=config.backoff_max_s
        )
        self._observe = observe
        # Each claimed job's lease is renewed from its claim until its result is written.
        self._leases = LeaseKeeper(store_thread, queue)
        self._task: asyncio.Task[None] | None = None
        self._calls: set[asyncio.Task[list[Outcome]]] = set()
        self._store_away = False  # the last round failed because the store was away
        self._wake: asyncio.Event | None = None
        self._unlisten: Callable[[], None] | None = None
        self._stopping = False
        self.processed = 0
        # Extraction is background work: while `busy()` says live requests are being answered,
        # new jobs wait (at most `max_defer_s` at a time, so a steady load never starves them).
        self._busy = busy
        self._max_defer_s = max_defer_s
        self.deferrals = 0
        # The floor: yielding stops while fewer than `min_rate` jobs a second were handled over
        # the last `_RATE_WINDOW_S` (a steady load then still sees its turns extracted).
        self._min_rate = min_rate
        self._handled: collections.deque[float] = collections.deque()
        # The bound: beyond `backlog_max` pending jobs the oldest are parked (checked each
        # second off the request path); 0 = unbounded.
        self._backlog_max = backlog_max
        self._bounded_at = 0.0
        # The last configuration fact the model's server reported (a rejected key, a context
        # too small): memory cannot form until a setting changes; cleared by a good call.
        self.config_fault: str | None = None
        self._canaries = Canaries(llm)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        wake = self._wake = asyncio.Event()
        self._stopping = False

        def wake_up() -> None:
            loop.call_soon_threadsafe(wake.set)

        self._unlisten = self.queue.on_enqueue(wake_up)
        self._leases.start()
        self._task = asyncio.create_task(self._loop(), name="tenure-extractor")

    async def stop(self) -> None:
        """Cancel the calls in flight; their jobs go back to pending, nothing half-written."""
        self._stopping = True
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        tasks = [*([self._task] if self._task else []), *self._calls]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._task = None
        self._calls.clear()
        self._leases.stop()  # first: a store that is away must not leave it renewing
        # Runs after any store call still in flight (the store thread is FIFO), so a claim that
        # finished after its caller was cancelled is handed back too.
        await self.thread.run(self.queue.release_claimed)

    def breaker_state(self) -> dict[str, Any]:
        running = self._task is not None and not self._task.done()
        return {
            **self.breaker.state(),
            "workers": self.concurrency if running else 0,
            "in_flight": len(self._calls),
            "waiting_for_store": self._store_away,
            "models": self.llm.modes.snapshot(),
            "config_fault": self.config_fault,
        }

    async def run_once(self) -> int:
        """One round: claim what the slots allow, call the model, land; returns jobs handled."""
        own = not self._leases.running  # a round outside the started loop keeps its own
        self._leases.start()
        try:
            batches = await self._claim(self.concurrency)
            if not batches:
                return 0
            outcomes = await asyncio.gather(*(self._extract_batch(batch) for batch in batches))
            await self._settle([o for batch in outcomes for o in batch])
            return sum(len(batch) for batch in batches)
        finally:
            if own:
                self._leases.stop()

    async def drain(self) -> int:
        """Rounds until no job is due; returns how many were handled (tests and benchmarks)."""
        total = 0
        while n := await self.run_once():
            total += n
        return total

    async def _loop(self) -> None:
        calls = self._calls
        while not self._stopping:
            try:
                room = self.concurrency - len(calls)
                if room > 0 and not calls:
                    await self._yield_to_requests()
                if room > 0:
                    for batch in await self._claim(room):
                        calls.add(asyncio.create_task(self._extract_batch(batch)))
                if not calls:
                    await self._idle()
                    continue
                done, _ = await asyncio.wait(
                    calls, timeout=self.poll_s, return_when=asyncio.FIRST_COMPLETED
                )
                calls.difference_update(done)
                if done:
                    await self._settle([o for task in done for o in task.result()])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # background work never dies; the failure is logged
                self._failed(exc)
                await asyncio.sleep(self.poll_s)
            else:
                self._store_away = False

    def _failed(self, exc: Exception) -> None:
        """A bug is logged with its traceback; the store being away (PostgreSQL restarting)
        is said once, and the jobs wait where they are until it is back."""
        if not store_refused(exc):
            log.exception("extraction worker error")
        elif not self._store_away:
            log.warning("extraction waits: the store does not take work (%s)", exc)
        self._store_away = store_refused(exc)

    async def _yield_to_requests(self) -> None:
        """Wait while live requests are in flight, for at most `max_defer_s`."""
        if self._busy is None or not self._busy():
            return
        if self._below_floor():
            return
        self.deferrals += 1
        deadline = time.monotonic() + self._max_defer_s
        while self._busy() and time.monotonic() < deadline and not self._stopping:
            if self._below_floor():
                return
            await asyncio.sleep(0.02)

    def _below_floor(self) -> bool:
        if self._min_rate <= 0:
            return False
        cutoff = time.monotonic() - _RATE_WINDOW_S
        handled = self._handled
        while handled and handled[0] < cutoff:
            handled.popleft()
        return len(handled) < self._min_rate * _RATE_WINDOW_S

    async def _idle(self) -> None:
        timeout = self.poll_s
        wait = self.breaker.retry_in()
        if wait > 0:
            timeout = min(max(wait, 0.01), 5.0)
        assert self._wake is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()

    async def _claim(self, room: int) -> list[list[Job]]:
        """Up to `room` batches of claimed jobs: one job each, unless a backlog built up."""
        if self._backlog_max > 0 and time.monotonic() - self._bounded_at >= 1.0:
            self._bounded_at = time.monotonic()
            await self.thread.run(self.queue.shed_over, self._backlog_max)
        if self.breaker.retry_in() > 0:
            return []  # jobs wait, they do not fail, while the model is cooling down
        turns = 1
        if self.config.batch_turns > 1:
            pending, _ = await self.thread.run(self.queue.backlog)
            if pending > room:  # more waiting than free slots: a conversation may share a call
                turns = self.config.batch_turns
        jobs = await self.thread.run(self.queue.claim_many, room * turns)
        batches = conversation_batches(jobs, self.config, room, turns=turns)
        kept = [batch for batch in batches if self.breaker.allow()]  # half-open: one probe only
        taken = {job.id for batch in kept for job in batch}
        for job in jobs:
            if job.id not in taken:
                await self.thread.run(self.queue.release, job.id)
        return kept

    async def _extract_batch(self, jobs: list[Job]) -> list[Outcome]:
        """One call for the batch's turns; if it fails, each job is asked alone."""
        asked = [job for job in jobs if nothing_to_remember(job.turn) is None]
        if len(asked) < 2:
            return [await self._extract(job) for job in jobs]
        skipped = [await self._extract(job) for job in jobs if job not in asked]
        try:
            return [*skipped, await self._extract_together(asked)]
        except Exception as exc:
            log.warning(
                "a call for %d turns of one conversation failed; each is asked alone: %s",
                len(asked),
                describe(exc),
            )
        alone = []
        for job in asked:
            if self.breaker.retry_in() > 0:  # the provider is down: retried later, not lost
                error = "the model is cooling down after failures; retried one by one"
                alone.append(Outcome(job, self.config.model_for(job.turn), error=error))
            else:
                alone.append(await self._extract(job))
        return [*skipped, *alone]

    async def _extract_together(self, jobs: list[Job]) -> Outcome:
        """The turns in one call, oldest first; the newest job lands the answer for all."""
        lead = jobs[-1]
        model = self.config.model_for(lead.turn)
        touched: dict[str, Belief] = {}
        for job in jobs:
            for belief in await self.thread.run(touched_beliefs, self.queue.store, job.turn):
                touched.setdefault(belief.id, belief)
        turns = [job.turn for job in jobs]
        messages = build_batch_messages(turns, list(touched.values()), visible_scopes(lead.turn))
        await self._ask_canary(model)
        started = time.monotonic()
        try:
            result = await complete_structured(
                self.llm, messages, ExtractionOutput, model=model, options=self.config.call
            )
        except Exception as exc:
            if counts_as_outage(exc):
                self.breaker.record_failure(describe(exc))
            raise
        self.breaker.record_success()
        self.config_fault = None
        # The merge sees the batch as one turn that said all of it: the newest turn, with
        # every belief the older ones were shown.
        shown = list(dict.fromkeys(i for turn in turns for i in turn.injected_ids))
        merged = lead.model_copy(
            update={"turn": lead.turn.model_copy(update={"injected_ids": shown})}
        )
        return self._outcome(
            merged,
            model,
            started,
            output=result.value,
            raw_output=result.raw_output,
            result=result,
            riders=tuple(jobs[:-1]),
        )

    async def _extract(self, job: Job) -> Outcome:
        turn = job.turn
        model = self.config.model_for(turn)
        skip = nothing_to_remember(turn)
        if skip is not None:  # settled without a call: nothing in it can become a belief
            note = f"{SKIPPED}: {skip}"
            return self._outcome(
                job, model, time.monotonic(), output=ExtractionOutput(), raw_output=note
            )
        try:
            touched = await self.thread.run(touched_beliefs, self.queue.store, turn)
        except Exception as exc:
            return Outcome(job, model, error=describe(exc))
        messages = build_messages(turn, touched, visible_scopes(turn))
        started = time.monotonic()
        try:
            # No limit on the whole call: the client ends a reply only when the model falls
            # silent, so a slow model that keeps writing finishes its job (its lease kept).
            await self._ask_canary(model)
            started = time.monotonic()  # the job's own time, not the canary's
            result = await complete_structured(
                self.llm, messages, ExtractionOutput, model=model, options=self.config.call
            )
        except ExtractionOutputInvalid as exc:
            # The model answered; the answer was unusable (invalid twice, cut off twice, or a
            # body that is no completion): park it now with the raw text, no breaker trip.
            self.breaker.record_success()
            return self._outcome(
                job, model, started, raw_output=exc.raw_output, error=named(exc), permanent=True
            )
        except ModelMisconfigured as exc:
            # A configuration fact about the model, not an outage: no retries, no trip.
            self.breaker.record_success()
            self._misconfigured(exc)
            return self._outcome(job, model, started, error=named(exc), permanent=True)
        except Exception as exc:
            error = named(exc) if isinstance(exc, ExtractorError) else describe(exc)
            if counts_as_outage(exc):
                self.breaker.record_failure(error)
            else:
                self.breaker.record_success()  # a slow model is up: as a probe it closes it
            # Retried with backoff; a reply cut off by silence keeps what arrived.
            raw = getattr(exc, "raw_output", None)
            return self._outcome(job, model, started, error=error, raw_output=raw)
        self.breaker.record_success()
        self.config_fault = None
        result = await self._look_again(job, touched, result, model)
        return self._outcome(
            job, model, started, output=result.value, raw_output=result.raw_output, result=result
        )

    def _misconfigured(self, exc: ModelMisconfigured) -> None:
        """Say a configuration fault at once, and once, rather than at each job it parks."""
        fault = redact(exc.message)
        if fault != self.config_fault:
            log.error("extraction cannot work as configured; memory will not form: %s", fault)
        self.config_fault = fault

    async def _ask_canary(self, model: str) -> None:
        if self.config.canary:
            await self._canaries.ask_once(model, self.config.call)

    async def _look_again(
        self, job: Job, touched: list[Belief], first: Structured[ExtractionOutput], model: str
    ) -> Structured[ExtractionOutput]:
        """Ask once more when what the model proposed points at live beliefs it was not shown
        (same name or subject): a correction that never named the old belief then updates it
        instead of opening a conflict beside it. Any failure lands the first answer."""
        turn = job.turn
        try:
            shown = {b.id for b in touched}
            store = self.queue.store
            missed = await self.thread.run(pointed_beliefs, store, turn, first.value, shown)
            if not missed:
                return first
            messages = build_messages(turn, [*touched, *missed], visible_scopes(turn))
            # the call's own silence limit bounds it, as for the first look
            again = await complete_structured(
                self.llm, messages, ExtractionOutput, model=model, options=self.config.call
            )
        except Exception as exc:
            log.warning("job %s: the second look failed, the first answer lands: %s", job.id, exc)
            return first
        return dataclasses.replace(
            again,
            calls=first.calls + again.calls,
            prompt_tokens=first.prompt_tokens + again.prompt_tokens,
            completion_tokens=first.completion_tokens + again.completion_tokens,
        )

    def _outcome(
        self,
        job: Job,
        model: str,
        started: float,
        *,
        result: Structured[ExtractionOutput] | None = None,
        **fields: Any,
    ) -> Outcome:
        report = JobReport(
            job_id=job.id,
            model=model,
            seconds=time.monotonic() - started,
            mode=result.mode if result else "skipped" if fields.get("output") is not None else None,
            calls=result.calls if result else 0,
            prompt_tokens=result.prompt_tokens if result else 0,
            completion_tokens=result.completion_tokens if result else 0,
            error=str(fields.get("error", "")),
            cached_tokens=result.cached_tokens if result else 0,
        )
        if self._observe is not None:
            self._observe(report)
        raw = fields.pop("raw_output", None)
        if isinstance(raw, str):
            raw = bounded(raw, self.config.raw_output_chars)
        return Outcome(job, model, raw_output=raw, report=report, **fields)

    async def _settle(self, outcomes: list[Outcome]) -> None:
        await self.thread.run(self._settle_on_store, outcomes)
        jobs = sum(1 + len(o.riders) for o in outcomes)
        self.processed += jobs
        now = time.monotonic()
        self._handled.extend(now for _ in range(jobs))

    def _settle_on_store(self, outcomes: list[Outcome]) -> None:
        store, now = self.queue.store, utcnow()
        landings = [
            Landing(o.job, o.output, o.model, o.riders, self.config.always_write_confirm)
            for o in outcomes
            if o.output is not None
        ]
        failures = [o for o in outcomes if o.output is None]
        raw = {o.job.id: o.raw_output for o in outcomes}
        landed: dict[str, str] = {}
        suspect: dict[str, str] = {}
        for landing, result in zip(
            landings, land_many(store, self.queue, landings, now=now), strict=True
        ):
            if isinstance(result, Exception):  # rolled back: nothing of this job was written
                log.error("job %s: could not write its beliefs: %s", landing.job.id, result)
                for job in (landing.job, *landing.riders):
                    failures.append(Outcome(job, landing.model, error=describe(result)))
                continue
            if raw.get(landing.job.id):
                landed[landing.job.id] = raw[landing.job.id] or ""
            for rider in landing.riders:
                landed[rider.id] = batch_note(landing.job.id, len(landing.riders) + 1)
            unfit = self.llm.modes.unfit(landing.model)
            asked = not (raw.get(landing.job.id) or "").startswith(SKIPPED)
            if unfit and asked and not result.written_ids:
                suspect[landing.job.id] = (
                    f"wrote nothing; model {landing.model} failed the canary: {unfit}"
                )
        try:  # done jobs keep the reply too, so the job page shows what the model said
            self.queue.keep_raw_output(landed)
            self.queue.mark_suspect(suspect)
        except Exception:
            log.exception("could not keep the raw output of %d done jobs", len(landed))
        if not failures:
            return
        with store.transaction():
            for o in failures:
                retry_at = None if o.permanent else self.retry_at(o.job.attempts, now)
                log.warning(
                    "job %s attempt %d failed: %s (%s)",
                    o.job.id,
                    o.job.attempts,
                    o.error,
                    f"retry at {retry_at.isoformat()}" if retry_at else "parked as failed",
                )
                self.queue.fail(o.job.id, o.error, o.raw_output or raw.get(o.job.id), retry_at)

    def retry_at(self, attempts: int, now: datetime | None = None) -> datetime | None:
        """When the next attempt may run (exponential backoff), or None once attempts run out."""
        if attempts >= self.config.max_attempts:
            return None
        state = tenacity.RetryCallState(tenacity.Retrying(), None, (), {})
        state.attempt_number = max(1, attempts)
        return (now or utcnow()) + timedelta(seconds=self._backoff(state))
