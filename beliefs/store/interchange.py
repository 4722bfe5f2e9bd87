"""Reading and writing belief files: Tenure's JSON array and our JSONL (one `Belief` per line).

JSONL is lossless: every field, `change_log` included, round-trips. Tenure JSON names the id
`_id`; its other fields match ours. Fields Tenure has that we don't know are not dropped and not
rejected: they are kept under `provenance["tenure_extra"]` and written back on Tenure export.
Tenure `change_log` entries are free-form dicts: `at`/`event`/`actor` (or common synonyms such as
`timestamp`, `type`, `by`) are mapped, everything else becomes the event's `detail`, and the
original key names are remembered under `detail["tenure_keys"]`. The parsers validate every
entry before returning; `iter_file` gives entries as it reads them and raises at the end if any
was invalid, so a caller writing them in a transaction writes all or nothing.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import Any, Literal, TextIO, get_args

from pydantic import ValidationError

from beliefs.model.errors import ImportRejected, reason
from beliefs.model.models import Belief, HistoryEvent

Format = Literal["tenure", "jsonl"]
FORMATS: tuple[Format, ...] = ("tenure", "jsonl")

TENURE_FIELDS = (
    "user_id",
    "type",
    "canonical_name",
    "aliases",
    "content",
    "why_it_matters",
    "scope",
    "epistemic_status",
    "confidence",
    "pinned",
    "reinforcement_count",
    "last_reinforced_at",
    "user_edited",
    "resolved_at",
    "superseded_by",
    "created_at",
    "updated_at",
    "change_log",
    "provenance",
)
TENURE_OPTIONAL = ("subtype", "participants", "agent_id", "shared")
_EVENT_KEYS = {
    "at": ("at", "timestamp", "ts", "time", "date", "created_at"),
    "event": ("event", "type", "action", "kind"),
    "actor": ("actor", "by", "user", "source"),
}
_MAX_REPORTED = 10
_HEAD = 4096  # characters read to tell the formats apart


def detect_format(text: str) -> Format:
    """A JSON array is Tenure's format; anything else is read as JSONL."""
    return "tenure" if text.lstrip().startswith("[") else "jsonl"


def read_file(path: Path | str, fmt: Format | None = None) -> list[Belief]:
    """Parse and validate a whole belief file.

    Raises:
        ImportRejected: unreadable file or any invalid entry; names entry, id, field, reason.
    """
    return list(iter_file(path, fmt))


def iter_file(path: Path | str, fmt: Format | None = None) -> Iterator[Belief]:
    """A belief file's entries one at a time, validated; JSONL is read a line at a time, so a
    file of any size is held one entry at a time (a Tenure JSON array is read whole).

    Raises:
        ImportRejected: the file cannot be opened (now), or while iterating: it is not UTF-8
            or an entry is invalid (once the whole file has been read, naming every bad entry;
            the entries before it have been given already, so a caller writing them undoes that).
    """
    path = Path(path)
    try:
        file = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise ImportRejected(f"{path}: no such file") from None
    except OSError as exc:
        raise ImportRejected(f"{path}: cannot read it ({exc.strerror})") from None
    return _entries_of(file, path, fmt)


def _entries_of(file: TextIO, path: Path, fmt: Format | None) -> Iterator[Belief]:
    try:
        with file:
            head = file.read(_HEAD)  # no seeking back: a pipe is read the same way
            fmt = fmt or _detect_head(head)
            if fmt == "tenure":
                yield from parse_tenure(head + file.read(), source=str(path))
            else:
                lines = chain(io.StringIO(head + file.readline()), file)
                yield from _validated(_jsonl_entries(lines, str(path)), str(path))
    except UnicodeDecodeError as exc:
        raise ImportRejected(f"{path}: not UTF-8 text ({exc.reason}); export it as UTF-8") from None
    except OSError as exc:
        raise ImportRejected(f"{path}: cannot read it ({exc.strerror})") from None


