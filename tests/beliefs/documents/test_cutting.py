"""Cutting documents into passages: headings make the path, paragraphs join under a size
limit, lines are kept for the citation."""

from __future__ import annotations

from beliefs.documents import cut
from beliefs.documents.sync import aliases_of

MARKDOWN = """# Guide

Intro line one.
Intro line two.

## Setup

First paragraph.

```sh
# not a heading inside a fence
make install
```

### Deep

Deep text.
"""


def test_markdown_headings_make_the_path_and_lines_are_kept() -> None:
    passages = cut(MARKDOWN, "markdown")
    assert [(p.heading, p.first_line, p.last_line) for p in passages] == [
        (("Guide",), 3, 4),
        (("Guide", "Setup"), 8, 13),
        (("Guide", "Setup", "Deep"), 17, 17),
    ]
    assert "# not a heading inside a fence" in passages[1].text


def test_paragraphs_join_under_the_limit_and_a_long_one_splits_at_sentences() -> None:
    text = "# T\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 30 for i in range(10))
    passages = cut(text, "markdown", limit=400)
    assert len(passages) > 1 and all(len(p.text) <= 400 for p in passages)
    assert [p.ordinal for p in passages] == list(range(len(passages)))
    long = "# T\n\n" + " ".join(f"Sentence number {i} ends here." for i in range(60))
    pieces = cut(long, "markdown", limit=300)
    assert len(pieces) > 1 and all(len(p.text) <= 300 for p in pieces)
    assert all(p.text.endswith(".") for p in pieces)


def test_rst_and_setext_underlines_are_headings() -> None:
    rst = "Title\n=====\n\nBody.\n\nPart\n----\n\nMore.\n"
    assert [p.heading for p in cut(rst, "rst")] == [("Title",), ("Title", "Part")]
    assert [p.heading for p in cut(rst, "markdown")] == [("Title",), ("Title", "Part")]


def test_plain_text_takes_a_short_first_line_as_its_title() -> None:
    passages = cut("On-call rotation\n\nIt changes on Monday.\n", "text")
    assert passages[0].heading == ("On-call rotation",)
    assert cut("A sentence first.\n\nThen more.\n", "text")[0].heading == ()


def test_html_reads_headings_and_blocks_and_skips_scripts() -> None:
    html = (
        "<html><head><title>x</title><script>var a = 1;</script></head><body>"
        "<h1>Cache</h1><p>Six shards.</p><h2>Eviction</h2><p>allkeys-lru &amp; TTLs.</p>"
        "</body></html>"
    )
    passages = cut(html, "html")
    assert [(p.heading, p.text) for p in passages] == [
        (("Cache",), "Six shards."),
        (("Cache", "Eviction"), "allkeys-lru & TTLs."),
    ]


def test_aliases_come_from_headings_file_name_and_names_in_the_text() -> None:
    passage = cut(
        "# Database failover\n\nPatroni promotes a replica behind PgBouncer.\n", "markdown"
    )[0]
    aliases = aliases_of("db/pg-failover.md", passage)
    assert aliases[:2] == ["database failover", "pg failover"]
    assert "pgbouncer" in aliases  # written as a name in the text
    assert aliases == aliases_of("db/pg-failover.md", passage)  # deterministic
