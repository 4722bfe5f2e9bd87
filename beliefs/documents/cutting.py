"""Cutting a document into passages: at headings, then at paragraph bounds under a size limit.

Markdown, plain text and reStructuredText are read line by line; HTML through the standard
library's `html.parser` (headings `h1`-`h6`, every other block as a paragraph). Each passage
keeps its heading path and the lines it came from, so a citation can name where it stands.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser

MAX_PASSAGE_CHARS = 1200
MAX_TITLE_CHARS = 80
FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_RST_RULE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Passage:
    """One cut of a document: its heading path, its text and the lines (1-based) it spans."""

    heading: tuple[str, ...]
    text: str
    first_line: int
    last_line: int
    ordinal: int = 0  # its place among the passages under the same heading path

    @property
    def content_hash(self) -> str:
        return content_hash(self.text)

    @property
    def key(self) -> str:
        """Where it stands in its file: the heading path and its place under it."""
        return " › ".join(self.heading) + f"#{self.ordinal}"


def content_hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


@dataclass
class _Block:
    heading: tuple[str, ...]
    lines: list[str]
    first: int
    last: int


def cut(text: str, fmt: str, *, limit: int = MAX_PASSAGE_CHARS) -> list[Passage]:
    """The passages of a document in format `fmt` (a value of `FORMATS`)."""
    if fmt == "html":
        blocks = _html_blocks(text)
    else:
        blocks = _line_blocks(text.splitlines(), rst=fmt == "rst", markdown=fmt == "markdown")
        if fmt == "text":
            blocks = _titled(blocks)
    return _numbered(_sized(blocks, limit))


def _titled(blocks: list[_Block]) -> list[_Block]:
    """A plain text whose first paragraph is one short line without a full stop: its title."""
    if len(blocks) < 2 or len(blocks[0].lines) != 1:
        return blocks
    title = blocks[0].lines[0].strip()
    if len(title) > MAX_TITLE_CHARS or title[-1] in ".!?:;,":
        return blocks
    return [_Block((title,), b.lines, b.first, b.last) for b in blocks[1:]]


def _line_blocks(lines: list[str], *, rst: bool, markdown: bool) -> list[_Block]:
    """Paragraphs (runs of non-blank lines; a fenced code block is one) under their headings."""
    blocks: list[_Block] = []
    path: list[tuple[int, str]] = []  # (level, title)
    rst_levels: list[str] = []
    current: _Block | None = None
    fenced = False

    def heading() -> tuple[str, ...]:
        return tuple(title for _, title in path)

    def close() -> None:
        nonlocal current
        if current is not None and any(line.strip() for line in current.lines):
            blocks.append(current)
        current = None

    def enter(level: int, title: str) -> None:
        close()
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title.strip()))

    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if markdown and _FENCE.match(line):
            fenced = not fenced
        elif not fenced and markdown and (m := _ATX.match(line)):
            enter(len(m.group(1)), m.group(2))
            i += 1
            continue
        elif (
            not fenced
            and (markdown or rst)
            and line.strip()
            and current is None
            and _underline(following, line, rst)
        ):
            mark = following.strip()[0]
            if rst:
                if mark not in rst_levels:
                    rst_levels.append(mark)
                level = rst_levels.index(mark) + 1
            else:
                level = 1 if mark == "=" else 2
            enter(level, line)
            i += 2
            continue
        elif rst and _RST_RULE.match(line) and current is None:
            i += 1  # an overline: the title and its underline follow
            continue
        if not line.strip() and not fenced:
            close()
        elif current is None:
            current = _Block(heading(), [line], number, number)
        else:
            current.lines.append(line)
            current.last = number
        i += 1
    close()
    return blocks


def _underline(following: str, line: str, rst: bool) -> bool:
    if rst:
        return bool(_RST_RULE.match(following)) and len(following.strip()) >= len(line.strip())
    return bool(_SETEXT.match(following))


def _sized(blocks: list[_Block], limit: int) -> list[Passage]:
    """Paragraphs of one heading joined while they fit `limit`; a longer one split at sentence
    (or, failing that, line) bounds."""
    out: list[Passage] = []
    pending: list[_Block] = []

    def flush() -> None:
        if pending:
            text = "\n\n".join("\n".join(b.lines).strip() for b in pending)
            out.append(Passage(pending[0].heading, text, pending[0].first, pending[-1].last))
            pending.clear()

    for block in blocks:
        text = "\n".join(block.lines).strip()
        if pending and pending[0].heading != block.heading:
            flush()
        if len(text) > limit:
            flush()
            out.extend(_split(block, limit))
            continue
        size = sum(len("\n".join(b.lines).strip()) + 2 for b in pending)
        if pending and size + len(text) > limit:
            flush()
        pending.append(block)
    flush()
    return out


def _split(block: _Block, limit: int) -> list[Passage]:
    pieces: list[Passage] = []
    chunk: list[str] = []
    first = block.first
    for offset, line in enumerate(block.lines):
        parts = _SENTENCE_END.split(line) if len(line) > limit else [line]
        for part in parts:
            while len(part) > limit:  # one unbroken run: cut where the limit falls
                pieces.append(Passage(block.heading, part[:limit], first, block.first + offset))
                part = part[limit:]
            if chunk and sum(len(c) + 1 for c in chunk) + len(part) > limit:
                last = block.first + offset
                pieces.append(Passage(block.heading, "\n".join(chunk).strip(), first, last))
                chunk, first = [], block.first + offset
            chunk.append(part)
    if chunk and "".join(chunk).strip():
        pieces.append(Passage(block.heading, "\n".join(chunk).strip(), first, block.last))
    return pieces


def _numbered(passages: list[Passage]) -> list[Passage]:
    seen: dict[tuple[str, ...], int] = {}
    out = []
    for p in passages:
        n = seen.get(p.heading, 0)
        seen[p.heading] = n + 1
        out.append(Passage(p.heading, p.text, p.first_line, p.last_line, n))
    return out


_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {"p", "li", "pre", "blockquote", "td", "th", "dd", "dt", "div", "section", "tr"}
_SKIPPED = {"script", "style", "head", "title", "nav", "noscript"}


class _HtmlReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[_Block] = []
        self.path: list[tuple[int, str]] = []
        self.text: list[str] = []
        self.start = 1
        self.level = 0  # inside a heading of this level
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag in _HEADINGS or tag in _BLOCKS or tag == "br":
            self._end_block()
            self.level = _HEADINGS.get(tag, 0) or self.level

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _HEADINGS and self.level:
            title = " ".join("".join(self.text).split())
            self.text = []
            while self.path and self.path[-1][0] >= self.level:
                self.path.pop()
            if title:
                self.path.append((self.level, title))
            self.level = 0
        elif tag in _BLOCKS:
            self._end_block()

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if not "".join(self.text).strip():
            self.start = self.getpos()[0]
        self.text.append(data)

    def _end_block(self) -> None:
        if self.level:
            return
        text = " ".join("".join(self.text).split())
        self.text = []
        if text:
            heading = tuple(t for _, t in self.path)
            self.blocks.append(_Block(heading, [text], self.start, self.getpos()[0]))


def _html_blocks(text: str) -> list[_Block]:
    reader = _HtmlReader()
    reader.feed(text)
    reader.close()
    reader._end_block()
    return reader.blocks
