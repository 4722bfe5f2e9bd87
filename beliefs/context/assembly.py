"""Context assembly: persona prelude, pinned beliefs, relevant beliefs and open questions.

Scope isolation and the other filters are hard filters, never ranking hints. Pinned and relevant
beliefs share one cap (pinned first); a token budget sheds relevant hits first and never the
persona, pinned beliefs or open questions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache, partial

from beliefs.context.citations import is_passage
from beliefs.context.contested import Contested
from beliefs.context.layers import Budget, Context
from beliefs.context.render import RELEVANT_HEADER, estimate_tokens, relevant_line, system_block
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import utcnow
from beliefs.model.record import AnyBelief
from beliefs.model.rules import Rule, RuleSet
from beliefs.search.deadline import Deadline
from beliefs.search.matcher import MIN_SCORE, Clause, Hit, search
from beliefs.text.query import parse_query

UNIVERSAL = "user:universal"
MAX_PINNED = 10
MAX_OPEN_QUESTIONS = 15
MAX_PERSONA_CHARS = 800
DEFAULT_MAX_BELIEFS = 20
SHED_LOOKAHEAD = 10  # hits ranked past the cap, kept only to report what was shed
# Finds document passages for a turn (`beliefs.documents`): the request, the delivery filter
# and the scopes it may search; its hits rank after every memory hit.
PassageSearch = Callable[["ContextRequest", Callable[[AnyBelief], bool], frozenset[str]], list[Hit]]


@dataclass(frozen=True)
class ContextRequest:
    user_id: str
    scopes: tuple[str, ...]
    query: str
    agent_id: str | None = None
    max_beliefs: int = DEFAULT_MAX_BELIEFS
    token_budget: int | None = None
    curated: bool = False
    min_trust: int = 1
    inject_scopes: tuple[str, ...] = ()


def covering(scopes: Sequence[str]) -> frozenset[str]:
    """Every belief scope that applies to one of `scopes`: each scope and its ancestors."""
    return _covering(tuple(scopes))


@lru_cache(maxsize=4096)
def _covering(scopes: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for scope in scopes:
        parts = scope.split("/")
        out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(out)


def in_scopes(belief: AnyBelief, scopes: Sequence[str] | frozenset[str]) -> bool:
    allowed = scopes if isinstance(scopes, frozenset) else covering(scopes)
    return any(b in allowed for b in belief.scope)


def deliverable(belief: AnyBelief, request: ContextRequest, now: datetime) -> bool:
    """The hard filters every automatically injected belief passes."""
    return (
        belief.is_live
        and belief.resolved_at is None
        and belief.seen_by(request.agent_id)
        and belief.review_state != "rejected"
        and (not request.curated or belief.review_state == "confirmed")
        and (belief.expires_at is None or belief.expires_at > now)
        and belief.delivery != "on_demand"
        and belief.trust >= request.min_trust
        and (not request.inject_scopes or _allowed(belief, request))
    )


def _allowed(belief: AnyBelief, request: ContextRequest) -> bool:
    """The `inject_scopes` allow-list, written as rule patterns (`project:*`)."""
    return any(
        Rule(pattern=p).matches(s, belief.user_id)
        for p in request.inject_scopes
        for s in belief.scope
    )


_BOUND = "rule-weight-bound"  # the user's derived view `weight_bound` keeps


def weight_bound(index: BeliefIndex, user_id: str, rules: RuleSet) -> float:
    """The most `rules` weigh any of the user's beliefs, kept until the user's beliefs or the
    rules change (hold `index.lock` through the search it bounds).

    Search weighs candidates best first and stops once even this weight could not lift one
    into the ranks; bounded by the scopes the user's beliefs hold, rather than by every rule
    at once (`max_bonus`), a turn matching thousands of beliefs weighs a fraction as many.
    """
    scopes = index.scope_lists(user_id)  # first: a bounded index reads a user it lacks
    derived = index.derived_of(user_id)
    kept = derived.get(_BOUND)
    if isinstance(kept, tuple) and kept[0] is rules:
        return float(kept[1])
    # A hair above: search divides the minimum score by the bound, and a quotient rounded up
    # would cut a belief whose weighted score just reaches the minimum.
    bound = rules.most(scopes, user_id) * (1.0 + 1e-9)
    derived[_BOUND] = (rules, bound)
    return bound


def assemble(
    index: BeliefIndex,
    request: ContextRequest,
    *,
    persona: str = "",
    now: datetime | None = None,
    count_tokens: Callable[[str], int] = estimate_tokens,
    rules: RuleSet | None = None,
    persona_covers: frozenset[str] | None = None,
    deadline: Deadline | None = None,
    contested: Contested | None = None,
    passages: PassageSearch | None = None,
) -> Context:
    """Build the three layers (plus open questions) for one turn.

    Pinned `user:universal`-only beliefs the persona covers ride in the persona instead of the
    pinned layer: `persona_covers` names them, None means the persona covers them all (an
    operator wrote it). Uncovered ones stay in the pinned layer, so nothing pinned is lost.

    `rules` add their ranking bonuses (before the minimum-score cut) and group relevant hits
    under their instruction templates. Hits are then stable-sorted by trust tier, so a lower
    tier never outranks a higher one, before the caps and the token budget apply.

    `deadline` bounds the search (`beliefs.search.deadline`); the standing layers are always whole.
    `contested`: the open contradictions; those of delivered beliefs are delivered with them.
    `passages`: document passages, searched apart from beliefs and ranked after them.
    """
    rules = rules or RuleSet()
    weight = rules.weight if rules.has_bonuses else None
    now = now or utcnow()
    persona = persona.strip()[:MAX_PERSONA_CHARS]
    scopes = tuple(s for s in request.scopes if s != UNIVERSAL)
    search_scopes = covering((*scopes, UNIVERSAL))
    standing = _standing(index, request, scopes, persona_covers if persona else frozenset(), now)
    budget = Budget(max_beliefs=request.max_beliefs, limit_tokens=request.token_budget)
    pinned_cap = min(MAX_PINNED, request.max_beliefs)
    pinned = standing.pinned[:pinned_cap]
    budget.over_pinned = standing.over_pinned(pinned_cap)
    questions = list(standing.questions)
    # Verdicts hold while the user's beliefs stay as they are (search checks the version),
    # except for beliefs that can expire.
    version, verdicts = standing.verdicts(index.user_version(request.user_id), pinned_cap)
    searchable = _searchable(request, now, pinned, standing, search_scopes, verdicts)

    def question_ok(belief: AnyBelief) -> bool:
        return deliverable(belief, request, now) and in_scopes(belief, search_scopes)

    room = max(0, request.max_beliefs - len(pinned))
    with index.lock:  # the weight bound holds for the beliefs this search reads
        hits = search(
            index,
            request.user_id,
            parse_query(request.query),
            searchable,
            min_score=MIN_SCORE,
            weight=weight,
            max_weight=weight_bound(index, request.user_id, rules),
            limit=room + SHED_LOOKAHEAD,
            verdicts=(version, verdicts),
            deadline=deadline,
        )
    relevant = _expand_relations(index, request.user_id, hits, searchable, questions, question_ok)
    if passages is not None and not (deadline is not None and deadline.passed()):
        ok = partial(deliverable, request=request, now=now)
        relevant.extend(passages(request, ok, search_scopes))
    relevant.sort(key=lambda h: -h.belief.trust)  # stable: relevance order kept within a tier
    relevant = _within_cap(relevant, room, budget)
    templates = {h.belief.id: r for h in relevant if (r := rules.template_rule(h.belief))}
    context = Context(persona, pinned, relevant, questions, budget, request.query, templates)
    context.persona_ids = list(standing.carried) if persona else []
    standing_tokens = _render_standing(context, standing, pinned_cap, count_tokens)
    _apply_token_budget(context, count_tokens, standing_tokens)
    if contested:
        delivered = [*pinned, *(h.belief for h in context.relevant), *context.open_questions]
        context.contradictions = [(b, found) for b in delivered if (found := contested.of(b.id))]
    return context


def _searchable(
    request: ContextRequest,
    now: datetime,
    pinned: list[AnyBelief],
    standing: _Standing,
    search_scopes: frozenset[str],
    verdicts: dict[str, bool],
) -> Callable[[AnyBelief], bool]:
    """Whether search may return a belief: not pinned, not in the persona, deliverable and in
    scope; the verdict is kept in `verdicts` unless the belief can expire."""
    pinned_ids = {b.id for b in pinned}
    covered_by_persona = standing.covered_by_persona

    def searchable(belief: AnyBelief) -> bool:
        verdict = (
            belief.type != "open_question"
            and belief.subtype != "expertise"
            and belief.id not in pinned_ids
            and belief.id not in covered_by_persona
            and not is_passage(belief)  # passages are found by their own search
            and deliverable(belief, request, now)
            and in_scopes(belief, search_scopes)
        )
        if belief.expires_at is None:
            verdicts[belief.id] = verdict
        return verdict

    return searchable


def _within_cap(relevant: list[Hit], room: int, budget: Budget) -> list[Hit]:
    """The first `room` hits; the others are shed as "max_beliefs"."""
    for hit in relevant[room:]:
        budget.shed_ids.append(hit.belief.id)
        budget.shed_reason[hit.belief.id] = "max_beliefs"
    return relevant[:room]


def _render_standing(
    context: Context, standing: _Standing, pinned_cap: int, count_tokens: Callable[[str], int]
) -> int:
    """Set the context's system block; returns its token count. The block is kept with the
    standing layers unless a relation pulled in another open question."""
    if len(context.open_questions) == len(standing.questions):
        key = (context.persona, pinned_cap, count_tokens)
        cached = standing.blocks.get(key)
        if cached is None:
            text = system_block(context)
            cached = standing.blocks[key] = (text, count_tokens(text))
        context.standing_text = cached[0]
        return cached[1]
    context.standing_text = system_block(context)
    return count_tokens(context.standing_text)


@dataclass(frozen=True)
class _Standing:
    """The turn-independent layers for one user and scope set, kept until the user's pinned
    beliefs change (they are made of those alone)."""

    pinned: list[AnyBelief]
    questions: list[AnyBelief]
    covered_by_persona: frozenset[str]
    carried: tuple[str, ...]  # deliverable beliefs the persona speaks for, in pinned order
    valid_until: datetime | None
    # (persona, pinned cap, token counter) -> rendered system block and its token count
    blocks: dict[tuple[str, int, object], tuple[str, int]] = field(default_factory=dict)
    # pinned cap -> (the user's version, belief id -> whether search may return it)
    searchable: dict[int, tuple[int, dict[str, bool]]] = field(default_factory=dict)
    # pinned cap -> the ids of the pinned beliefs past it
    over: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def verdicts(self, version: int, cap: int) -> tuple[int, dict[str, bool]]:
        """Search's verdicts for the pinned cap at the user's `version` (`user_version`):
        any write of the user's makes them new, a pinned one or not."""
        found = self.searchable.get(cap)
        if found is None or found[0] != version:
            found = self.searchable[cap] = (version, {})
        return found

    def over_pinned(self, cap: int) -> tuple[str, ...]:
        found = self.over.get(cap)
        if found is None:
            found = self.over[cap] = tuple(b.id for b in self.pinned[cap:])
        return found


