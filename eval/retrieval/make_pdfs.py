"""Generate the PDFs of the retrieval `pr` suite from their text sources (fpdf2).

The generated PDFs are committed, so the suite does not depend on the fpdf2 version; run this script
only when a source changes, then re-check the labels (`assay eval retrieval --component rag` verifies
every evidence quote against the extracted text of its labelled page on each run).

    python eval/retrieval/make_pdfs.py

Sources: ``pr/pdf_src/NAME.txt`` with a ``title:`` line, pages separated by ``=== page ===`` lines,
``# `` lines rendered as headings. Outputs: ``pr/docs/NAME.pdf``, plus two hard-case files in ``pr/hard/``:
an image-only (scanned) notice and a truncated copy of the 2025 annual report.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
SRC = HERE / "pr" / "pdf_src"
DOCS = HERE / "pr" / "docs"
HARD = HERE / "pr" / "hard"
FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)


def _new_pdf(title: str) -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_title(title)
    pdf.set_author("assay retrieval suite")
    pdf.set_creator("assay eval/retrieval/make_pdfs.py")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_auto_page_break(auto=True, margin=18)
    return pdf


def render(source: Path) -> bytes:
    lines = source.read_text().splitlines()
    if not lines or not lines[0].startswith("title:"):
        raise SystemExit(f"{source}:1: first line must be 'title: ...'")
    title = lines[0].removeprefix("title:").strip()
    pages: list[list[str]] = []
    for line in lines[1:]:
        if line.strip() == "=== page ===":
            pages.append([])
        elif pages:
            pages[-1].append(line)
    pdf = _new_pdf(title)
    for number, page in enumerate(pages, start=1):
        pdf.add_page()
        for line in page:
            if line.startswith("# "):
                pdf.set_font("helvetica", "B", 14)
                pdf.multi_cell(0, 8, line[2:], new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
            elif line.strip():
                pdf.set_font("helvetica", "", 11)
                pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(3)
        pdf.set_auto_page_break(auto=False)
        pdf.set_y(-15)
        pdf.set_font("helvetica", "I", 8)
        pdf.cell(0, 6, f"{title} - {number}", align="C")
        pdf.set_auto_page_break(auto=True, margin=18)
    return bytes(pdf.output())


def scanned_notice() -> bytes:
    """Two pages that are only pictures of text: what a scanner without OCR produces."""
    pdf = _new_pdf("Scanned building notice")
    for text in ("NOTICE: the east stairwell is closed for repairs", "Use the west stairwell until 30 June"):
        img = Image.new("L", (1240, 400), 255)
        ImageDraw.Draw(img).text((60, 180), text, fill=0)
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        pdf.add_page()
        pdf.image(buf, x=10, y=20, w=190)
    return bytes(pdf.output())


def main() -> None:
    DOCS.mkdir(parents=True, exist_ok=True)
    HARD.mkdir(parents=True, exist_ok=True)
    for source in sorted(SRC.glob("*.txt")):
        out = DOCS / f"{source.stem}.pdf"
        out.write_bytes(render(source))
        print(f"wrote {out.relative_to(HERE)}")
    (HARD / "scanned-notice.pdf").write_bytes(scanned_notice())
    report = render(SRC / "northwind-annual-report-2025.txt")
    # cut inside the cross-reference table: every page object is still there, the trailer is not
    (HARD / "truncated-report.pdf").write_bytes(report[: report.rindex(b"\nxref\n") + 40])
    print(f"wrote {HARD.relative_to(HERE)}/scanned-notice.pdf and truncated-report.pdf")


if __name__ == "__main__":
    main()
