"""Pages that are mostly image: flagged degraded with OCR off, read by tesseract with it on, never blank."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.embed import HashEmbedder
from assay.errors import ConfigError
from assay.rag import DocumentIndex, extract
from assay.rag import ocr as ocr_mod

SCAN_LINES = ("The harbour permit fee is 84 euros.", "The office closes on Thursday at noon.")
TEXT_PAGE = "A normal text page about lighthouses, tides and the coast guard station. " * 4


def _scan_png(tmp: Path, lines: tuple[str, ...] = SCAN_LINES, size: tuple[int, int] = (1500, 1000)) -> Path:
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", size, 255)
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((80, 200 + 200 * i), line, fill=0, font=ImageFont.load_default(size=64))
    png = tmp / "scan.png"
    img.save(png)
    return png


def _pdf(
    path: Path, tmp: Path, *, image_share: float = 1.0, caption: str = "Scanned by ACME Copier 3000"
) -> Path:
    """Page 1: an image over ``image_share`` of its height with one line of text; page 2: plain text."""
    from fpdf import FPDF

    pdf = FPDF(format=(150, 100))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.image(str(_scan_png(tmp)), x=0, y=0, w=150, h=100 * image_share)
    pdf.set_font("helvetica", size=6)
    pdf.set_xy(5, 100 * image_share - 4 if image_share < 1 else 93)
    pdf.multi_cell(140, 3, caption)
    pdf.add_page()
    pdf.set_font("helvetica", size=9)
    pdf.set_xy(5, 5)
    pdf.multi_cell(140, 5, TEXT_PAGE)
    pdf.output(str(path))
    return path


def test_an_image_page_with_a_watermark_is_flagged_degraded_when_ocr_is_off(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "scan.pdf", tmp_path)
    doc = extract(pdf)
    assert doc.image_pages == [1] and doc.ocr_pages == [] and doc.degraded
    res = DocumentIndex(HashEmbedder(), cache_dir=None).index_document(pdf, "scan")
    assert res.degraded and res.image_pages == [1]
    assert any("page 1 is mostly image" in w and "--ocr" in w for w in res.warnings)


def test_a_figure_beside_real_text_is_not_an_image_page(tmp_path: Path) -> None:
    words = " ".join(f"Figure one shows the tide gauge reading number {i}." for i in range(12))
    doc = extract(_pdf(tmp_path / "fig.pdf", tmp_path, image_share=0.6, caption=words))
    assert doc.image_pages == [] and not doc.degraded


def test_ocr_reads_the_image_page_and_the_cache_tells_ocr_from_no_ocr(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "scan.pdf", tmp_path)
    cache = tmp_path / "cache"
    idx = DocumentIndex(HashEmbedder(), cache_dir=cache)
    off = idx.index_document(pdf, "scan")
    idx.ocr = True  # turned on later (`assay rag index --ocr` on an existing index): the file is read again
    on = idx.index_document(pdf, "scan")
    assert off.image_pages == [1] and on.status == "replaced"
    assert on.cache == "miss"  # an OCR-off entry is never served with OCR on
    assert on.ocr_pages == [1] and on.image_pages == [] and not on.degraded
    assert idx.index_document(pdf, "scan").status == "unchanged"
    (hit,) = idx.search("harbour permit fee", k=1, mode="bm25")
    assert hit.chunk.page == 1 and "84 euros" in hit.chunk.text
    assert DocumentIndex(HashEmbedder(), cache_dir=cache, ocr=True).index_document(pdf, "scan").cache == "hit"


def test_broken_ocr_stops_with_an_error_instead_of_reading_blank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ocr_mod.check_ocr.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(ConfigError, match=r"tesseract.*not installed"):
        ocr_mod.check_ocr()
    monkeypatch.undo()
    ocr_mod.check_ocr.cache_clear()
    blank = _scan_png(tmp_path, lines=(), size=(400, 100))
    monkeypatch.setattr(ocr_mod, "_CHECK_IMAGE", blank)
    with pytest.raises(ConfigError, match=r"OCR self-check failed.*harbour"):
        ocr_mod.check_ocr()
    pdf = _pdf(tmp_path / "scan.pdf", tmp_path)
    with pytest.raises(ConfigError, match="self-check"):
        DocumentIndex(HashEmbedder(), cache_dir=None, ocr=True).index_document(pdf)
    ocr_mod.check_ocr.cache_clear()


def _wrap_first_page_in_a_form(src: Path, dst: Path) -> Path:
    """The same page drawn through a form XObject (as some scanners and PDF printers write it)."""
    import pypdf
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, FloatObject, NameObject

    writer = pypdf.PdfWriter()
    writer.append(pypdf.PdfReader(src))
    page = writer.pages[0]
    form = DecodedStreamObject()
    form.set_data(page.get_contents().get_data())
    box = [
        FloatObject(0),
        FloatObject(0),
        FloatObject(page.mediabox.width),
        FloatObject(page.mediabox.height),
    ]
    form.update({
        NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Form"),
        NameObject("/BBox"): ArrayObject(box), NameObject("/Resources"): page["/Resources"],
    })  # fmt: skip
    names = DictionaryObject({NameObject("/Fm1"): writer._add_object(form)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/XObject"): names})
    contents = DecodedStreamObject()
    contents.set_data(b"q /Fm1 Do Q")
    page[NameObject("/Contents")] = writer._add_object(contents)
    writer.write(str(dst))
    return dst


def test_an_image_drawn_inside_a_form_xobject_counts_too(tmp_path: Path) -> None:
    pdf = _wrap_first_page_in_a_form(_pdf(tmp_path / "scan.pdf", tmp_path), tmp_path / "form.pdf")
    doc = extract(pdf)
    assert "Scanned by ACME Copier 3000" in doc.page_text(1)  # the watermark is there, drawn by the form
    assert doc.image_pages == [1] and doc.degraded
