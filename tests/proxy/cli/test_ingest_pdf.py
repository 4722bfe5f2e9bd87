"""`tenure ingest` reads a PDF's text through pypdf (the `pdf` extra), and a damaged PDF is a
clear error that ingests nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from beliefs.documents import DocumentError
from proxy.cli.ingest import read_document


def one_page_pdf(lines: list[str]) -> bytes:
    """A valid one-page PDF showing `lines` in Helvetica, its cross-reference table computed."""
    text = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
    stream = f"BT /F1 12 Tf 72 720 Td {text} ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_a_pdf_is_read_as_its_text(tmp_path: Path) -> None:
    path = tmp_path / "runbook.pdf"
    path.write_bytes(one_page_pdf(["Rotate the TLS certificate", "before it expires."]))
    read = read_document(path, "runbook.pdf")
    assert read.format == "text" and read.path == "runbook.pdf"
    assert "Rotate the TLS certificate" in read.text and "before it expires." in read.text


def test_a_damaged_pdf_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(one_page_pdf(["Rotate the TLS certificate"])[:60])
    with pytest.raises(DocumentError, match=r"broken\.pdf: not a readable PDF"):
        read_document(path, "broken.pdf")
