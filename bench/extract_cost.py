"""What extraction costs per turn: prompt tokens the provider charges at the full rate.

Replays the shipped evaluation conversations (`tenure eval-extract`'s set) through the real
extraction path (LiteLLM, the workers, a DuckDB store) against a scripted model that answers
each turn's gold, in two output modes: `json_schema` (hosted providers; the schema travels in
`response_format`) and `json_object` (the schema outlined in the prompt, as for llama.cpp-based
servers). The stand-in counts prompt tokens with cl100k (the tokenizer the context budget
uses), schema included, and plays OpenAI's automatic prompt cache: of a prompt of 1,024 tokens
or more, the start it shares with an earlier prompt is cached, in steps of 128.

Printed per mode: prompt tokens per turn (all of it: what a provider without a prompt cache
charges), uncached prompt tokens per turn (what is charged in full with the cache), model calls
per turn, turns the pre-check skipped, and gold lost (the reference model must still score full
marks). Skipped turns count as turns that cost nothing.

Last, calls per turn with a backlog: every turn pending at once before one worker starts, so
turns of one conversation share a call (`TENURE_EXTRACT_BATCH_TURNS`), against a model that
answers every call with an empty result.

First, before and after per call: the previous prompt (kept in `bench/data/`) and the current
one, built in this run for the same turns without known beliefs, counted the same way.

Run: `.venv/bin/python bench/extract_cost.py [--only ID ...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from beliefs.context.tokens import token_counter  # noqa: E402
from beliefs.opening import open_store  # noqa: E402
from beliefs.store.thread import StoreThread  # noqa: E402
from extractor.config import ExtractionConfig  # noqa: E402
from extractor.eval_set import Conversation, load_conversations  # noqa: E402
from extractor.evaluation import ModelScore, eval_turn  # noqa: E402
from extractor.jobs import JobQueue  # noqa: E402
from extractor.prompts import build_messages  # noqa: E402
from extractor.schema import ExtractionOutput, outline, response_format, wire_schema  # noqa: E402
from extractor.turn import Turn  # noqa: E402
from extractor.worker import ExtractionWorkers  # noqa: E402
from tests.extractor.fake_llm import FakeChatModel, extraction  # noqa: E402
from tests.fakes.local_model import Behaviour, LocalModel  # noqa: E402
from tests.fakes.reference_model import reference_brain, score_brain  # noqa: E402

TARGET = 700
BEFORE = ROOT / "bench" / "data" / "extract_prompt_before.json"
Request = tuple[dict[str, Any], list[dict[str, Any]]]


def before(conversations: list[Conversation], mode: str) -> Iterator[Request]:
    """The previous prompt for each turn: its messages, with the turn in its old form."""
    old = json.loads(BEFORE.read_text(encoding="utf-8"))
    for c in conversations:
        for t in c.turns:
            turn = old["turn_template"].replace("{scope}", ", ".join(c.scopes))
            turn = turn.replace("{user}", t.user).replace("{assistant}", t.assistant)
            messages = [*old["messages"], {"role": "user", "content": turn}]
            if mode == "json_schema":
                yield {"response_format": old["response_format"]}, messages
            else:
                messages[0] = {"role": "system", "content": old["json_object_system"]}
                yield {"response_format": {"type": "json_object"}}, messages


def after(conversations: list[Conversation], mode: str) -> Iterator[Request]:
    """The current prompt for each turn, as the structured call sends it (no known beliefs)."""
    fmt = response_format(ExtractionOutput, "extraction")
    shape = outline(wire_schema(ExtractionOutput))
    rules = f"\n\nThe reply is one JSON object with every key below:\n{shape}"
    for c in conversations:
        for t in c.turns:
            turn = Turn(
                request_id="r",
                user_id="u",
                scopes=c.scopes,
                model="m",
                user_message=t.user,
                assistant_message=t.assistant,
            )
            messages = build_messages(turn, [], c.scopes)
            if mode == "json_schema":
                yield {"response_format": fmt}, messages
            else:
                messages[0] = {"role": "system", "content": messages[0]["content"] + rules}
                yield {"response_format": {"type": "json_object"}}, messages


def per_call(requests: Iterator[Request]) -> tuple[float, float]:
    """Prompt tokens per call, and of them uncached under OpenAI's cache rule."""
    cache = LocalModel(Behaviour(prompt_cache=True), count_tokens=token_counter())
    totals = [cache.cache_usage(body, messages) for body, messages in requests]
    prompt = sum(u["prompt_tokens"] for u in totals)
    cached = sum(u["prompt_tokens_details"]["cached_tokens"] for u in totals)
    return prompt / len(totals), (prompt - cached) / len(totals)


