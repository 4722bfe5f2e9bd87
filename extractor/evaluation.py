"""Scoring an extraction model: replay conversations through the real extraction path into a
temporary store, then ask retrieval what it learned.

A fact counts as extracted when, after its conversation, a probe query retrieves a belief that
says it in other words than the user's (the same search the gateway runs before a request), and
no retrieved belief says what a correction replaced. Also scored: rejected alternatives (and
the chosen option never rejected), the right belief superseded (and no other), open questions,
beliefs no gold accounts for (noise, on every conversation), small talk kept out, beliefs
copied from the prompt's worked examples, jobs failed and why, and what each turn cost.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.model.errors import BeliefError
from beliefs.model.record import AnyBelief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.config import ExtractionConfig
from extractor.eval_set import Conversation, EvalTurn
from extractor.jobs import JobQueue
from extractor.llm import ChatModel
from extractor.outcome import JobReport
from extractor.prompts import EXAMPLE_NAMES, EXAMPLE_TEXTS
from extractor.turn import Turn
from extractor.worker import ExtractionWorkers

UNIVERSAL = "user:universal"
# Three words in a row from a worked example (not all of them little words) in a belief: copied.
SHINGLE = 3
_WORD = re.compile(r"\w+")
_LITTLE = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "its"}
    | {"of", "on", "or", "so", "the", "their", "this", "to", "with"}
)


@dataclass
class Tally:
    """The counts scored per conversation and summed per model."""

    facts_found: int = 0
    facts_expected: int = 0
    rejected_captured: int = 0
    rejected_expected: int = 0
    chosen_rejected: int = 0
    supersessions_detected: int = 0
    supersessions_expected: int = 0
    superseded_wrongly: int = 0
    questions_found: int = 0
    questions_expected: int = 0
    beliefs_written: int = 0
    noise: int = 0
    small_talk_clean: int = 0
    small_talk_expected: int = 0
    chit_chat_beliefs: int = 0

    def add(self, other: Tally) -> None:
        for name in Tally.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class ConversationScore(Tally):
    id: str = ""
    beliefs: int = 0
    missed: list[str] = field(default_factory=list)


@dataclass
class ModelScore(Tally):
    """One model's scores over a conversation set."""

    model: str = ""
    conversations: int = 0
    turns: int = 0
    copied_from_example: int = 0
    jobs: int = 0
    jobs_failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    seconds_per_job: float = 0.0
    seconds_max: float = 0.0
    prompt_tokens_per_job: float = 0.0
    completion_tokens_per_job: float = 0.0
    calls_per_job: float = 0.0
    prompt_tokens_per_turn: float = 0.0
    uncached_prompt_tokens_per_turn: float = 0.0
    calls_per_turn: float = 0.0
    turns_skipped: int = 0
    modes: dict[str, int] = field(default_factory=dict)
    canary: str = ""  # the verdict on the turn with a known answer, asked before the first job
    details: list[ConversationScore] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def evaluate(
    llm: ChatModel,
    config: ExtractionConfig,
    conversations: Sequence[Conversation],
    *,
    home: Path | None = None,
) -> ModelScore:
    """Replay every conversation (turn by turn, each job drained before the next) through the
    extraction workers into a fresh store, then score. `config.model` is the model under test.
    """
    if not config.model:
        raise BeliefError("name the model to evaluate (--model or TENURE_EXTRACT_MODEL)")
    with tempfile.TemporaryDirectory(prefix="tenure-eval-extract-", dir=home) as tmp:
        store = open_store(Path(tmp) / "eval.duckdb")
        thread = StoreThread(store)
        reports: list[JobReport] = []
        try:
            queue = JobQueue(store)
            workers = ExtractionWorkers(thread, queue, llm, config, observe=reports.append)
            for conversation in conversations:
                for n, turn in enumerate(conversation.turns):
                    await thread.run(queue.enqueue, eval_turn(conversation, n, turn))
                    await workers.drain()
            return await thread.run(_score, store, queue, config.model, conversations, reports)
        finally:
            thread.close()
            store.close()


def eval_turn(conversation: Conversation, n: int, turn: EvalTurn) -> Turn:
    """The `n`th turn of an evaluation conversation, as the proxy would hand it over."""
    return Turn(
        request_id=f"{conversation.id}-{n}",
        user_id=conversation.user_id,
        scopes=conversation.scopes,
        model="eval",
        user_message=turn.user,
        assistant_message=turn.assistant,
    )