def _detect_head(head: str) -> Format:
    """`detect_format` on the file's opening (blank lines before the first entry are few)."""
    return detect_format(head) if head.strip() else "jsonl"


def parse(text: str, fmt: Format | None = None, *, source: str = "input") -> list[Belief]:
    fmt = fmt or detect_format(text)
    return parse_tenure(text, source=source) if fmt == "tenure" else parse_jsonl(text, source)


def parse_tenure(text: str, *, source: str = "input") -> list[Belief]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportRejected(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "nothing was imported"
        ) from None
    if not isinstance(data, list):
        raise ImportRejected(
            f"{source}: Tenure format is a JSON array of beliefs, got {type(data).__name__}; "
            "use --format jsonl for one belief per line"
        )
    return list(_validated(((i, None, entry, True) for i, entry in enumerate(data)), source))


def parse_jsonl(text: str, source: str = "input") -> list[Belief]:
    return list(_validated(_jsonl_entries(text.splitlines(), source), source))


def _jsonl_entries(
    lines: Iterable[str], source: str
) -> Iterator[tuple[int, int | None, Any, bool]]:
    index = 0
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportRejected(
                f"{source}: line {lineno} is not valid JSON (column {exc.colno}: {exc.msg}); "
                "nothing was imported"
            ) from None
        yield index, lineno, entry, False
        index += 1


def _validated(
    entries: Iterable[tuple[int, int | None, Any, bool]], source: str
) -> Iterator[Belief]:
    """Each valid entry until the first invalid one; after it, the rest are only checked, and
    every problem is raised at the end."""
    problems: list[str] = []
    for index, lineno, entry, tenure in entries:
        where = f"entry {index}" + (f" (line {lineno})" if lineno is not None else "")
        found = _problems(where, entry, tenure)
        if isinstance(found, Belief):
            if not problems:
                yield found
        else:
            problems.extend(found)
    if problems:
        more = (
            f" (and {len(problems) - _MAX_REPORTED} more)" if len(problems) > _MAX_REPORTED else ""
        )
        raise ImportRejected(
            f"{source}: " + "; ".join(problems[:_MAX_REPORTED]) + more + "; nothing was imported"
        )


def _problems(where: str, entry: Any, tenure: bool) -> Belief | list[str]:
    """The entry as a belief, or what is wrong with it."""
    if not isinstance(entry, dict):
        return [f"{where}: expected a JSON object, got {type(entry).__name__}"]
    try:
        data = _from_tenure(entry) if tenure else dict(entry)
    except ValueError as exc:
        return [f"{where}{_ident(entry.get('_id') or entry.get('id'))}: {exc}"]
    data.setdefault("source_type", "import")
    try:
        belief = Belief.model_validate_json(json.dumps(data, default=str), strict=True)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "entry"
            got = f" (got {err['input']!r})" if err["type"] != "missing" else ""
            problems.append(f"{where}{_ident(data.get('id'))}: field {field}: {reason(err)}{got}")
        return problems
    return _utc(belief)


def _ident(value: Any) -> str:
    return f" (id {value})" if value else ""


def _from_tenure(entry: dict[str, Any]) -> dict[str, Any]:
    data = dict(entry)
    if "_id" in data:
        if "id" in data:
            raise ValueError("has both _id and id; keep one")
        data["id"] = data.pop("_id")
    extra = {k: data.pop(k) for k in list(data) if k not in Belief.model_fields}
    if extra:
        provenance = data.get("provenance") or {}
        if not isinstance(provenance, dict):
            raise ValueError(f"field provenance: expected an object, got {provenance!r}")
        data["provenance"] = {**provenance, "tenure_extra": extra}
    log = data.get("change_log")
    if log is not None:
        if not isinstance(log, list):
            raise ValueError(f"field change_log: expected a list, got {type(log).__name__}")
        fallback = data.get("updated_at") or data.get("created_at")
        data["change_log"] = [_event_from_tenure(e, n, fallback) for n, e in enumerate(log)]
    return data


