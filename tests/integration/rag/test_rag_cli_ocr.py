"""`assay rag index --ocr`: an image page is flagged DEGRADED without OCR and read, then searchable, with it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from assay.cli._rag import rag_group


def _image_page_pdf(tmp: Path) -> Path:
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", (1500, 1000), 255)
    ImageDraw.Draw(img).text(
        (80, 300), "Ferry tickets cost 12 euros.", fill=0, font=ImageFont.load_default(size=72)
    )
    img.save(tmp / "page.png")
    pdf = FPDF(format=(150, 100))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.image(str(tmp / "page.png"), x=0, y=0, w=150, h=100)
    pdf.set_font("helvetica", size=6)
    pdf.text(5, 97, "Scanned by ACME Copier 3000")
    pdf.output(str(tmp / "ferry.pdf"))
    return tmp / "ferry.pdf"


def test_index_with_ocr_reads_the_image_page(tmp_path: Path) -> None:
    pdf = _image_page_pdf(tmp_path)
    runner = CliRunner()
    env = {"ASSAY_HOME": str(tmp_path / "home"), "ASSAY_RAG_INDEX": str(tmp_path / "idx")}
    res = runner.invoke(rag_group, ["index", str(pdf), "--embedder", "hash"], env=env)
    assert res.exit_code == 1 and "OCR" in res.stderr  # only a watermark: refused without OCR
    res = runner.invoke(rag_group, ["index", str(pdf), "--embedder", "hash", "--ocr"], env=env)
    assert res.exit_code == 0, res.output
    assert "1 documents" in res.stdout and "DEGRADED" not in res.stdout
    res = runner.invoke(rag_group, ["search", "ferry tickets", "-k", "1", "--json"], env=env)
    (row,) = [json.loads(line) for line in res.output.splitlines()]
    assert row["page"] == 1 and "12 euros" in row["text"]
