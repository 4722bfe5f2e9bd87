"""Redaction: our rules against detect-secrets' detectors on the secret corpus.

For each line of `tests/extractor/secret_corpus.py` and `secret_corpus_general.py` (run
with `--general` for the second alone) a redactor "catches" the secret when no
part of it is left in the line after every span it detected is replaced; on the lines that
hold no secret it should change nothing. Time is per line, both in the same run.

detect-secrets is used the way a line scanner can be: `scan_line` with its named-format
plugins (its entropy plugins, in line mode, flag nearly every word and are reported apart).
It also times ours on the sample assistant replies (`tests/fixtures/replies`), against
running every rule over the whole text (what the triggers and the places they stand spare).
Run: `.venv/bin/python bench/redaction_eval.py`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractor.redact import REDACTED, redact, redact_every_rule  # noqa: E402
from tests.extractor import secret_corpus, secret_corpus_general  # noqa: E402

if "--general" in sys.argv:
    SECRETS, NOT_SECRETS = secret_corpus_general.SECRETS, secret_corpus_general.NOT_SECRETS
else:
    SECRETS = secret_corpus.SECRETS + secret_corpus_general.SECRETS
    NOT_SECRETS = secret_corpus.NOT_SECRETS + secret_corpus_general.NOT_SECRETS

_ENTROPY = ("Base64HighEntropyString", "HexHighEntropyString")


def detect_secrets_redactor(entropy: bool) -> Callable[[str], str]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    names = [cls.__name__ for cls in get_mapping_from_secret_type_to_class().values()]
    plugins = [{"name": n} for n in names if entropy or n not in _ENTROPY]

    def run(text: str) -> str:
        with transient_settings({"plugins_used": plugins}):
            found = {s.secret_value for line in text.split("\n") for s in scan_line(line)}
        for value in sorted((v for v in found if v), key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    return run


def evaluate(name: str, redactor: Callable[[str], str]) -> None:
    missed = [case.name for case in SECRETS if case.secret in redactor(case.line)]
    changed = [line for line in NOT_SECRETS if redactor(line) != line]
    lines = [case.line for case in SECRETS] + list(NOT_SECRETS)
    began = time.perf_counter()
    rounds = 20
    for _ in range(rounds):
        for line in lines:
            redactor(line)
    per_line_us = (time.perf_counter() - began) / (rounds * len(lines)) * 1e6
    caught = len(SECRETS) - len(missed)
    print(
        f"{name:<34} caught {caught:>2}/{len(SECRETS)}  prose changed {len(changed):>2}/"
        f"{len(NOT_SECRETS)}  {per_line_us:>9.1f} µs/line"
    )
    if missed:
        print(f"{'':<34} missed: {', '.join(missed)}")
    if changed:
        print(f"{'':<34} changed: {' | '.join(changed)}")


def replies(redactor: Callable[[str], str], name: str) -> None:
    """Time per KB of the sample assistant replies (tests/fixtures/replies): a reply is the
    longest text of a turn, redacted on the request path when its job is built."""
    texts = [p.read_text() for p in sorted((ROOT / "tests/fixtures/replies").glob("*.md"))]
    began = time.perf_counter()
    rounds = 50
    for _ in range(rounds):
        for text in texts:
            redactor(text)
    kb = sum(len(text) for text in texts) / 1000
    print(f"{name:<34} {(time.perf_counter() - began) / (rounds * kb) * 1e6:9.1f} µs per KB")


def main() -> None:
    evaluate("ours (extractor/redact.py)", redact)
    evaluate("ours, every rule over every line", redact_every_rule)
    replies(redact, "ours, sample replies")
    replies(redact_every_rule, "ours, every rule, sample replies")
    evaluate("detect-secrets, format plugins", detect_secrets_redactor(entropy=False))
    evaluate("detect-secrets, all plugins", detect_secrets_redactor(entropy=True))


if __name__ == "__main__":
    main()
