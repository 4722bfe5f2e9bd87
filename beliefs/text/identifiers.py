"""Reading code and mixed scripts: the words inside identifiers, paths and script runs.

`helm/values.yaml`, `src/app/helm_release.py`, `INFORMATION_SCHEMA.JOBS`, `fct_orders` and
`BigQueryClient` name things a belief may be about, yet as whole tokens they match no alias.
An identifier is split at `/`, `.`, `_`, `::`, `-` and camel humps into its words, each kept
with the whole (and adjacent humps joined: `BigQueryClient` also gives "bigquery"). A path
from `/`, `~/`, `./` or `../` is read as any other, a Windows one (on a drive or a share) also
as far as each of its folders goes, a snake_case file in a path also as a name writes it
("ci post clone.sh"), a hidden file or folder keeps its dot as well
(`.github/workflows/ci.yml` gives ".github/workflows"), and a URL gives its host with its
scheme ("s3://rtl-raw-telemetry", as an alias writes a bucket). A name pinned, tagged or
assigned gives its name (`ruff==0.6.1`, `redis:7-alpine`, `ENV=prod`); pinned or tagged, it is
written as a name (`code_terms` returns those too).

A word that runs from Latin letters into Hangul, kana or Han characters ("BigQueryの",
"helm차트") is two words: the scripts are split apart before the text is read.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

MAX_CODE_TERMS = 48  # a long trace names many things; its first identifiers are kept
_CJK = "\u1100-\u11ff\u3000-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff01-\uffef"
_SCRIPT_BOUNDARY = re.compile(rf"(?<=[A-Za-z0-9])(?=[{_CJK}])|(?<=[{_CJK}])(?=[A-Za-z0-9])")
_OTHER_SCRIPT = re.compile(rf"[{_CJK}]")
# A token of code: an identifier, dotted or pathed name (`a.b_c`, `src/app.py`, `Foo::bar`)
# (a hidden file or folder keeps its dot: `.github/workflows`, `.nvmrc`)
_CODE_TOKEN = re.compile(r"\.?[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|/|::|-)[A-Za-z0-9_]+)*")
_SEPARATORS = re.compile(r"[/._:\-]+")
_SEGMENTS = re.compile(r"/|::")  # a path's or a qualified name's segments
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_FENCED = re.compile(r"(```|~~~)(.*?)(\1|\Z)", re.DOTALL)
_URL = re.compile(r"\b([a-z][a-z0-9+.-]*)://([^\s?#`'\"<>()\[\]]+)", re.IGNORECASE)
_WORDS_OF = re.compile(r"[a-z]+|\d+")  # a snake_case name's words and numbers
_INLINE = re.compile(r"`([^`\n]*)`")
# In prose: a word with an identifier's inner separator (`fct_orders`, `model.shop.x`, `a/b`)
# (after `/`, `~/`, `./` or `../`, and with a hidden folder's dot: `~/.ssh/config`; a host
# whose first label is a number: `4821930.dkr.ecr.eu-west-1.amazonaws.com`)
_PROSE_IDENTIFIER = re.compile(
    r"(?<![\w/.~$-])(?:~/|\.\.?/|/|\$[A-Za-z_]+/|\d+\.)?\.?[A-Za-z_][A-Za-z0-9-]*(?:(?:_|\.|/|::)[A-Za-z0-9-]+)+(?:/)?"
    r"|(?<![\w/])[A-Za-z]*[a-z][A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # three humps: `BigQueryClient`
)
# What every identifier `_PROSE_IDENTIFIER` finds holds: a separator before a letter, digit or
# hyphen ("feature_flags", "app.py", "src/", "std::vec"), or a hump ("BigQueryClient")
_MAYBE_IDENTIFIER = re.compile(r"[_./:][A-Za-z0-9-]|[a-z][A-Z]")
# A name pinned, tagged or assigned: `ruff==0.6.1`, `redis:7-alpine`, `ENV=prod`
_PINNED = re.compile(
    r"(?<![\w/.-])([A-Za-z_][\w.-]*?)([=<>!~]=|=|[:@](?=v?\d))(v?\d)?([A-Za-z_][\w.-]*)?"
)
# A Windows path, on a drive or a share: `Z:\Progetti`, `\\fs02\extracts\orchard\`
_WINDOWS_PATH = re.compile(r"(?<![\w\\])(?:[A-Za-z]:|\\\\[\w.$-]+)(?:\\[^\\\s,;:!?'\"()]+)+\\?")
_CALL = re.compile(r"(?<![\w/.-])[A-Za-z_][A-Za-z0-9_]*(?=\()")  # `=VLOOKUP(B2,...)`
# A method called on what the sentence names, written alone: "14x .unwrap() im handler"
_METHOD = re.compile(r"(?<!\S)\.([A-Za-z_][A-Za-z0-9_]*)(?=\()")


def split_scripts(text: str) -> str:
    """`text` with a space wherever Latin letters or digits meet Hangul, kana or Han."""
    if text.isascii():
        return text
    return _SCRIPT_BOUNDARY.sub(" ", text)


def has_other_script(text: str) -> bool:
    """Whether `text` holds Hangul, kana or Han characters."""
    return not text.isascii() and _OTHER_SCRIPT.search(text) is not None


@lru_cache(maxsize=16_384)
def identifier_words(token: str) -> tuple[str, ...]:
    """The words of one identifier or path, lower-cased: the whole, its parts, and adjacent
    camel humps joined ("helm_release" -> helm_release, helm, release)."""
    whole = token.strip("/.-_:").lower()
    out: dict[str, None] = {whole: None} if whole else {}
    hidden = "." if token.startswith(".") else ""  # `.github/workflows/ci.yml`: its dot too
    if hidden and whole:
        out[hidden + whole] = None
    for piece in _SEPARATORS.split(token):
        humps = _HUMP.findall(piece)
        if len(humps) > 1:
            out[piece.lower()] = None
            out.update(dict.fromkeys(a.lower() + b.lower() for a, b in itertools.pairwise(humps)))
        out.update(dict.fromkeys(h.lower() for h in humps))
    for segment in _SEGMENTS.split(whole):  # "values-prod.yaml" of a path, and "values-prod"
        if segment != whole and any(ch in segment for ch in "._-"):
            out[segment] = None
            if "." in segment.strip("."):
                out[segment.rsplit(".", 1)[0]] = None
    if "." in whole.strip("."):  # a file's kind: ".mscz" of "arrangements/skye_v3.mscz"
        ext = whole.rsplit(".", 1)[1]
        if 1 < len(ext) <= 5 and ext.isalnum() and not ext.isdigit():
            out["." + ext] = None
    if "/" in whole:  # the folders a file is in: "infra/modules/vpc" of ".../vpc/main.tf"
        folders = whole.split("/")
        out.update(dict.fromkeys("/".join(folders[:end]) for end in range(2, len(folders))))
        if hidden:
            out.update(
                dict.fromkeys(hidden + "/".join(folders[:end]) for end in range(1, len(folders)))
            )
    return tuple(w for w in out if len(w) > 1 and not w.isdigit())


def code_terms(text: str) -> tuple[list[str], list[str], list[str]]:
    """Words written as code in `text` (code spans, fenced blocks, paths, identifiers in
    prose), the phrases their parts make ("feature_flags" -> "feature flags"), and the names
    written with a version or tag (`ruff==0.6.1`, `redis:7-alpine`, `numpy>=1.26`,
    `sharp@0.33`), lower-cased: a package's or an image's name, however everyday the word; not
    a value assigned (`ts=1733350000`)."""
    sources: list[str] = []
    pinned: list[str] = []
    words: dict[str, None] = {}
    if "`" in text or "~~~" in text:
        sources += [m.group(2) for m in _FENCED.finditer(text)]
        sources += _INLINE.findall(_FENCED.sub(" ", text))
    if _MAYBE_IDENTIFIER.search(text) is not None:  # most turns hold none: one linear scan
        sources += _PROSE_IDENTIFIER.findall(text)
    if "=" in text or ":" in text or "@" in text:
        for name, op, version, value in _PINNED.findall(text):
            sources.append(name)
            if value:
                sources.append(value)
            if version and op != "=":
                pinned.append(name.lower())
    if "\\" in text:  # a Windows path: its folders' words, and itself as far as each goes
        for match in _WINDOWS_PATH.finditer(text):
            path = match.group(0).rstrip("\\")
            sources.append(path.replace("\\", "/").lstrip("/"))
            segments = path.lower().split("\\")
            for end in range(2 if segments[0] else 4, len(segments) + 1):
                words["\\".join(segments[:end])] = None
    if "(" in text:
        # a call's name: `=VLOOKUP(B2,Tariffs!A:F,5,FALSE)`, `Instantiate(`, `.unwrap()`
        sources += _CALL.findall(text)
        sources += _METHOD.findall(text)
    if "://" in text:  # a URL's host and path: the bucket of "s3://tidepool-landing/events/"
        for scheme, rest in _URL.findall(text):
            sources.append(rest)
            host = rest.split("/", 1)[0].lower()  # and the bucket as an alias writes it
            words[f"{scheme.lower()}://{host}"] = None
    phrases: dict[str, None] = {}
    for source in sources:
        for token in _CODE_TOKEN.findall(source):
            parts = identifier_words(token)
            if len(parts) > 2:  # the whole and at least two parts: their phrase
                phrase = " ".join(p for p in parts[1:] if p.isalpha())
                if 1 < phrase.count(" ") + 1 <= 4:
                    phrases[phrase] = None
                # with its numbers: "flash attention 2" of `flash_attention_2`
                words_of = _WORDS_OF.findall(token.lower())
                if len(words_of) > 2 and any(w.isdigit() for w in words_of) and len(words_of) <= 4:
                    phrases[" ".join(words_of)] = None
            if "_" in token and ("/" in token or "." in token):
                # a snake_case file in a path as a name writes it: "ci post clone.sh" of
                # `ci_scripts/ci_post_clone.sh` (an alias's underscores are spaces)
                phrases.update(dict.fromkeys(_snake_segments(token)))
            words.update(dict.fromkeys(parts))
            if len(words) >= MAX_CODE_TERMS:
                return list(words)[:MAX_CODE_TERMS], list(phrases), pinned
    return list(words), list(phrases), pinned


def _snake_segments(token: str) -> list[str]:
    """Each snake_case segment of a path or dotted name with its underscores as spaces, of two
    to four words."""
    out = []
    for segment in _SEGMENTS.split(token.lower()):
        spaced = " ".join(segment.replace("_", " ").split())
        if "_" in segment and 1 < spaced.count(" ") + 1 <= 4:
            out.append(spaced)
    return out