def _standing(
    index: BeliefIndex,
    request: ContextRequest,
    scopes: tuple[str, ...],
    covers: frozenset[str] | None,
    now: datetime,
) -> _Standing:
    key = (
        "standing",
        scopes,
        request.agent_id,
        covers,
        request.curated,
        request.min_trust,
        request.inject_scopes,
    )
    with index.lock:
        postings = index.user(request.user_id)
        cached = postings.standing.get(key)
        if isinstance(cached, _Standing) and (
            cached.valid_until is None or now < cached.valid_until
        ):
            return cached
        version = postings.version
        # in the pinned layer's order (`pinned_order`): every list below keeps it
        always: list[AnyBelief] = [postings.docs[key[3]].belief for key in postings.pinned_order]
    search_scopes = covering((*scopes, UNIVERSAL))

    def covered_by_persona(belief: AnyBelief) -> bool:
        # An agent's own belief never rides in the persona, which every agent of the user
        # receives: it stays in the pinned layer, where the agent filter applies.
        return (
            len(belief.scope) == 1
            and belief.scope[0] == UNIVERSAL
            and belief.agent_id is None
            and (covers is None or belief.id in covers)
        )

    live = [b for b in always if deliverable(b, request, now)]
    pinned = [
        b
        for b in live
        if b.type != "open_question"
        and in_scopes(b, search_scopes)
        and not covered_by_persona(b)
        and not is_passage(b)  # a passage is found by what it says, never standing
    ]
    questions = [
        b for b in live if b.type == "open_question" and b.pinned and in_scopes(b, search_scopes)
    ][:MAX_OPEN_QUESTIONS]
    covered = frozenset(b.id for b in always if covered_by_persona(b))
    carried = tuple(b.id for b in live if b.type != "open_question" and covered_by_persona(b))
    expiries = [b.expires_at for b in always if b.expires_at is not None and b.expires_at > now]
    valid_until = min(expiries) if expiries else None
    standing = _Standing(pinned, questions, covered, carried, valid_until)
    with index.lock:
        if index.user_version(request.user_id) == version:  # a write meanwhile: serve it once
            postings.standing[key] = standing
    return standing


