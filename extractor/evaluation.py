"""Scoring an extraction model: replay conversations through the real extraction path into a
temporary store, then ask retrieval what it learned.

A fact counts as extracted when, after its conversation, a probe query retrieves a belief that
says it (the same search the gateway runs before a request), not when a string matches the
model's reply. Also scored: rejected alternatives captured (recorded as such on a
live belief),
supersessions detected, beliefs made from small talk (there should be none), beliefs copied
from the prompt's worked example, jobs failed and why, seconds and tokens per job.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from beliefs.context import ContextRequest, assemble
from beliefs.errors import BeliefError
from beliefs.record import AnyBelief
from beliefs.store import BeliefStore
from beliefs.thread import StoreThread
from extractor.config import ExtractionConfig
from extractor.jobs import JobQueue
from extractor.llm import ChatModel
from extractor.turn import Turn
from extractor.worker import ExtractionWorkers, JobReport

UNIVERSAL = "user:universal"
# Words of the prompt's worked example (a cookbook in metric units): a belief that holds them
# was copied, not extracted.
EXAMPLE_WORDS = ("cookbook", "millilitres")


class Probe(BaseModel):
    """After the conversation, `query` must retrieve a belief that says every term of `says`
    (a term may list alternatives with `|`) and none that says a term of `not_says`."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    says: list[str] = Field(min_length=1)
    not_says: list[str] = Field(default_factory=list)


class EvalTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = Field(min_length=1)
    assistant: str = ""
    gold: list[dict[str, Any]] = Field(default_factory=list)  # for the reference model only


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    persona: str
    kinds: list[str] = Field(default_factory=list)
    scopes: list[str] = Field(default_factory=list)
    turns: list[EvalTurn] = Field(min_length=1)
    probes: list[Probe] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list)
    supersedes: int = Field(default=0, ge=0)
    chit_chat: bool = False

    @property
    def user_id(self) -> str:
        return f"eval-{self.id}"


class ConversationSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str = ""
    conversations: list[Conversation] = Field(min_length=1)


def load_conversations(path: str | Path | None = None) -> list[Conversation]:
    """The shipped set, or a file of the same shape.

    Raises:
        BeliefError: the file is missing, not JSON, or not a conversation set (names the fault).
    """
    where = str(path) if path is not None else "the shipped conversation set"
    try:
        if path is None:
            text = (
                resources.files("extractor")
                .joinpath("data/conversations.json")
                .read_text(encoding="utf-8")
            )
        else:
            text = Path(path).read_text(encoding="utf-8")
        data = ConversationSet.model_validate_json(text)
    except FileNotFoundError:
        raise BeliefError(f"conversation file {where} does not exist") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise BeliefError(
            f"{where} is not a conversation set: {at}: {first['msg']} (see the shipped "
            "set's shape in docs/extraction-models.md)"
        ) from None
    ids = [c.id for c in data.conversations]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BeliefError(f"{where}: conversation id {twice[0]!r} is used twice")
    return data.conversations


@dataclass
class Tally:
    """The counts scored per conversation and summed per model."""

    facts_found: int = 0
    facts_expected: int = 0
    rejected_captured: int = 0
    rejected_expected: int = 0
    supersessions_detected: int = 0
    supersessions_expected: int = 0
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
    copied_from_example: int = 0
    jobs: int = 0
    jobs_failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    seconds_per_job: float = 0.0
    seconds_max: float = 0.0
    prompt_tokens_per_job: float = 0.0
    completion_tokens_per_job: float = 0.0
    calls_per_job: float = 0.0
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
        store = BeliefStore.open(Path(tmp) / "eval.duckdb")
        thread = StoreThread(store)
        reports: list[JobReport] = []
        try:
            queue = JobQueue(store)
            workers = ExtractionWorkers(thread, queue, llm, config, observe=reports.append)
            for conversation in conversations:
                for n, turn in enumerate(conversation.turns):
                    await thread.run(queue.enqueue, _turn(conversation, n, turn))
                    await workers.drain()
            return await thread.run(_score, store, queue, config.model, conversations, reports)
        finally:
            thread.close()
            store.close()


def _turn(conversation: Conversation, n: int, turn: EvalTurn) -> Turn:
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
    if reports:
        score.seconds_per_job = round(statistics.fmean(r.seconds for r in reports), 3)
        score.seconds_max = round(max(r.seconds for r in reports), 3)
        score.prompt_tokens_per_job = round(statistics.fmean(r.prompt_tokens for r in reports), 1)
        score.completion_tokens_per_job = round(
            statistics.fmean(r.completion_tokens for r in reports), 1
        )
        score.calls_per_job = round(statistics.fmean(r.calls for r in reports), 2)
        score.modes = dict(Counter(r.mode or "none" for r in reports).most_common())
    return score


def _score_conversation(store: BeliefStore, conversation: Conversation) -> ConversationScore:
    one = ConversationScore(id=conversation.id)
    user = conversation.user_id
    scopes = tuple(dict.fromkeys([*conversation.scopes, UNIVERSAL]))
    everything = store.list(user_id=user, include_superseded=True)
    live = [b for b in everything if b.superseded_by is None]
    one.beliefs = len(live)
    if conversation.chit_chat:
        one.chit_chat_beliefs = len(everything)
    for probe in conversation.probes:
        one.facts_expected += 1
        found = _retrieve(store, user, scopes, probe.query)
        hit = any(_says(b, probe.says) for b in found)
        wrong = any(_says_any(b, probe.not_says) for b in found)
        if hit and not wrong:
            one.facts_found += 1
        else:
            one.missed.append(f"probe {probe.query!r}")
    live = [b for b in everything if b.superseded_by is None]
    for name in conversation.rejected:
        one.rejected_expected += 1
        # Recorded where search reads it; whether a turn naming it then surfaces the decision
        # is the probes' part (a lone everyday word such as "slack" rightly does not).
        if any(_rejects(b, name) for b in live):
            one.rejected_captured += 1
        else:
            one.missed.append(f"rejected {name!r}")
    one.supersessions_expected = conversation.supersedes
    superseded = sum(1 for b in everything if b.superseded_by is not None)
    one.supersessions_detected = min(superseded, conversation.supersedes)
    if superseded < conversation.supersedes:
        one.missed.append(f"supersessions {superseded}/{conversation.supersedes}")
    return one


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


def _copied(belief: AnyBelief) -> bool:
    text = f"{_text(belief)} {belief.why_it_matters.casefold()}"
    return any(word in text for word in EXAMPLE_WORDS)


def summary_json(scores: Sequence[ModelScore]) -> str:
    return json.dumps([s.as_dict() for s in scores], indent=2, ensure_ascii=False) + "\n"