def _score(
    store: BeliefStore,
    queue: JobQueue,
    model: str,
    conversations: Sequence[Conversation],
    reports: Sequence[JobReport],
) -> ModelScore:
    score = ModelScore(model=model, conversations=len(conversations))
    for conversation in conversations:
        one = _score_conversation(store, conversation)
        score.details.append(one)
        score.add(one)
        live = store.list(user_id=conversation.user_id)
        score.copied_from_example += sum(1 for b in live if _copied(b))
    counts = queue.counts()
    score.jobs = sum(counts.values())
    unfinished = [j for status in ("failed", "pending", "running") for j in queue.list(status)]
    score.jobs_failed = len(unfinished)
    score.failures = dict(
        Counter(
            (j.last_error or f"not run ({j.status})").split(":", 1)[0] for j in unfinished
        ).most_common()
    )
    score.turns = sum(len(c.turns) for c in conversations)
    _costs(score, reports)
    return score


def _costs(score: ModelScore, reports: Sequence[JobReport]) -> None:
    if not reports:
        return
    # Per job: the jobs the model was asked; per turn (below): every turn, a skipped one free.
    asked = [r for r in reports if r.mode != "skipped"] or list(reports)
    score.seconds_per_job = round(statistics.fmean(r.seconds for r in asked), 3)
    score.seconds_max = round(max(r.seconds for r in asked), 3)
    score.prompt_tokens_per_job = round(statistics.fmean(r.prompt_tokens for r in asked), 1)
    score.completion_tokens_per_job = round(statistics.fmean(r.completion_tokens for r in asked), 1)
    score.calls_per_job = round(statistics.fmean(r.calls for r in asked), 2)
    turns = max(1, score.turns)
    prompt = sum(r.prompt_tokens for r in reports)
    score.prompt_tokens_per_turn = round(prompt / turns, 1)
    score.uncached_prompt_tokens_per_turn = round(
        (prompt - sum(r.cached_tokens for r in reports)) / turns, 1
    )
    score.calls_per_turn = round(sum(r.calls for r in reports) / turns, 2)
    score.turns_skipped = sum(1 for r in reports if r.mode == "skipped")
    score.modes = dict(Counter(r.mode or "none" for r in reports).most_common())


def _score_conversation(store: BeliefStore, conversation: Conversation) -> ConversationScore:
    one = ConversationScore(id=conversation.id)
    user = conversation.user_id
    scopes = tuple(dict.fromkeys([*conversation.scopes, UNIVERSAL]))
    everything = store.list(user_id=user, include_superseded=True)
    live = [b for b in everything if b.superseded_by is None]
    one.beliefs = one.beliefs_written = len(live)
    accounted: set[str] = set()
    for probe in conversation.probes:
        one.facts_expected += 1
        found = _retrieve(store, user, scopes, probe.query)
        hits = [b for b in found if _says(b, probe.says)]
        accounted.update(b.id for b in hits)
        if hits and not any(_says_any(b, probe.not_says) for b in found):
            one.facts_found += 1
        else:
            one.missed.append(f"probe {probe.query!r}")
    _score_rejections(one, conversation, live)
    _score_supersessions(one, conversation, everything, accounted)
    for question in conversation.questions:
        one.questions_expected += 1
        asked = [
            b
            for b in everything
            if b.type == "open_question"
            and _says(b, question.says)
            and (b.resolved_at is not None) == question.settled
        ]
        accounted.update(b.id for b in asked)
        if asked:
            one.questions_found += 1
        else:
            one.missed.append(f"open question {' '.join(question.says)!r}")
    one.noise = sum(1 for b in live if b.id not in accounted)
    if conversation.chit_chat:
        one.small_talk_expected = 1
        one.chit_chat_beliefs = len(everything)
        one.small_talk_clean = int(not everything)
    return one


def _score_rejections(
    one: ConversationScore, conversation: Conversation, live: Sequence[AnyBelief]
) -> None:
    for rejection in conversation.rejected:
        one.rejected_expected += 1
        # Recorded where search reads it; whether a turn naming it then surfaces the decision
        # is the probes' part (a lone everyday word such as "slack" rightly does not).
        wrong = [b for b in live if _rejects_part(b, rejection.chosen)]
        one.chosen_rejected += len(wrong)
        if wrong:
            one.missed.append(f"rejected the chosen {rejection.chosen!r}")
        elif any(_rejects(b, rejection.name) for b in live):
            one.rejected_captured += 1
        else:
            one.missed.append(f"rejected {rejection.name!r}")


