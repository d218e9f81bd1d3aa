"""Documents as people have them (issue 25): what the RAG SDK makes of a LaTeX paper, an image page, a table.

    python benchmarks/rag_documents.py            # this checkout
    python benchmarks/rag_documents.py --ocr-pages 8   # and OCR throughput on 8 scanned A4 pages
    git worktree add /tmp/old <commit> && PYTHONPATH=/tmp/old/src python benchmarks/rag_documents.py

Prints how many ligature and line-split words of the committed two-column LuaLaTeX paper BM25 finds, whether a
page that is one image with a one-line watermark is flagged (and, where OCR is available, what OCR reads and
how long it takes), and whether a PDF table's rows come out as rows kept in one chunk.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import tempfile
import time
from pathlib import Path

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

from assay.embed import HashEmbedder
from assay.rag import DocumentIndex

PAPER = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "rag" / "latex" / "paper.pdf"
WORDS = ("filled", "definitions", "office", "configuration", "spillway", "hydroelectric", "interdisciplinary")


def _index(**kw: object) -> DocumentIndex:
    accepted = inspect.signature(DocumentIndex).parameters
    return DocumentIndex(HashEmbedder(), cache_dir=None, **{k: v for k, v in kw.items() if k in accepted})


def _image_page(tmp: Path) -> Path:
    img = Image.new("L", (1500, 1000), 255)
    draw = ImageDraw.Draw(img)
    draw.text((80, 300), "The harbour permit fee is 84 euros.", fill=0, font=ImageFont.load_default(size=64))
    img.save(tmp / "scan.png")
    pdf = FPDF(format=(150, 100))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.image(str(tmp / "scan.png"), x=0, y=0, w=150, h=100)
    pdf.set_font("helvetica", size=6)
    pdf.text(5, 97, "Scanned by ACME Copier 3000")
    pdf.add_page()  # and a page of text, so the document is indexed, not refused as a scan
    pdf.set_font("helvetica", size=9)
    pdf.set_xy(5, 5)
    pdf.multi_cell(140, 5, "Harbour office opening hours are posted at the gate. " * 4)
    pdf.output(str(tmp / "scan.pdf"))
    return tmp / "scan.pdf"


def _table(tmp: Path) -> Path:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    with pdf.table() as table:
        for cells in [("Parameter", "Min", "Typ", "Max", "Unit")] + [
            (f"Rail {i} voltage", f"0.{i}", f"{i}.0", f"{i + 2}.5", "V") for i in range(1, 8)
        ]:
            row = table.row()
            for cell in cells:
                row.cell(cell)
    pdf.output(str(tmp / "table.pdf"))
    return tmp / "table.pdf"


def _ocr_throughput(tmp: Path, pages: int) -> None:
    """Seconds per page of OCR over ``pages`` A4 pages that are images of 30 lines of text each."""
    from assay.rag.ocr import check_ocr

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    font = ImageFont.load_default(size=40)
    for n in range(pages):
        img = Image.new("L", (1654, 2339), 255)
        draw = ImageDraw.Draw(img)
        for i in range(30):
            draw.text(
                (120, 120 + 70 * i),
                f"Page {n + 1} line {i}: the gauge at Kessling read {3 * i} cm.",
                fill=0,
                font=font,
            )
        img.save(tmp / f"p{n}.png")
        pdf.add_page()
        pdf.image(str(tmp / f"p{n}.png"), x=0, y=0, w=210, h=297)
    pdf.output(str(tmp / "scanned.pdf"))
    check_ocr()
    t0 = time.perf_counter()
    res = _index(ocr=True).index_document(tmp / "scanned.pdf")
    took = time.perf_counter() - t0
    print(f"OCR: {pages} A4 pages at 300 dpi in {took:.1f} s ({took / pages:.2f} s/page, {os.cpu_count()} cores), "
          f"{len(res.ocr_pages)} pages read")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ocr-pages", type=int, default=0, help="Also time OCR over this many scanned pages."
    )
    args = parser.parse_args()
    idx = _index()
    idx.index_document(PAPER, "paper")
    found = [
        w
        for w in WORDS
        if any(re.search(rf"\b{w}\b", h.chunk.text.lower()) for h in idx.search(w, k=3, mode="bm25"))
    ]
    print(f"latex paper: BM25 finds {len(found)}/{len(WORDS)} ligature and split words: {' '.join(found)}")
    with tempfile.TemporaryDirectory() as tmp:
        scan = _image_page(Path(tmp))
        off = _index().index_document(scan, "scan")
        print(f"image page, OCR off: degraded={off.degraded} warnings={off.warnings}")
        if "ocr" in inspect.signature(DocumentIndex).parameters:
            from assay.rag.ocr import check_ocr

            check_ocr()
            t0 = time.perf_counter()
            ocr_idx = _index(ocr=True)
            on = ocr_idx.index_document(scan, "scan")
            took = time.perf_counter() - t0
            hit = ocr_idx.search("harbour permit fee", k=1, mode="bm25")
            read = hit[0].chunk.text.replace("\n", " ")[:60] if hit else ""
            print(f"image page, OCR on: ocr_pages={on.ocr_pages} in {took:.2f} s; reads {read!r}")
        tab = _index()
        tab.index_document(_table(Path(tmp)), "table")
        (hit,) = tab.search("Rail 5 voltage", k=1, mode="bm25")
        rows = sum(f"| Rail {i} voltage |" in hit.chunk.text for i in range(1, 8))
        print(f"pdf table: {rows}/7 rows as pipe rows in the chunk found, header row with them: "
              f"{'| Parameter | Min |' in hit.chunk.text}")  # fmt: skip
        if args.ocr_pages:
            _ocr_throughput(Path(tmp), args.ocr_pages)


if __name__ == "__main__":
    main()
