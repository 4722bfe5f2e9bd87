"""How a document passage reads in the prompt, and the citation the model is asked to give.

A passage (`provenance["kind"] == "passage"`, written by `beliefs.documents`) is delivered as
its text under the file and heading it came from; its citation is `- <scope>: <file> ›
<heading>`.
"""

from __future__ import annotations

from beliefs.model.record import AnyBelief

MAX_PASSAGE_CHARS = 1500
PASSAGE_KIND = "passage"


def is_passage(belief: AnyBelief) -> bool:
    return belief.provenance.get("kind") == PASSAGE_KIND


def where(belief: AnyBelief) -> str:
    """`<file> › <heading>` (the file alone for text before any heading)."""
    prov = belief.provenance
    parts = [str(prov.get("file") or belief.canonical_name)]
    parts.extend(str(h) for h in prov.get("heading") or ())
    return " › ".join(parts)


def citation(belief: AnyBelief) -> str:
    return f"- {belief.scope[0]}: {where(belief)}"


def passage_line(belief: AnyBelief) -> str:
    text = " ".join(belief.content.split())
    if len(text) > MAX_PASSAGE_CHARS:
        text = text[: MAX_PASSAGE_CHARS - 1].rstrip() + "…"
    lines = list(belief.provenance.get("lines") or ())
    span = f", lines {lines[0]}-{lines[1]}" if len(lines) == 2 else ""
    return f"- [{belief.id}] {where(belief)}{span}: {text}"


def cite_instruction(citations: list[str]) -> str:
    listed = "\n".join(dict.fromkeys(citations))
    return (
        "Cite the passages you use at the end of your answer under a '##### Sources' heading, "
        "one line each, as given here:\n" + listed
    )