def _event_from_tenure(entry: Any, n: int, fallback_at: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ValueError(f"field change_log.{n}: expected an object, got {entry!r}")
    rest = dict(entry)
    out: dict[str, Any] = {}
    keys: dict[str, str | None] = {}
    for name, synonyms in _EVENT_KEYS.items():
        found = next((k for k in synonyms if k in rest), None)
        keys[name] = found
        if found is not None:
            out[name] = rest.pop(found)
    if out.get("at") is None:
        if fallback_at is None:
            raise ValueError(f"field change_log.{n}: has no time (at/timestamp)")
        out["at"] = fallback_at
    if not isinstance(out.get("event"), str):
        out["event"] = "change" if out.get("event") is None else str(out["event"])
    if out.get("actor") is not None and not isinstance(out["actor"], str):
        out["actor"] = json.dumps(out["actor"])
    if keys != {"at": "at", "event": "event", "actor": "actor"}:
        rest["tenure_keys"] = keys
    out["detail"] = rest
    return out


# The fields that can hold a time (a million entries are imported at a time: walking every
# field of each costs more than these few).
_TIME_FIELDS = tuple(
    name
    for name, info in Belief.model_fields.items()
    if info.annotation is datetime or datetime in get_args(info.annotation)
)


def _utc(belief: Belief) -> Belief:
    """Times without a zone are taken as UTC, so they compare and round-trip."""
    updates: dict[str, Any] = {}
    for name in _TIME_FIELDS:
        value = getattr(belief, name)
        if isinstance(value, datetime) and value.tzinfo is None:
            updates[name] = value.replace(tzinfo=UTC)
    if any(e.at.tzinfo is None for e in belief.change_log):
        updates["change_log"] = [
            e.model_copy(update={"at": e.at.replace(tzinfo=UTC)}) if e.at.tzinfo is None else e
            for e in belief.change_log
        ]
    return belief.model_copy(update=updates) if updates else belief


# -- export ------------------------------------------------------------------------------------


def to_jsonl(beliefs: Iterable[Belief]) -> Iterator[str]:
    """One line per belief, every field (the lossless format)."""
    for belief in beliefs:
        yield belief.model_dump_json()


def to_tenure(beliefs: Sequence[Belief]) -> str:
    """Tenure's JSON array. Fields Tenure lacks (review_state, delivery, …) are not written."""
    return json.dumps([_tenure_entry(b) for b in beliefs], indent=2, ensure_ascii=False)


def _tenure_entry(belief: Belief) -> dict[str, Any]:
    data = belief.model_dump(mode="json")
    provenance = dict(data["provenance"])
    extra = provenance.pop("tenure_extra", None)
    data["provenance"] = provenance
    out: dict[str, Any] = {"_id": data["id"]}
    out.update({k: data[k] for k in TENURE_FIELDS})
    out.update({k: data[k] for k in TENURE_OPTIONAL if data[k] not in (None, [], False)})
    out["change_log"] = [_event_to_tenure(e) for e in belief.change_log]
    if isinstance(extra, dict):
        out.update({k: v for k, v in extra.items() if k not in out})
    return out


def _event_to_tenure(event: HistoryEvent) -> dict[str, Any]:
    data = event.model_dump(mode="json")
    detail = dict(data["detail"])
    keys = detail.pop("tenure_keys", None)
    names: dict[str, Any] = (
        keys if isinstance(keys, dict) else {"at": "at", "event": "event", "actor": "actor"}
    )
    out: dict[str, Any] = {}
    for name in ("at", "event", "actor"):
        key = names.get(name)
        if key is not None and not (name == "actor" and data["actor"] is None and keys is None):
            out[key] = data[name]
    out.update({k: v for k, v in detail.items() if k not in out})
    return out
