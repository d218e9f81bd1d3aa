from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from assay.errors import DocumentError
from assay.rag import ChunkConfig, chunk_document, count_tokens, extract, extract_bytes


def test_pdf_pages_are_marked_and_mapped(tmp_path: Path, make_pdf) -> None:
    pdf = make_pdf(
        tmp_path / "a.pdf", ["Alpha page one text.", "Beta page two text.", "Gamma three."], "Doc A"
    )
    doc = extract(pdf)
    assert doc.kind == "pdf" and doc.title == "Doc A" and not doc.degraded
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert doc.text.startswith("[Page 1]\nAlpha page one text.")
    assert "[Page 2]\nBeta page two text." in doc.text
    assert "Beta" in doc.page_text(2) and "Beta" not in doc.page_text(1)
    assert doc.page_at(doc.text.index("Gamma")) == 3


def test_scanned_pdf_is_refused_with_ocr_advice(tmp_path: Path, make_scanned_pdf) -> None:
    pdf = make_scanned_pdf(tmp_path / "scan.pdf", tmp_path)
    with pytest.raises(DocumentError, match=r"scan\.pdf: .*no text layer.*OCR"):
        extract(pdf)


def test_truncated_pdf_fails_or_is_degraded(tmp_path: Path, make_pdf) -> None:
    pdf = make_pdf(tmp_path / "t.pdf", [f"Page {i} says something useful about topic {i}." for i in range(6)])
    data = pdf.read_bytes()
    for cut in (len(data) - 30, len(data) * 2 // 3, len(data) // 3):
        try:
            doc = extract_bytes(data[:cut], "pdf", name="t.pdf")
        except DocumentError as exc:
            assert "t.pdf" in str(exc)
        else:
            assert doc.degraded and any("truncated" in w for w in doc.warnings)


def test_not_a_pdf_and_unsupported_suffix(tmp_path: Path) -> None:
    (tmp_path / "x.pdf").write_text("hello")
    with pytest.raises(DocumentError, match="not a PDF"):
        extract(tmp_path / "x.pdf")
    (tmp_path / "x.odt").write_text("hello")
    with pytest.raises(DocumentError, match=r"x\.odt: unsupported document type '\.odt'"):
        extract(tmp_path / "x.odt")


def test_html_drops_scripts_and_keeps_headings() -> None:
    html = b"""<html><head><title>T</title><style>p{}</style></head><body><h2>Sub</h2>
    <p>Visible &amp; kept.</p><script>alert('no')</script><table><tr><td>a</td><td>b</td></tr></table></body></html>"""
    doc = extract_bytes(html, "html", name="p.html")
    assert doc.title == "T"
    assert "## Sub" in doc.text and "Visible & kept." in doc.text
    assert "alert" not in doc.text and "p{}" not in doc.text


def test_chunks_keep_spans_pages_and_respect_size(tmp_path: Path, make_pdf) -> None:
    body = " ".join(f"Sentence number {i} tells a fact about item {i}." for i in range(120))
    pdf = make_pdf(tmp_path / "long.pdf", [body, body])
    doc = extract(pdf)
    cfg = ChunkConfig(max_tokens=80, overlap_tokens=16)
    chunks = chunk_document("long", doc, cfg)
    assert len(chunks) > 4
    for c in chunks:
        assert c.text == doc.text[c.start : c.end]
        assert c.n_tokens <= cfg.max_tokens
        assert c.page == c.page_end  # pages are hard boundaries
        assert "[Page" not in c.text
    assert {c.page for c in chunks} == {p.number for p in doc.pages}
    # consecutive chunks on a page overlap
    same_page = [(a, b) for a, b in itertools.pairwise(chunks) if a.page == b.page]
    assert same_page and all(b.start < a.end for a, b in same_page)


def test_chunks_break_at_headings_and_paragraphs() -> None:
    para = "Word " * 60
    md = f"# Title\n\n## One\n\n{para}\n\n{para}\n\n## Two\n\n{para}\n"
    doc = extract_bytes(md.encode(), "markdown", name="m.md")
    chunks = chunk_document("m", doc, ChunkConfig(max_tokens=100, overlap_tokens=10, min_tokens=20))
    assert any(c.text.startswith("## Two") for c in chunks)
    assert chunks[-1].heading == "Two"
    assert all(count_tokens(c.text) == c.n_tokens for c in chunks)


def test_chunk_config_validates() -> None:
    from assay.errors import ConfigError

    with pytest.raises(ConfigError, match="overlap"):
        ChunkConfig(max_tokens=50, overlap_tokens=40)
