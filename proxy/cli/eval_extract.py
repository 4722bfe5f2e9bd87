"""`tenure eval-extract`: score extraction models on conversations with expected beliefs."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from beliefs.model.errors import BeliefError
from extractor.eval_set import Conversation, load_conversations
from extractor.evaluation import ModelScore, evaluate, summary_json
from proxy.runtime import chat_model_for, extraction_config
from proxy.settings import Settings


def register(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "eval-extract",
        help="score extraction models on conversations (replayed into a temporary store)",
        description="Replays each conversation through the extraction path with the model into "
        "a temporary store (TENURE_HOME is not touched), then scores what retrieval finds. "
        "Several --model flags compare models side by side.",
    )
    cmd.add_argument(
        "--model",
        action="append",
        help="LiteLLM model string (repeat to compare); default TENURE_EXTRACT_MODEL",
    )
    cmd.add_argument("--api-base", help="the models' server (default TENURE_EXTRACT_API_BASE)")
    cmd.add_argument("--conversations", help="a conversation set (JSON); default: the shipped one")
    cmd.add_argument("--only", action="append", help="run only this conversation id (repeatable)")
    cmd.add_argument("--report", help="write the scores as JSON to this file")
    cmd.add_argument(
        "--compare",
        nargs="+",
        metavar="REPORT",
        help="print saved --report files side by side instead of running",
    )
    cmd.add_argument("--details", action="store_true", help="list what each conversation missed")
    cmd.set_defaults(handler=_eval_extract)


def _eval_extract(args: argparse.Namespace, settings: Settings) -> int:
    if args.compare:
        scores = [score for path in args.compare for score in _read_report(path)]
        print(comparison(scores))
        return 0
    models: list[str] = args.model or ([settings.extract_model] if settings.extract_model else [])
    if not models:
        raise BeliefError(
            "no model to evaluate: pass --model (e.g. --model ollama_chat/qwen2.5:3b) or set "
            "TENURE_EXTRACT_MODEL"
        )
    conversations = _selected(load_conversations(args.conversations), args.only)
    scores = asyncio.run(_run(settings, models, args.api_base, conversations))
    if args.report:
        Path(args.report).write_text(summary_json(scores), encoding="utf-8")
    print(comparison(scores))
    if args.details:
        for score in scores:
            for one in score.details:
                if one.missed:
                    print(f"{score.model} {one.id}: missed {'; '.join(one.missed)}")
    return 0


def _selected(conversations: list[Conversation], only: Sequence[str] | None) -> list[Conversation]:
    if not only:
        return conversations
    known = {c.id for c in conversations}
    unknown = [i for i in only if i not in known]
    if unknown:
        raise BeliefError(
            f"no conversation {unknown[0]!r} in the set; ids: {', '.join(sorted(known))}"
        )
    return [c for c in conversations if c.id in set(only)]


async def _run(
    settings: Settings,
    models: Sequence[str],
    api_base: str | None,
    conversations: Sequence[Conversation],
) -> list[ModelScore]:
    scores = []
    for model in models:
        own = settings.model_copy(
            update={
                "extract_model": model,
                "extract_api_base": api_base or settings.extract_api_base,
            }
        )
        llm = chat_model_for(own)
        await llm.library.get()  # the import is not the first job's time
        # Every job runs once: a failure is a score, not something to retry or cool down from.
        config = replace(
            extraction_config(own), workers=1, max_attempts=1, breaker_threshold=1_000_000
        )
        print(f"evaluating {model} on {len(conversations)} conversations …", file=sys.stderr)
        try:
            score = await evaluate(llm, config, conversations)
            unfit = llm.modes.unfit(model)
            if llm.modes.snapshot().get(model, {}).get("fit") is not None:
                score.canary = f"failed: {unfit}" if unfit else "passed"
            scores.append(score)
        finally:
            await llm.aclose()
    return scores


def _read_report(path: str) -> list[ModelScore]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return [ModelScore(**{k: v for k, v in item.items() if k != "details"}) for item in data]
    except FileNotFoundError:
        raise BeliefError(f"report file {path} does not exist") from None
    except (json.JSONDecodeError, TypeError, AttributeError) as exc:
        raise BeliefError(
            f"report file {path} is not an eval-extract report ({exc}); write one with --report"
        ) from None


def _ratio(found: int, expected: int) -> str:
    if not expected:
        return "-"
    return f"{found}/{expected} {round(100 * found / expected)}%"


def comparison(scores: Sequence[ModelScore]) -> str:
    """A side-by-side table: one column per model."""
    rows: list[tuple[str, list[str]]] = [
        ("conversations (turns)", [f"{s.conversations} ({s.turns})" for s in scores]),
        ("canary (a turn with a known answer)", [s.canary or "not asked" for s in scores]),
        ("facts found by retrieval", [_ratio(s.facts_found, s.facts_expected) for s in scores]),
        (
            "rejected alternatives captured",
            [_ratio(s.rejected_captured, s.rejected_expected) for s in scores],
        ),
        ("  chosen option rejected (want 0)", [str(s.chosen_rejected) for s in scores]),
        (
            "right belief superseded",
            [_ratio(s.supersessions_detected, s.supersessions_expected) for s in scores],
        ),
        ("  superseded wrongly (want 0)", [str(s.superseded_wrongly) for s in scores]),
        ("open questions", [_ratio(s.questions_found, s.questions_expected) for s in scores]),
        (
            "beliefs the gold accounts for",
            [_ratio(s.beliefs_written - s.noise, s.beliefs_written) for s in scores],
        ),
        ("  noise: beliefs not in the gold", [str(s.noise) for s in scores]),
        (
            "small talk left alone",
            [_ratio(s.small_talk_clean, s.small_talk_expected) for s in scores],
        ),
        ("  beliefs from small talk (want 0)", [str(s.chit_chat_beliefs) for s in scores]),
        ("copied from the examples (want 0)", [str(s.copied_from_example) for s in scores]),
        ("jobs failed", [f"{s.jobs_failed}/{s.jobs}" for s in scores]),
        (
            "  why",
            [", ".join(f"{k} {v}" for k, v in s.failures.items()) or "-" for s in scores],
        ),
        ("seconds per job (max)", [f"{s.seconds_per_job} ({s.seconds_max})" for s in scores]),
        (
            "tokens per job (in / out)",
            [f"{s.prompt_tokens_per_job:g} / {s.completion_tokens_per_job:g}" for s in scores],
        ),
        (
            "uncached prompt tokens per turn",
            [f"{s.uncached_prompt_tokens_per_turn:g}" for s in scores],
        ),
        ("model calls per turn", [f"{s.calls_per_turn:g}" for s in scores]),
        ("turns skipped by the pre-check", [_ratio(s.turns_skipped, s.turns) for s in scores]),
        ("output modes", [", ".join(f"{k} {v}" for k, v in s.modes.items()) for s in scores]),
    ]
    header = ("", [s.model for s in scores])
    table = [header, *rows]
    label_width = max(len(label) for label, _ in table)
    widths = [max(len(cells[i]) for _, cells in table) for i in range(len(scores))]
    lines = []
    for label, cells in table:
        padded = "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))
        lines.append(f"{label.ljust(label_width)}  {padded}".rstrip())
    return "\n".join(lines)
