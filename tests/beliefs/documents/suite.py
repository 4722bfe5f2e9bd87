"""The passage-retrieval suite: questions over the committed docs folder, half of them traps
that must find nothing, scored for precision and recall like the belief suites."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from beliefs.context.assembly import ContextRequest, covering
from beliefs.context.citations import where
from beliefs.documents import DocumentFile, finder_for, ingest, supported
from beliefs.store.belief_store import BeliefStore

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
QUESTIONS = HERE / "questions.json"
USER = "suite"


def folder_files(folder: Path) -> list[DocumentFile]:
    out = []
    for path in sorted(folder.rglob("*")):
        fmt = supported(path.name)
        if path.is_file() and fmt:
            text = path.read_text(encoding="utf-8")
            out.append(DocumentFile(path.relative_to(folder).as_posix(), text, fmt, len(text)))
    return out


def load_corpus(store: BeliefStore) -> None:
    for name in ("runbooks", "handbook"):
        folder = CORPUS / name
        ingest(store, USER, f"docs:{name}", folder_files(folder), root=str(folder))


@dataclass
class Score:
    delivered: int = 0
    correct: int = 0
    expected: int = 0
    found: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.delivered if self.delivered else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 1.0


def run_suite(store: BeliefStore) -> Score:
    finder = finder_for(store)
    score = Score()
    for case in json.loads(QUESTIONS.read_text(encoding="utf-8")):
        scope = f"domain:docs/{case['scope']}"
        request = ContextRequest(user_id=USER, scopes=(scope,), query=case["q"])
        hits = finder.for_turn(request, lambda b: True, covering((scope, "user:universal")))
        got = [where(h.belief) for h in hits]
        expect = set(case["expect"])
        score.delivered += len(got)
        score.correct += sum(1 for g in got if g in expect)
        score.expected += len(expect)
        score.found += len(expect & set(got))
        if set(got) - expect or expect - set(got):
            score.misses.append(
                f"{case['q']!r} [{case['scope']}]: got {got}, want {sorted(expect)}"
            )
    return score