def run(conversations: list[Conversation], behaviour: Behaviour) -> ModelScore:
    return score_brain(conversations, reference_brain(conversations), behaviour)


def lost(score: ModelScore) -> int:
    """Gold the reference model should have written and did not (0 when nothing was lost)."""
    return (
        score.facts_expected
        - score.facts_found
        + score.rejected_expected
        - score.rejected_captured
        + score.supersessions_expected
        - score.supersessions_detected
        + score.questions_expected
        - score.questions_found
    )


async def backlog_calls(conversations: list[Conversation], batch_turns: int) -> int:
    """Model calls to extract every turn when all of them are pending at once."""
    llm = FakeChatModel()
    llm.default = extraction()
    config = ExtractionConfig(model="eval", canary=False, batch_turns=batch_turns)
    with tempfile.TemporaryDirectory(prefix="tenure-extract-cost-") as tmp:
        store = open_store(Path(tmp) / "cost.duckdb")
        thread = StoreThread(store)
        try:
            queue = JobQueue(store)
            for c in conversations:
                for n, t in enumerate(c.turns):
                    queue.enqueue(eval_turn(c, n, t))
            await ExtractionWorkers(thread, queue, llm, config).drain()
        finally:
            thread.close()
            store.close()
    return len(llm.calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="only this conversation id")
    args = parser.parse_args()
    conversations = load_conversations()
    if args.only:
        conversations = [c for c in conversations if c.id in set(args.only)]
    turns = sum(len(c.turns) for c in conversations)
    print(f"{len(conversations)} conversations, {turns} turns; tokens counted with cl100k")
    print("per call, no known beliefs: prompt tokens (uncached with OpenAI's cache)")
    for mode in ("json_schema", "json_object"):
        old, new = per_call(before(conversations, mode)), per_call(after(conversations, mode))
        print(
            f"  {mode:<12} before {old[0]:>6.0f} ({old[1]:>5.0f})   now {new[0]:>6.0f} "
            f"({new[1]:>5.0f})"
        )
    print("per turn, the whole path:")
    print(
        f"{'mode':<12} {'prompt/turn':>11} {'uncached/turn':>13} {'calls/turn':>10} "
        f"{'skipped':>9} {'gold lost':>9}"
    )
    for mode, behaviour in (
        ("json_schema", Behaviour(prompt_cache=True)),
        ("json_object", Behaviour(refuse_json_schema=True, prompt_cache=True)),
    ):
        score = run(conversations, behaviour)
        print(
            f"{mode:<12} {score.prompt_tokens_per_turn:>11g} "
            f"{score.uncached_prompt_tokens_per_turn:>13g} {score.calls_per_turn:>10g} "
            f"{score.turns_skipped:>4}/{score.turns:<4} {lost(score):>9}"
        )
    print(f"target: at most {TARGET} uncached prompt tokens per turn, no gold lost")
    alone, batched = (asyncio.run(backlog_calls(conversations, n)) for n in (1, 4))
    print(
        f"calls per turn with every turn pending at once: {batched / turns:.2f} in batches of "
        f"up to 4 turns, {alone / turns:.2f} one turn per call"
    )


if __name__ == "__main__":
    main()
