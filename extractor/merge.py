"""The merge policy as pure functions: validated output + the live beliefs it names -> a Plan."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast, get_args

from pydantic import BaseModel, ValidationError

from beliefs.model.models import (
    Belief,
    MemoryClass,
    dedupe_names,
    normalize_canonical_name,
    same_content,
)
from extractor.plan import (
    ConflictDraft,
    Enrichment,
    Plan,
    Reinforcement,
    Resolution,
    Supersession,
)
from extractor.redact import REDACTED, redact, redact_record
from extractor.replacement import fitting_directive, inherit
from extractor.schema import (
    BeliefUpdate,
    EntityUpdate,
    ExtractionOutput,
    NewBelief,
    OpenQuestionResolution,
    Skipped,
)
from extractor.turn import Turn

MIN_CONFIDENCE = 0.35
PROMOTE_AFTER_REINFORCEMENTS = 5
PROMOTE_AFTER = timedelta(hours=48)
MAX_ALIAS_WORDS = 4
MAX_ALIAS_CHARS = 60
UNIVERSAL = "user:universal"
_MEMORY_CLASSES = frozenset(get_args(MemoryClass))


def visible_scopes(turn: Turn) -> list[str]:
    """The scopes a turn may read and write: its own plus `user:universal`."""
    return dedupe_names([*(s.strip().lower() for s in turn.scopes), UNIVERSAL])


def referenced(output: ExtractionOutput) -> tuple[set[str], set[str]]:
    """Ids and canonical names the output refers to: what the caller must load from the store."""
    ids: set[str] = set()
    names: set[str] = set()

    def add_name(raw: str | None) -> None:
        if raw:
            with contextlib.suppress(ValueError):
                names.add(normalize_canonical_name(raw))

    for nb in output.new_beliefs:
        add_name(nb.canonical_name)
        if nb.resolves_open_question:
            ids.add(nb.resolves_open_question)
            add_name(nb.resolves_open_question)
    for up in output.belief_updates:
        if up.belief_id:
            ids.add(up.belief_id)
        add_name(up.canonical_name)
        add_name(up.new_canonical_name)
    for eu in output.entity_updates:
        add_name(eu.canonical_name)
    for resolution in output.resolved_open_questions:
        ids.add(resolution.id)
    return ids, names


_Item = TypeVar("_Item", bound=BaseModel)


def as_one_record(item: _Item) -> _Item:
    """`item` with its secrets redacted over all its fields at once: a secret recognised in
    its content is masked in its reason, names and aliases too."""
    return item.model_copy(update=redact_record(item.model_dump()))


def clean_names(names: Iterable[str]) -> list[str]:
    """Redacted, short (1-4 words) names; anything that held a secret is dropped."""
    out = []
    for raw in names:
        name = " ".join(redact(str(raw)).split())
        if not name or REDACTED in name or len(name) > MAX_ALIAS_CHARS:
            continue
        if len(name.split()) <= MAX_ALIAS_WORDS:
            out.append(name)
    return dedupe_names(out)


def should_promote(belief: Belief, now: datetime) -> bool:
    """Inferred becomes active once reinforced 5 times over at least 48 hours."""
    return (
        belief.epistemic_status == "inferred"
        and belief.reinforcement_count + 1 >= PROMOTE_AFTER_REINFORCEMENTS
        and now - belief.created_at >= PROMOTE_AFTER
    )


def plan_merge(
    output: ExtractionOutput,
    turn: Turn,
    known: Sequence[Belief],
    *,
    model: str,
    now: datetime,
    job_id: str | None = None,
) -> Plan:
    """Decide every write of one extraction; `known` = live beliefs touched or named."""
    merger = _Merger(turn, known, model=model, now=now, job_id=job_id)
    merger.plan.skipped.extend(output.skipped)
    for n, up in enumerate(output.belief_updates):
        merger.update(n, up)
    for n, nb in enumerate(output.new_beliefs):
        merger.new(n, nb)
    for n, eu in enumerate(output.entity_updates):
        merger.entity(n, eu)
    for resolution in output.resolved_open_questions:
        merger.resolve_quoted(resolution)
    return merger.finish()


@dataclass
class _Reinforce:
    aliases: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    promote: bool = False


class _Merger:
    def __init__(
        self,
        turn: Turn,
        known: Sequence[Belief],
        *,
        model: str,
        now: datetime,
        job_id: str | None,
    ) -> None:
        self.turn = turn
        self.now = now
        self.scopes = visible_scopes(turn)
        self.provenance: dict[str, Any] = {
            "request_id": turn.request_id,
            "model": model,
            "extracted_at": now.isoformat(),
        }
        if turn.agent_id:
            self.provenance["agent_id"] = turn.agent_id
        if job_id:
            self.provenance["job_id"] = job_id
        self.live: dict[str, Belief] = {
            b.id: b
            for b in known
            if b.user_id == turn.user_id and b.is_live and set(b.scope) & set(self.scopes)
        }
        self.planned: dict[str, Belief] = {}  # created or replacing in this turn, by id
        self.changed: set[str] = set()  # superseded or contested in this turn
        self.reinforce: dict[str, _Reinforce] = {}
        self.plan = Plan()

    # -- lookups -----------------------------------------------------------------------------

    def by_name(self, name: str | None, scopes: Sequence[str]) -> Belief | None:
        if not name:
            return None
        try:
            key = normalize_canonical_name(name)
        except ValueError:
            return None
        for belief in (*self.planned.values(), *self.live.values()):
            if belief.canonical_name == key and set(belief.scope) & set(scopes):
                return belief
        return None

    def target(self, belief_id: str | None, name: str | None) -> Belief | None:
        # Small models mangle ids: fall back to the canonical name.
        if belief_id:
            hit = self.planned.get(belief_id) or self.live.get(belief_id)
            if hit is not None:
                return hit
        return self.by_name(name, self.scopes)

    def skip(self, item: str, reason: str) -> None:
        self.plan.skipped.append(Skipped(item=item, reason=reason))

    # -- output items ------------------------------------------------------------------------

    def update(self, n: int, up: BeliefUpdate) -> None:
        label = f"belief_updates[{n}] {up.change} {up.canonical_name or up.belief_id!r}"
        target = self.target(up.belief_id, up.canonical_name)
        if target is None:
            self.skip(
                label,
                f"no live belief with id {up.belief_id!r} or canonical name "
                f"{up.canonical_name!r} in scopes {', '.join(self.scopes)}",
            )
            return
        if target.id in self.changed or target.id in self.planned:
            self.skip(label, f"belief {target.id} was already changed by this turn")
            return
        up = as_one_record(up)
        content = up.new_content.strip() if up.new_content else ""
        reason = up.reason or up.change
        unchanged = not content or same_content(content, target.content)
        if up.change == "reinforced" or (up.change == "enriched" and unchanged):
            self.add_reinforcement(target, [], [])
        elif up.change == "superseded" and not content:
            self.skip(label, "superseded needs new_content; nothing was changed")
        elif up.change == "superseded" and unchanged and not self._renamed(target, up):
            self.add_reinforcement(target, [], [])
        elif up.change == "contradicted" and not content:
            self.skip(label, "contradicted needs new_content saying what the turn claims")
        elif up.change == "contradicted" or target.user_edited:
            # An operator's correction is never overwritten by what a model inferred: review it.
            if up.change != "contradicted":
                reason = f"{reason} (belief {target.id} was edited by the operator)"
            self.contest(label, target, content, reason, up)
        elif up.change == "enriched":
            self.plan.enrichments.append(
                Enrichment(belief_id=target.id, content=content, reason=reason)
            )
        else:
            self.supersede(label, target, content, up, reason)

    def contest(
        self, label: str, target: Belief, content: str, reason: str, up: BeliefUpdate
    ) -> None:
        proposed = self.belief_from(target, content=content, name=None, up=up)
        if proposed is None:
            self.skip(label, "the proposed content is not a valid belief")
            return
        self.changed.add(target.id)
        self.plan.conflicts.append(
            ConflictDraft(existing_id=target.id, proposed=proposed, reason=reason)
        )

    def _renamed(self, target: Belief, up: BeliefUpdate) -> bool:
        if not up.new_canonical_name:
            return False
        try:
            return normalize_canonical_name(up.new_canonical_name) != target.canonical_name
        except ValueError:
            return False

    def supersede(
        self, label: str, target: Belief, content: str, up: BeliefUpdate, reason: str
    ) -> None:
        replacement = self.belief_from(target, content=content, name=up.new_canonical_name, up=up)
        if replacement is None:
            self.skip(
                label, f"new_canonical_name {up.new_canonical_name!r} has no letters or digits"
            )
            return
        replacement = inherit(target, replacement)
        clash = self.by_name(replacement.canonical_name, replacement.scope)
        if clash is not None and clash.id != target.id:
            self.skip(
                label,
                f"new canonical name {replacement.canonical_name!r} is already used by live "
                f"belief {clash.id}",
            )
            return
        self.changed.add(target.id)
        self.live.pop(target.id, None)
        self.planned[replacement.id] = replacement
        self.plan.supersessions.append(
            Supersession(old_id=target.id, replacement=replacement, reason=reason)
        )

    def belief_from(
        self, old: Belief, *, content: str, name: str | None, up: BeliefUpdate
    ) -> Belief | None:
        """What the update says `old` should now be: its directive and ruled-out options come
        from the turn; the old directive only where it still fits."""
        try:
            belief = Belief(
                user_id=old.user_id,
                agent_id=old.agent_id,
                type=old.type,
                subtype=old.subtype,
                canonical_name=name or old.canonical_name,
                content=content,
                why_it_matters=redact(up.why_it_matters or "").strip(),
                rejected_alternatives=clean_names(up.rejected_alternatives),
                scope=list(old.scope),
                epistemic_status="active",
                confidence=old.confidence,
                memory_class=old.memory_class,
                delivery=old.delivery,
                participants=list(old.participants),
                **self.agent_written(),
            )
        except ValidationError:
            return None
        belief.why_it_matters = fitting_directive(old, belief)
        return belief

    def agent_written(self) -> dict[str, Any]:
        return {
            "review_state": "pending",
            "source_type": "extracted",
            "provenance": dict(self.provenance),
            "created_at": self.now,
            "updated_at": self.now,
            "last_reinforced_at": self.now,
        }

    def new(self, n: int, nb: NewBelief) -> None:
        label = f"new_beliefs[{n}] {nb.canonical_name!r}"
        if nb.confidence < MIN_CONFIDENCE:
            self.skip(label, f"confidence {nb.confidence:g} is below {MIN_CONFIDENCE:g}")
            return
        scope = [s.strip().lower() for s in nb.scope if s.strip().lower() in self.scopes]
        own = [s for s in self.scopes if s != UNIVERSAL]
        if UNIVERSAL in scope and nb.type != "preference" and own:
            # `user:universal` is injected everywhere: only what is about the person (their
            # preferences, style, expertise) goes there; decisions, entities and questions
            # stay where they were said.
            scope = [s for s in scope if s != UNIVERSAL] or own
        if not scope:
            scope = own or [UNIVERSAL]
        nb = as_one_record(nb)
        try:
            belief = Belief(
                user_id=self.turn.user_id,
                agent_id=self.turn.agent_id or None,  # an agent's own until shared
                type=nb.type,
                canonical_name=nb.canonical_name,
                content=nb.content.strip(),
                why_it_matters=nb.why_it_matters.strip(),
                aliases=clean_names(nb.aliases),
                rejected_alternatives=clean_names(nb.rejected_alternatives),
                scope=scope,
                confidence=nb.confidence,
                epistemic_status=nb.epistemic_status,
                memory_class=_memory_class(nb.memory_class),
                participants=_names(nb.participants),
                **self.agent_written(),
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            self.skip(label, f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}")
            return
        if belief.aliases:
            belief.aliases = [a for a in belief.aliases if a != belief.canonical_name]
        existing = self.by_name(belief.canonical_name, belief.scope)
        if existing is None:
            self.planned[belief.id] = belief
            self.plan.creates.append(belief)
            if nb.resolves_open_question:
                self.resolve(nb.resolves_open_question, belief.id)
        elif existing.id in self.planned:
            # The model described the same thing twice (or a replacement it just wrote).
            existing.aliases = [*existing.aliases, *belief.aliases]
            existing.rejected_alternatives = [
                *existing.rejected_alternatives,
                *belief.rejected_alternatives,
            ]
            if not existing.why_it_matters:
                existing.why_it_matters = belief.why_it_matters
        elif existing.id in self.changed:
            self.skip(label, f"belief {existing.id} was already changed by this turn")
        elif same_content(existing.content, belief.content):
            self.add_reinforcement(existing, belief.aliases, belief.rejected_alternatives)
        else:
            self.changed.add(existing.id)
            self.plan.conflicts.append(
                ConflictDraft(
                    existing_id=existing.id,
                    proposed=belief,
                    reason=f"new content for {belief.canonical_name!r} differs from belief "
                    f"{existing.id}",
                )
            )

    def add_reinforcement(self, target: Belief, aliases: list[str], rejected: list[str]) -> None:
        acc = self.reinforce.setdefault(target.id, _Reinforce())
        acc.aliases += [a for a in aliases if a.lower() not in _lower(target.aliases)]
        acc.rejected += [
            r for r in rejected if r.lower() not in _lower(target.rejected_alternatives)
        ]
        acc.promote = should_promote(target, self.now)

    def entity(self, n: int, eu: EntityUpdate) -> None:
        label = f"entity_updates[{n}] {eu.canonical_name!r}"
        target = self.target(eu.canonical_name, eu.canonical_name)
        if target is None:
            self.skip(label, f"no live belief named {eu.canonical_name!r} in this scope")
            return
        known = _lower([*target.aliases, target.canonical_name])
        fresh = [a for a in clean_names(eu.new_aliases) if a.lower() not in known]
        if not fresh:
            self.skip(label, "no new aliases")
            return
        if target.id in self.planned:
            target.aliases = [*target.aliases, *fresh]
        elif target.id in self.changed:
            self.skip(label, f"belief {target.id} was already changed by this turn")
        else:
            self.plan.enrichments.append(Enrichment(belief_id=target.id, aliases=tuple(fresh)))

    def resolve_quoted(self, resolution: OpenQuestionResolution) -> None:
        # A question is settled by the user's words, named by its id: a turn of small talk
        # must not close an unrelated question because a model guessed.
        label = f"resolved_open_questions {resolution.id!r}"
        said = " ".join(self.turn.user_message.split()).casefold()
        quote = " ".join(resolution.quote.strip().strip("\"'“”").split()).casefold()
        if resolution.id not in self.live and resolution.id not in self.planned:
            self.skip(label, "no known open question has that id (a resolution needs the id)")
        elif not quote or quote not in said:
            self.skip(label, f"the quote {resolution.quote[:80]!r} is not in the user's message")
        else:
            self.resolve(resolution.id, None)

    def resolve(self, ref: str, resolved_by: str | None) -> None:
        label = f"resolved_open_questions {ref!r}"
        target = self.target(ref, ref)
        if target is None:
            self.skip(label, "no live open question with that id or canonical name")
        elif target.type != "open_question":
            self.skip(label, f"belief {target.id} is a {target.type}, not an open_question")
        elif target.resolved_at is not None or any(
            r.belief_id == target.id for r in self.plan.resolutions
        ):
            self.skip(label, f"open question {target.id} is already resolved")
        else:
            self.plan.resolutions.append(Resolution(belief_id=target.id, resolved_by=resolved_by))

    def finish(self) -> Plan:
        for belief_id, acc in self.reinforce.items():
            self.plan.reinforcements.append(
                Reinforcement(
                    belief_id=belief_id,
                    aliases=tuple(dedupe_names(acc.aliases)),
                    rejected_alternatives=tuple(dedupe_names(acc.rejected)),
                    promote=acc.promote,
                )
            )
        return self.plan


def _lower(names: Iterable[str]) -> set[str]:
    return {n.lower() for n in names}


def _names(raw: Iterable[str]) -> list[str]:
    out = []
    for name in raw:
        try:
            out.append(normalize_canonical_name(name))
        except ValueError:
            continue
    return dedupe_names(out)


def _memory_class(value: str | None) -> MemoryClass | None:
    # A class the store does not know is dropped rather than costing the whole belief.
    cleaned = (value or "").strip().lower()
    return cast(MemoryClass, cleaned) if cleaned in _MEMORY_CLASSES else None
