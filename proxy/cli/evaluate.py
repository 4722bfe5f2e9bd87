"""`tenure eval`: run Tenure-format retrieval cases in a temporary store."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from beliefs.evaluation import (
    CaseResult,
    StoreEvalBackend,
    load_personas,
    run_cases,
    run_sessions,
)
from beliefs.index.semantic import enable as enable_semantic
from beliefs.model.errors import BeliefError
from beliefs.opening import open_store
from beliefs.store.interchange import read_file
from proxy.settings import Settings


def register(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "eval", help="run retrieval cases (Tenure format) against a temporary store"
    )
    cmd.add_argument("--beliefs", required=True, help="seed beliefs (Tenure JSON or JSONL)")
    cmd.add_argument("--cases", required=True, help="single-query cases (JSON array)")
    cmd.add_argument("--sessions", help="multi-turn session cases (JSON array)")
    cmd.add_argument("--persona", help="persona.json: user -> {universal, per_scope}")
    cmd.add_argument("--report", help="write a JSON report, one entry per case, to this file")
    cmd.set_defaults(handler=_eval)


def _load_json(path: str, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BeliefError(f"{what} file {path} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BeliefError(f"{what} file {path} is not valid JSON: {exc}") from None


def _cases(path: str, what: str) -> list[dict[str, Any]]:
    data = _load_json(path, what)
    if not isinstance(data, list) or not all(isinstance(c, dict) and "caseId" in c for c in data):
        raise BeliefError(f"{what} file {path} must be a JSON array of objects with a caseId")
    return data


def _eval(args: argparse.Namespace, settings: Settings) -> int:
    # the run never touches TENURE_HOME; of the settings only TENURE_SEMANTIC counts
    beliefs = read_file(args.beliefs)
    cases = _cases(args.cases, "cases")
    sessions = _cases(args.sessions, "sessions") if args.sessions else []
    personas = load_personas(_load_json(args.persona, "persona")) if args.persona else {}
    with (
        tempfile.TemporaryDirectory(prefix="tenure-eval-") as tmp,
        open_store(Path(tmp) / "eval.duckdb") as store,
    ):
        store.import_beliefs(beliefs)
        if settings.semantic:
            enable_semantic(store.index)
        backend = StoreEvalBackend(store, personas)
        results = run_cases(backend, cases) + run_sessions(backend, sessions)
    return _summarise(results, args.report)


def _summarise(results: list[CaseResult], report: str | None) -> int:
    failed = [r for r in results if not r.passed]
    for result in failed:
        print(f"FAIL {result.case_id}: {'; '.join(result.failures)}")
    if report:
        Path(report).write_text(
            json.dumps([r.report() for r in results], indent=2, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0