def _score_supersessions(
    one: ConversationScore,
    conversation: Conversation,
    everything: Sequence[AnyBelief],
    accounted: set[str],
) -> None:
    by_id = {b.id: b for b in everything}
    superseded = [b for b in everything if b.superseded_by is not None]
    right: set[str] = set()
    for expected in conversation.supersessions:
        one.supersessions_expected += 1
        done = [
            b for b in superseded if _says(b, expected.old) and _says(_head(b, by_id), expected.new)
        ]
        if done:
            right.update(b.id for b in done)
            accounted.update(_head(b, by_id).id for b in done)
        else:
            one.missed.append(f"supersession {' '.join(expected.old)!r}")
        one.supersessions_detected += bool(done)
    # Superseding a belief no correction named is as wrong as missing the right one: a model
    # that replaces everything it is shown scores nothing here.
    wrong = [b for b in superseded if b.id not in right and not _in_chain(b, right, by_id)]
    one.superseded_wrongly = len(wrong)
    if wrong:
        one.missed.append(f"superseded wrongly {len(wrong)}")
        one.supersessions_detected = 0


def _head(belief: AnyBelief, by_id: dict[str, AnyBelief]) -> AnyBelief:
    return _chain(belief, by_id)[-1]


def _in_chain(belief: AnyBelief, right: set[str], by_id: dict[str, AnyBelief]) -> bool:
    # A belief superseded on the way from a rightly replaced one to its head (an update the
    # model wrote in two steps) is part of the right supersession.
    return any(belief.id in {b.id for b in _chain(by_id[r], by_id)} for r in right)


def _chain(belief: AnyBelief, by_id: dict[str, AnyBelief]) -> list[AnyBelief]:
    """The belief and its successors, in order, to the live head."""
    out = [belief]
    while belief.superseded_by in by_id and by_id[belief.superseded_by] not in out:
        belief = by_id[belief.superseded_by]
        out.append(belief)
    return out


def _retrieve(
    store: BeliefStore, user: str, scopes: tuple[str, ...], query: str
) -> list[AnyBelief]:
    context = assemble(store.index, ContextRequest(user, scopes, query), rules=store.rules)
    return [*context.pinned, *(hit.belief for hit in context.relevant)]


def _text(belief: AnyBelief) -> str:
    parts = [belief.canonical_name.replace("_", " "), belief.content, *belief.aliases]
    return " ".join(parts).casefold()


def _says(belief: AnyBelief, terms: Sequence[str]) -> bool:
    text = _text(belief)
    return all(any(alt.strip().casefold() in text for alt in term.split("|")) for term in terms)


def _says_any(belief: AnyBelief, terms: Sequence[str]) -> bool:
    text = _text(belief)
    return any(term.casefold() in text for term in terms)


def _rejects(belief: AnyBelief, name: str) -> bool:
    wanted = name.strip().casefold()
    return any(wanted in r.casefold() for r in belief.rejected_alternatives)


def _rejects_part(belief: AnyBelief, name: str) -> bool:
    """Rejects the option or a word of its name ("GitHub" of "GitHub Actions")."""
    wanted = name.strip().casefold()
    rejected = (r.strip().casefold() for r in belief.rejected_alternatives)
    return any(r and (wanted in r or (len(r) > 2 and r in wanted)) for r in rejected)


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.casefold())
    return {
        tuple(words[i : i + SHINGLE])
        for i in range(len(words) - SHINGLE + 1)
        if not set(words[i : i + SHINGLE]) <= _LITTLE
    }


_EXAMPLE_SHINGLES = frozenset(s for text in EXAMPLE_TEXTS for s in _shingles(text))


def _copied(belief: AnyBelief) -> bool:
    """A belief that repeats a worked example's name or any three of its words in a row."""
    if belief.canonical_name in EXAMPLE_NAMES:
        return True
    text = " ".join([_text(belief), belief.why_it_matters, *belief.rejected_alternatives])
    return bool(_shingles(text) & _EXAMPLE_SHINGLES)


def summary_json(scores: Sequence[ModelScore]) -> str:
    return json.dumps([s.as_dict() for s in scores], indent=2, ensure_ascii=False) + "\n"
