"""A compaction run: upkeep, then per scope and cluster the deterministic and model passes.

Runs never overlap. Each cluster is planned, then written in its own transaction: a cluster
whose model answer is invalid, or whose writing fails, changes nothing and the rest goes on.
A dry run plans exactly the same way and writes nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from beliefs.model.models import Belief, utcnow
from beliefs.search.matcher import search
from beliefs.store.thread import StoreThread
from beliefs.text.query import parse_query
from compaction import snapshot as snap
from compaction.aliases import names_of, re_explained
from compaction.apply import apply_cluster, apply_upkeep
from compaction.clusters import chunks, clusters, examinable, partitions
from compaction.errors import CompactionBusy
from compaction.merge import upkeep
from compaction.migrations import MIGRATIONS
from compaction.model import ChatModel, ask
from compaction.persona_keeper import PersonaKeeper
from compaction.plan import ClusterPlan, Upkeep
from compaction.prompts import ClusterReview, build_messages
from compaction.review import add_aliases, apply_review, plan_duplicates
from compaction.runs import RunReport, RunStatus, Trigger, finish_run, start_run
from compaction.turns import RecentTurn, latest_model

log = logging.getLogger("tenure.compaction")

LOOKBACK = timedelta(days=7)


@dataclass(frozen=True)
class CompactionConfig:
    """The knobs a run reads (the server builds it from its settings)."""

    grace: timedelta = timedelta(hours=24)
    cooldown_s: float = 600.0
    model: str | None = None  # None: the model of the user's latest turn, if any


class Compactor:
    """Runs compaction over the store behind `thread`; one run at a time."""

    def __init__(
        self,
        thread: StoreThread,
        *,
        llm: ChatModel | None = None,
        config: CompactionConfig | None = None,
        persona: PersonaKeeper | None = None,
    ) -> None:
        thread.store.ensure_schema(MIGRATIONS)
        self._thread = thread
        self._store = thread.store
        self._llm = llm
        self._config = config or CompactionConfig()
        self._persona = persona
        self._lock = asyncio.Lock()

    @property
    def running(self) -> bool:
        return self._lock.locked()

    async def run(
        self,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        dry_run: bool = False,
        force: bool = False,
        trigger: Trigger = "manual",
    ) -> RunReport:
        """One run; the report lists every change made (or, dry, every change planned).

        Raises:
            CompactionBusy: a run is in progress.
        """
        if self._lock.locked():
            raise CompactionBusy("a compaction run is already in progress; try again shortly")
        async with self._lock:
            # Replicas on one PostgreSQL database take turns (an advisory lock).
            if not await self._thread.run(self._store.try_lock, "tenure.compaction"):
                raise CompactionBusy(
                    "a compaction run is in progress on another replica; try again shortly"
                )
            try:
                return await self._locked_run(user_id, scope, dry_run, force, trigger)
            finally:
                await self._thread.run(self._store.unlock, "tenure.compaction")

    async def _locked_run(
        self,
        user_id: str | None,
        scope: str | None,
        dry_run: bool,
        force: bool,
        trigger: Trigger,
    ) -> RunReport:
        report = RunReport(trigger=trigger, dry_run=dry_run, user_id=user_id, scope=scope)
        started = time.perf_counter()
        if not dry_run:
            await self._thread.run(start_run, self._store, report)
        status: RunStatus = "done"
        try:
            for user in await self._thread.run(snap.users, self._store, user_id):
                try:
                    await self._user(user, scope, report, dry_run=dry_run, force=force)
                except Exception as exc:
                    log.exception("compaction of user %s failed", user)
                    report.errors.append(f"user {user}: {type(exc).__name__}: {exc}")
        except BaseException:
            status = "interrupted"  # cancelled (shutdown) or interrupted: what ran stays
            raise
        finally:
            report.finished_at = utcnow()
            report.duration_ms = round((time.perf_counter() - started) * 1000, 1)
            if status == "done" and report.errors and not report.changes:
                status = "failed"
            report.status = status
            if not dry_run:
                try:
                    await self._thread.run(finish_run, self._store, report)
                except Exception:
                    log.exception("could not record compaction run %s", report.id)
        return report

    async def _user(
        self, user_id: str, scope: str | None, report: RunReport, *, dry_run: bool, force: bool
    ) -> None:
        now = utcnow()
        data = await self._thread.run(snap.load, self._store, user_id, turns_since=now - LOOKBACK)
        items = upkeep([*data.live, *data.deleted], now=now, grace=self._config.grace)
        if scope is not None:
            scoped = {b.id for b in [*data.live, *data.deleted] if scope in b.scope}
            items = [i for i in items if i.belief_id in scoped]
        await self._upkeep(items, report, dry_run=dry_run)
        live = await self._live_after(data.live, items, dry_run=dry_run, user_id=user_id, now=now)
        model = self._config.model
        if model is None and self._llm is not None:
            turn_model = await self._thread.run(latest_model, self._store, user_id)
            model = f"openai/{turn_model}" if turn_model else None
        taken = names_of(b for b in live if b.is_live)
        for (_, key), beliefs in partitions(b for b in live if examinable(b, now)).items():
            if scope is not None and scope not in beliefs[0].scope:
                continue
            scopes = set(beliefs[0].scope)
            heard = [t for t in data.turns if t.applies_to(scopes)]
            last_heard = max((t.created_at for t in heard), default=None)
            fingerprint = snap.fingerprint(beliefs, last_heard)
            state = data.scope_states.get(key)
            if not force and state is not None and self._quiet(state, fingerprint, report, now):
                report.skipped_scopes += 1
                continue
            since = None if force or state is None else state.examined_at
            turns = [t for t in heard if since is None or t.created_at > since]
            report.examined += len(beliefs)
            ok = True
            for cluster in clusters(beliefs):
                report.clusters += 1
                plan = ClusterPlan(user_id, key, cluster)
                # A cluster unchanged since it was last reviewed, and not talked about since,
                # is not put to the model again.
                fresh = since is None or any(b.updated_at > since for b in cluster)
                ok &= await self._cluster(
                    plan,
                    turns,
                    taken,
                    data.conflict_pairs,
                    model,
                    report,
                    dry_run=dry_run,
                    now=now,
                    fresh=fresh,
                )
            if ok and not dry_run:
                await self._thread.run(self._save_state, user_id, key, last_heard)
        if not dry_run and self._persona is not None:
            await self._persona.refresh(user_id, use_model=True, model=model)

    def _quiet(
        self, state: snap.ScopeState, fingerprint: str, report: RunReport, now: datetime
    ) -> bool:
        if state.fingerprint == fingerprint:
            return True
        cooling = (now - state.examined_at).total_seconds() < self._config.cooldown_s
        return report.trigger == "scheduled" and cooling

    def _save_state(self, user_id: str, key: str, latest_turn: datetime | None) -> None:
        now = utcnow()
        fp = snap.current_fingerprint(self._store, user_id, key, latest_turn, now)
        snap.save_state(self._store, user_id, key, fp, now)

    async def _upkeep(self, items: list[Upkeep], report: RunReport, *, dry_run: bool) -> None:
        for item in items:
            if dry_run:
                report.count(item.describe())
                continue
            try:
                if await self._thread.run(apply_upkeep, self._store, item):
                    report.count(item.describe())
            except Exception as exc:
                report.errors.append(f"{item.action} {item.belief_id}: {exc}")

    async def _live_after(
        self,
        live: list[Belief],
        items: list[Upkeep],
        *,
        dry_run: bool,
        user_id: str,
        now: datetime,
    ) -> list[Belief]:
        """The live beliefs once upkeep is done: re-read, or for a dry run, simulated."""
        if not dry_run:
            return await self._thread.run(self._store.list, user_id=user_id, with_history=True)
        expired = {i.belief_id for i in items if i.action == "expire"}
        promoted = {i.belief_id for i in items if i.action == "promote"}
        return [
            b.model_copy(update={"epistemic_status": "active"}) if b.id in promoted else b
            for b in live
            if b.id not in expired
        ]

    async def _cluster(
        self,
        plan: ClusterPlan,
        turns: list[RecentTurn],
        taken: dict[str, set[str]],
        conflict_pairs: frozenset[frozenset[str]],
        model: str | None,
        report: RunReport,
        *,
        dry_run: bool,
        now: datetime,
        fresh: bool = True,
    ) -> bool:
        """Plan and (unless dry) write one cluster; False if it failed and was left as it was."""
        plan_duplicates(plan, now=now)
        messages = self._mentions(plan.user_id, plan.beliefs, turns)
        for addition in re_explained(messages, plan.beliefs, taken):
            add_aliases(
                plan, addition.belief_id, addition.aliases, "re-explained", addition.evidence, taken
            )
        if self._llm is not None and model and ((fresh and len(plan.beliefs) > 1) or messages):
            for part in chunks(plan.beliefs):
                said = (
                    self._mentions(plan.user_id, part, turns)
                    if len(part) < len(plan.beliefs)
                    else messages
                )
                if len(part) < 2 and not said:
                    continue
                try:
                    review = await ask(
                        self._llm,
                        build_messages(part, said),
                        ClusterReview,
                        model=model,
                        name="cluster_review",
                    )
                except Exception as exc:
                    report.errors.append(f"cluster {', '.join(plan.ids)}: model: {exc}")
                    return False
                apply_review(plan, review, messages=said, taken=taken, now=now)
        plan.contradictions = [
            c
            for c in plan.contradictions
            if frozenset((c.existing_id, c.other_id)) not in conflict_pairs
        ]
        if plan.empty:
            return True
        if not dry_run:
            try:
                await self._thread.run(apply_cluster, self._store, plan)
            except Exception as exc:
                report.errors.append(f"cluster {', '.join(plan.ids)}: {type(exc).__name__}: {exc}")
                return False
        for change in plan.changes():
            report.count(change)
        return True

    def _mentions(self, user_id: str, beliefs: list[Belief], turns: list[RecentTurn]) -> list[str]:
        """User messages of turns whose text finds one of `beliefs` (as retrieval would)."""
        ids = {b.id for b in beliefs}
        out: list[str] = []
        for turn in turns:
            text = f"{turn.user_message}\n{turn.assistant_message}"
            hits = search(
                self._store.index,
                user_id,
                parse_query(text),
                lambda b: b.id in ids,
                limit=1,
            )
            if hits and turn.user_message.strip() and turn.user_message not in out:
                out.append(turn.user_message)
        return out
