"""DOCX and PPTX, as Word and PowerPoint files are written: headings, paragraphs, tables, slides, notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.embed import HashEmbedder
from assay.errors import DocumentError
from assay.rag import DocumentIndex, chunk_document, extract, iter_supported


def _docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.core_properties.title = "Harbour operations manual"
    d.add_heading("Harbour operations manual", level=0)
    d.add_heading("Mooring", level=1)
    d.add_paragraph("Visiting yachts moor on the east pontoon; the harbour master allocates berths by radio.")
    d.add_paragraph("Channel 14 is monitored from 07:00 to 21:00.", style="List Bullet")
    d.add_heading("Fees", level=2)
    table = d.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Length", "Per night", "Per week"), strict=True):
        cell.text = text
    for row in (
        ("under 8 m", "EUR 18", "EUR 95"),
        ("8 to 12 m", "EUR 26", "EUR 140"),
        ("over 12 m", "EUR 38", "EUR 210"),
    ):
        cells = table.add_row().cells
        for cell, text in zip(cells, row, strict=True):
            cell.text = text
    d.add_paragraph("Fees include water and shore power.")
    d.save(str(path))
    return path


def _pptx(path: Path) -> Path:
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Quarterly safety review"
    body = first.placeholders[1].text_frame
    body.text = "Near misses fell to 4 this quarter"
    body.add_paragraph().text = "Two were on the fuel berth"
    body.paragraphs[1].level = 1
    first.notes_slide.notes_text_frame.text = "Mention the new lifejacket lockers installed in March."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Drills"
    shape = second.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(1.5))
    for r, row in enumerate((("Drill", "Minutes"), ("Man overboard", "6"), ("Fire on deck", "9"))):
        for c, text in enumerate(row):
            shape.table.cell(r, c).text = text
    deck.save(str(path))
    return path


def test_docx_keeps_headings_paragraphs_and_table_rows(tmp_path: Path) -> None:
    doc = extract(_docx(tmp_path / "manual.docx"))
    assert doc.kind == "docx" and doc.title == "Harbour operations manual"
    assert "\n# Mooring\n" in doc.text and "\n## Fees\n" in doc.text
    assert "- Channel 14 is monitored from 07:00 to 21:00." in doc.text
    assert "| Length | Per night | Per week |\n|---|---|---|\n| under 8 m | EUR 18 | EUR 95 |" in doc.text
    fees = next(c for c in chunk_document("m", doc) if "| 8 to 12 m |" in c.text)
    assert (
        "## Fees" in fees.text
        and "| under 8 m |" in fees.text
        and "| over 12 m | EUR 38 | EUR 210 |" in fees.text
    )


def test_pptx_is_a_page_per_slide_with_notes_and_tables(tmp_path: Path) -> None:
    doc = extract(_pptx(tmp_path / "review.pptx"))
    assert doc.kind == "pptx" and [p.number for p in doc.pages] == [1, 2]
    one, two = doc.page_text(1), doc.page_text(2)
    assert "# Quarterly safety review" in one and "Near misses fell to 4 this quarter" in one
    assert "- Two were on the fuel berth" in one
    assert "Notes: Mention the new lifejacket lockers installed in March." in one
    assert "| Drill | Minutes |\n|---|---|\n| Man overboard | 6 |\n| Fire on deck | 9 |" in two


def test_docx_and_pptx_are_indexed_and_searchable(tmp_path: Path) -> None:
    _docx(tmp_path / "manual.docx")
    _pptx(tmp_path / "review.pptx")
    (tmp_path / "notes.txt").write_text("Unrelated note about the canteen menu.\n")
    assert {p.suffix for p in iter_supported([tmp_path])} == {".docx", ".pptx", ".txt"}
    idx = DocumentIndex(HashEmbedder(), cache_dir=None)
    results = idx.index_folder(tmp_path)
    assert all(r.status == "indexed" and r.n_chunks > 0 for r in results)
    (hit,) = idx.search("lifejacket lockers", k=1, mode="bm25")
    assert hit.doc_id.endswith("review.pptx") and hit.chunk.page == 1
    (hit,) = idx.search("fee per night for a boat 8 to 12 m", k=1, mode="bm25")
    assert hit.doc_id.endswith("manual.docx") and "| 8 to 12 m | EUR 26 | EUR 140 |" in hit.chunk.text


def test_a_damaged_office_file_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "broken.docx"
    bad.write_bytes(b"PK\x03\x04 this is not a word document")
    with pytest.raises(DocumentError, match=r"broken\.docx.*cannot read DOCX"):
        extract(bad)
    (tmp_path / "broken.pptx").write_bytes(b"not a zip at all")
    with pytest.raises(DocumentError, match=r"broken\.pptx.*cannot read PPTX"):
        extract(tmp_path / "broken.pptx")
