"""`tenure ingest PATH… --scope docs:<name>` and `tenure sources list|remove|restore|purge`.

Each file is its own transaction: Ctrl-C keeps every file finished, and running the command
again resumes (a file unchanged since its last ingest writes nothing). While a server holds
the database the files are read here and sent to its API, in parts.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from beliefs.documents.ingest import (
    DocumentError,
    DocumentFile,
    FileReport,
    docs_scope,
    supported,
)
from proxy.cli.api_client import ApiClient
from proxy.cli.backend import with_backend
from proxy.settings import Settings

BATCH_BYTES = 4 * 1024 * 1024  # per request to a running server
PROGRESS_EVERY = 25


def register(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "ingest", help="ingest documents (files, folders) into a docs scope as cited passages"
    )
    cmd.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    cmd.add_argument("--scope", required=True, help="docs:<name> (domain:docs/<name>)")
    cmd.add_argument("--user", help="whose documents (default: TENURE_DEFAULT_USER)")
    cmd.add_argument("--dry-run", action="store_true", help="print what would change")
    cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    cmd.set_defaults(handler=_ingest)
    group = subparsers.add_parser("sources", help="ingested documents: list, remove, purge")
    sub = group.add_subparsers(title="source commands", metavar="COMMAND", required=True)
    cmd = sub.add_parser("list", help="list sources (deleted ones marked)")
    cmd.add_argument("--scope")
    cmd.add_argument("--user")
    cmd.add_argument("--json", action="store_true")
    cmd.set_defaults(handler=_list)
    for name, handler, text in (
        ("remove", _remove, "delete a source: its passages leave retrieval (undo: restore)"),
        ("restore", _restore, "undo a remove within the grace period"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("id")
        cmd.set_defaults(handler=handler)
    cmd = sub.add_parser("purge", help="remove deleted sources for good (past the grace period)")
    cmd.add_argument("ids", nargs="*", help="deleted sources to purge now, grace or not")
    cmd.set_defaults(handler=_purge)


def read_document(path: Path, shown: str) -> DocumentFile:
    """The file's text and format.

    Raises:
        DocumentError: a format ingest does not read, a PDF without a parser, not UTF-8.
    """
    fmt = supported(path.name)
    if fmt is None:
        raise DocumentError(f"{shown}: not a format ingest reads (.md, .txt, .rst, .html, .pdf)")
    raw = path.read_bytes()
    if fmt == "pdf":
        return DocumentFile(shown, _pdf_text(path, shown), "text", len(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DocumentError(f"{shown}: not UTF-8 text; convert it to UTF-8 first") from None
    return DocumentFile(shown, text, fmt, len(raw))


def _pdf_text(path: Path, shown: str) -> str:
    try:
        pypdf = importlib.import_module("pypdf")
    except ImportError:
        raise DocumentError(
            f"{shown}: reading PDF needs the pdf extra: pip install 'tenure[pdf]' (pypdf)"
        ) from None
    try:
        reader = pypdf.PdfReader(str(path))
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception as exc:  # pypdf raises its own errors and others on damaged files
        raise DocumentError(f"{shown}: not a readable PDF ({exc}); nothing was ingested") from None


def collect(paths: Sequence[str]) -> Iterator[tuple[str, Path, str]]:
    """(root, file, path as cited) for every readable file under `paths`, in name order;
    hidden files and folders are skipped."""
    for raw in paths:
        given = Path(raw).expanduser()
        if given.is_dir():
            root = given.resolve()
            for found in sorted(root.rglob("*")):
                shown = found.relative_to(root).as_posix()
                hidden = any(part.startswith(".") for part in found.relative_to(root).parts)
                if found.is_file() and not hidden and supported(found.name):
                    yield str(root), found, shown
        elif given.is_file():
            yield str(given.resolve()), given, given.name
        else:
            raise DocumentError(f"{raw}: no such file or folder")


class Progress:
    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.done, self.quiet = total, 0, quiet

    def __call__(self, report: FileReport) -> None:
        self.done += 1
        if self.quiet:
            return
        if report.status == "failed":
            print(f"  failed {report.path}: {report.error}", file=sys.stderr)
        elif report.status != "unchanged":
            print(f"  {report.status:<8} {report.path}: {_counts(report)}", file=sys.stderr)
        if self.total >= PROGRESS_EVERY and self.done % PROGRESS_EVERY == 0:
            print(f"  … {self.done}/{self.total} files", file=sys.stderr)


def _counts(r: FileReport | dict[str, Any]) -> str:
    get = r.get if isinstance(r, dict) else lambda k, d=0: getattr(r, k, d)
    return (
        ", ".join(f"{get(k, 0)} {k}" for k in ("kept", "added", "changed", "removed") if get(k, 0))
        or "no passages"
    )


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    scope = docs_scope(args.scope)
    user = args.user or settings.default_user
    by_root: dict[str, list[tuple[Path, str]]] = {}
    for root, path, shown in collect(args.paths):
        by_root.setdefault(root, []).append((path, shown))
    total = sum(len(v) for v in by_root.values())
    progress = Progress(total, args.json)
    reports: list[dict[str, Any]] = []
    try:
        for root, files in by_root.items():
            docs = [read_document(path, shown) for path, shown in files]
            local = functools.partial(_local, user=user, scope=scope, docs=docs, root=root,
                                      args=args, progress=progress)  # fmt: skip
            remote = functools.partial(_remote, user=user, scope=scope, docs=docs, root=root,
                                       args=args, progress=progress)  # fmt: skip
            reports.append(with_backend(settings, local, remote, timeout=600.0, create=True))
    except KeyboardInterrupt:
        print(
            f"interrupted after {progress.done} of {total} file(s); every file finished is "
            "kept: run the command again to resume",
            file=sys.stderr,
        )
        return 130
    return _print_report(reports, args)


def _local(store: Any, user: str, scope: str, docs: list[DocumentFile], root: str,
           args: argparse.Namespace, progress: Progress) -> dict[str, Any]:  # fmt: skip
    from beliefs.documents import MIGRATIONS, ingest

    store.ensure_schema(MIGRATIONS)
    present = [d.path for d in docs]  # a folder's files now: the others leave retrieval
    report = ingest(
        store,
        user,
        scope,
        docs,
        root=root,
        present=present,
        dry_run=args.dry_run,
        progress=progress,
    )
    return report.as_dict()


def _remote(api: ApiClient, user: str, scope: str, docs: list[DocumentFile], root: str,
            args: argparse.Namespace, progress: Progress) -> dict[str, Any]:  # fmt: skip
    present = [d.path for d in docs]
    merged: dict[str, Any] = {"scope": scope, "files": [], "dry_run": args.dry_run}
    for part in _parts(docs) or [[]]:
        body = {
            "scope": scope,
            "user": user,
            "root": root,
            "present": present,
            "dry_run": args.dry_run,
            "epoch": merged.get("epoch"),
            "files": [{"path": d.path, "text": d.text} for d in part],
        }
        answer = api.send("POST", "/api/sources", body)
        merged["epoch"] = answer["epoch"]
        for item in answer["files"]:
            progress(FileReport(**item))
        known = {f["path"] for f in merged["files"]}
        merged["files"].extend(f for f in answer["files"] if f["path"] not in known)
    merged["written"] = sum(
        f.get("added", 0) + f.get("changed", 0) + f.get("removed", 0) for f in merged["files"]
    )
    return merged


def _parts(docs: list[DocumentFile]) -> list[list[DocumentFile]]:
    parts: list[list[DocumentFile]] = []
    size = BATCH_BYTES
    for doc in docs:
        if size + len(doc.text) > BATCH_BYTES and (not parts or parts[-1]):
            parts.append([])
            size = 0
        parts[-1].append(doc)
        size += len(doc.text)
    return parts


def _print_report(reports: list[dict[str, Any]], args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(reports if len(reports) != 1 else reports[0], indent=2))
        return 0
    files = [f for r in reports for f in r["files"]]
    by_status: dict[str, int] = {}
    for f in files:
        by_status[f["status"]] = by_status.get(f["status"], 0) + 1
    written = sum(r["written"] for r in reports)
    verb = "would write" if args.dry_run else "wrote"
    summary = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items())) or "no files"
    epochs = ", ".join(r["epoch"] for r in reports)
    print(f"{len(files)} file(s): {summary}; {verb} {written} passage change(s) (epoch {epochs})")
    return 1 if by_status.get("failed") else 0


def _list(args: argparse.Namespace, settings: Settings) -> int:
    from proxy.api.sources import source_view

    scope = docs_scope(args.scope) if args.scope else None

    def local(store: Any) -> list[dict[str, Any]]:
        from beliefs.documents import MIGRATIONS, list_sources
        from beliefs.documents.ingest import DELETE_GRACE

        store.ensure_schema(MIGRATIONS)
        found = list_sources(store, args.user, scope=scope)
        return [source_view(s, DELETE_GRACE) for s in found]

    def remote(api: ApiClient) -> list[dict[str, Any]]:
        return list(api.get("/api/sources", user=args.user, scope=scope))

    found = with_backend(settings, local, remote)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    for s in found:
        gone = f"  deleted, undo until {s['undo_until'][:16]}" if s.get("deleted_at") else ""
        print(
            f"{s['id']}  {s['scope']}  {s['path']}  {s['passages']} passage(s)  "
            f"{s['size_bytes']} bytes  ingested {s['ingested_at'][:16]}  {s['epoch']}{gone}"
        )
    if not found:
        print("no sources")
    return 0


def _change(args: argparse.Namespace, settings: Settings, action: str) -> dict[str, Any]:
    from proxy.api.sources import source_view

    def local(store: Any) -> dict[str, Any]:
        from beliefs.documents import MIGRATIONS, delete_source, restore_source
        from beliefs.documents.ingest import DELETE_GRACE

        store.ensure_schema(MIGRATIONS)
        run = delete_source if action == "remove" else restore_source
        return source_view(run(store, args.id), DELETE_GRACE)

    def remote(api: ApiClient) -> dict[str, Any]:
        path = f"/api/sources/{args.id}"
        if action == "remove":
            return dict(api.send("DELETE", path))
        return dict(api.send("POST", path + "/restore", {}))

    return with_backend(settings, local, remote)


def _remove(args: argparse.Namespace, settings: Settings) -> int:
    done = _change(args, settings, "remove")
    print(
        f"removed {done['path']} ({done['passages']} passage(s) left retrieval); undo with "
        f"`tenure sources restore {done['id']}` until {done['undo_until'][:16]}"
    )
    return 0


def _restore(args: argparse.Namespace, settings: Settings) -> int:
    done = _change(args, settings, "restore")
    print(f"restored {done['path']} ({done['passages']} passage(s))")
    return 0


def _purge(args: argparse.Namespace, settings: Settings) -> int:
    def local(store: Any) -> list[str]:
        from beliefs.documents import MIGRATIONS, purge_sources

        store.ensure_schema(MIGRATIONS)
        return [s.id for s in purge_sources(store, ids=args.ids)]

    def remote(api: ApiClient) -> list[str]:
        return list(api.send("POST", "/api/sources/purge", {"ids": args.ids})["purged"])

    gone = with_backend(settings, local, remote)
    print(f"purged {len(gone)} source(s)" + (f": {', '.join(gone)}" if gone else ""))
    return 0
