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

Run: `.venv/bin/python bench/extract_cost.py [--only ID ...]`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractor.eval_set import Conversation, load_conversations  # noqa: E402
from extractor.evaluation import ModelScore  # noqa: E402
from tests.fakes.local_model import Behaviour  # noqa: E402
from tests.fakes.reference_model import reference_brain, score_brain  # noqa: E402

TARGET = 700


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="only this conversation id")
    args = parser.parse_args()
    conversations = load_conversations()
    if args.only:
        conversations = [c for c in conversations if c.id in set(args.only)]
    turns = sum(len(c.turns) for c in conversations)
    print(f"{len(conversations)} conversations, {turns} turns; tokens counted with cl100k")
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


if __name__ == "__main__":
    main()
