"""The retrieval corpora under tests/beliefs and the split each belongs to.

Training: the blind-spot suite, held-out A to F, ZL and ZM (the relevance model is fitted on
these; ZL and ZM were written for it, and their first figures taken before it was fitted again).
Development: held-out G, H, N, Z and ZA (choices are checked on these; N, Z and ZA became ones
once their first figures were taken and their failures read). Test: every other `heldout-*`
directory (I, J, K and any added later): never fitted or tuned on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "tests" / "beliefs"
TRAINING = (
    "blindspots",
    "heldout",
    "heldout-c",
    "heldout-d",
    "heldout-e",
    "heldout-f",
    "heldout-zl",
    "heldout-zm",
    "heldout-zv",
    "heldout-zw",
    "heldout-ta",
    "heldout-tb",
    "heldout-tc",
)
DEVELOPMENT = ("heldout-g", "heldout-h", "heldout-n", "heldout-z", "heldout-za")


@dataclass(frozen=True)
class Corpus:
    name: str
    split: str  # "training", "development" or "test"
    beliefs: tuple[Path, ...]
    cases: Path


def split_of(directory: str) -> str:
    if directory in TRAINING:
        return "training"
    if directory in DEVELOPMENT:
        return "development"
    return "test"


def corpora() -> list[Corpus]:
    """Every corpus, training first, then development, then test (each by name)."""
    blind = CORPORA / "blindspots"
    held = CORPORA / "heldout"
    out = [
        Corpus("blind-spot", "training", (blind / "beliefs.json",), blind / "cases.json"),
        Corpus(
            "held-out A",
            "training",
            (blind / "beliefs.json", held / "beliefs.json"),
            held / "cases.json",
        ),
        Corpus("held-out B", "training", (held / "beliefs.json",), held / "cases-2.json"),
    ]
    for directory in sorted(CORPORA.glob("heldout-*")):
        if (directory / "beliefs.json").is_file() and (directory / "cases.json").is_file():
            letter = directory.name.removeprefix("heldout-").upper()
            out.append(
                Corpus(
                    f"held-out {letter}",
                    split_of(directory.name),
                    (directory / "beliefs.json",),
                    directory / "cases.json",
                )
            )
    order = {"training": 0, "development": 1, "test": 2}
    return sorted(out, key=lambda c: order[c.split])