def _expand_relations(
    index: BeliefIndex,
    user_id: str,
    hits: list[Hit],
    searchable: Callable[[AnyBelief], bool],
    questions: list[AnyBelief],
    question_ok: Callable[[AnyBelief], bool],
) -> list[Hit]:
    """Relation hits pull in their participants (same filters) right after themselves."""
    seen = {h.belief.id for h in hits}
    out: list[Hit] = []
    for hit in hits:
        out.append(hit)
        if hit.belief.type != "relation":
            continue
        for ref in hit.belief.participants:
            found = index.belief_of(user_id, ref)  # another user's belief is never read
            candidates = [found] if found is not None else index.by_name(user_id, ref)
            for belief in candidates:
                if belief.id in seen:
                    continue
                if belief.type == "open_question":
                    seen.add(belief.id)
                    fits = len(questions) < MAX_OPEN_QUESTIONS
                    if fits and question_ok(belief) and belief not in questions:
                        questions.append(belief)
                    continue
                if not searchable(belief):
                    continue
                seen.add(belief.id)
                clause = Clause("participant", hit.belief.canonical_name, 0.0, "participant")
                out.append(Hit(belief=belief, score=hit.score, clauses=[clause]))
    return out


def _apply_token_budget(
    context: Context, count_tokens: Callable[[str], int], standing_tokens: int
) -> None:
    """Shed relevant hits, lowest ranked first, until the memory blocks fit the budget."""
    budget = context.budget
    used = standing_tokens
    kept: list[Hit] = []
    groups: set[str | None] = set()
    header = count_tokens(RELEVANT_HEADER)
    for hit in context.relevant:
        rule = context.templates.get(hit.belief.id)
        line = context.lines[hit.belief.id] = relevant_line(hit)
        extra = count_tokens(line) + (header if not kept else 0)
        if (rule.id if rule else None) not in groups and rule is not None:
            extra += count_tokens(rule.render(""))
        if budget.limit_tokens is not None and used + extra > budget.limit_tokens:
            budget.shed_ids.append(hit.belief.id)
            budget.shed_reason[hit.belief.id] = "token_budget"
            continue
        kept.append(hit)
        groups.add(rule.id if rule else None)
        used += extra
    context.relevant = kept
    budget.used_tokens = used
