"""The canary: a turn with a known answer, asked of each model before its first job.

A model can answer every turn with valid JSON and still be unable to do the job: a base model
under a JSON grammar copies the prompt's small-talk example (an empty result) for every turn,
and its jobs end "done, wrote 0" like turns with nothing worth remembering. The canary tells the
two apart: its turn states one lasting fact, so a model fit for extraction writes a belief about
it. The verdict lives in the client's `ModeBook` (shown on `/status` and in `/healthz`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, replace

from extractor.errors import ExtractionOutputInvalid, ModelMisconfigured, ModelSilent
from extractor.llm import ChatModel
from extractor.merge import visible_scopes
from extractor.outcome import describe
from extractor.prompts import build_messages
from extractor.schema import ExtractionOutput
from extractor.structured import CallOptions, complete_structured
from extractor.turn import Turn

log = logging.getLogger("tenure.extractor")

CANARY_USER = (
    "Please remember this for every future session: I am allergic to peanuts, so never "
    "suggest a recipe or a snack that has peanuts in it."
)
CANARY_ASSISTANT = "Noted: nothing with peanuts, ever."
_KNOWN_ANSWER = re.compile(r"peanut", re.I)  # what any belief about that turn must mention


@dataclass(frozen=True)
class Verdict:
    """Is the model fit for extraction, and why (the reason names what it got wrong)."""

    fit: bool
    reason: str


def canary_turn(model: str) -> Turn:
    """The turn with the known answer, as a job would carry it."""
    return Turn(
        request_id="canary",
        user_id="canary",
        scopes=["domain:general"],
        model=model,
        user_message=CANARY_USER,
        assistant_message=CANARY_ASSISTANT,
    )


def judge(output: ExtractionOutput) -> Verdict:
    """Fit when some new belief states the turn's fact."""
    if not output.new_beliefs:
        return Verdict(
            False,
            "it wrote no belief for a turn that states a lasting fact (a peanut allergy)",
        )
    for belief in output.new_beliefs:
        if _KNOWN_ANSWER.search(f"{belief.canonical_name} {belief.content}"):
            return Verdict(True, "it wrote the known belief of the canary turn")
    names = ", ".join(b.canonical_name for b in output.new_beliefs)
    return Verdict(
        False,
        f"for a turn about a peanut allergy it wrote beliefs about something else ({names}); "
        "it may be copying the prompt's example",
    )


async def ask_canary(llm: ChatModel, model: str, options: CallOptions) -> Verdict | None:
    """Ask the canary turn through the real extraction call.

    A wrong answer with the rules in the system message is asked once more with them in the
    user turn: a chat template that drops system messages shows this way when the server
    reports no token counts (llama-cpp-python's streams), and the model's later calls then
    carry the rules in the user turn.

    Returns None when the model's server cannot take the call as it is set up (its jobs fail
    with the same named reason).

    Raises:
        Whatever the call raised for an outage: that says nothing about the model.
    """
    verdict = await _ask(llm, model, options)
    if verdict is None or verdict.fit or options.rules != "auto":
        return verdict
    if llm.modes.system_dropped(model):
        return verdict
    again = await _ask(llm, model, replace(options, rules="user"))
    if again is None or not again.fit:
        return verdict
    llm.modes.note_system_dropped(
        model, "the canary turn was answered right only with the rules in the user turn"
    )
    return again


async def _ask(llm: ChatModel, model: str, options: CallOptions) -> Verdict | None:
    turn = canary_turn(model)
    messages = build_messages(turn, [], visible_scopes(turn))
    try:
        result = await complete_structured(
            llm, messages, ExtractionOutput, model=model, options=options
        )
    except ExtractionOutputInvalid as exc:
        return Verdict(False, f"its reply to a turn with a known answer is unusable: {exc}")
    except (ModelMisconfigured, ModelSilent) as exc:
        # Its jobs fail with the same named reason; no verdict on the model itself yet.
        log.warning("model %s: the canary turn could not be asked: %s", model, exc)
        return None
    return judge(result.value)


class Canaries:
    """The models asked in this process: each once, before its first job, whoever asks first
    (an outage leaves a model out, to be asked before its next job)."""

    def __init__(self, llm: ChatModel) -> None:
        self.llm = llm
        self._locks: dict[str, asyncio.Lock] = {}
        self._asked: set[str] = set()

    async def ask_once(self, model: str, options: CallOptions) -> None:
        if model in self._asked:
            return
        async with self._locks.setdefault(model, asyncio.Lock()):
            if model in self._asked:
                return
            try:
                verdict = await ask_canary(self.llm, model, options)
            except Exception as exc:  # an outage: the job's own call meets it and says so
                log.info("model %s: the canary waits for the next job (%s)", model, describe(exc))
                return
            self._asked.add(model)
            if verdict is not None:
                self.llm.modes.note_fitness(model, verdict.fit, verdict.reason)
