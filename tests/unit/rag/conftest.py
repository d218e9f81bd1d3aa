from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _assay_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "assay-home"
    monkeypatch.setenv("ASSAY_HOME", str(home))
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    return home


def _make_pdf(path: Path, pages: list[str], title: str = "") -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    if title:
        pdf.set_title(title)
    for body in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, body)
    pdf.output(str(path))
    return path


def _make_scanned_pdf(path: Path, tmp: Path) -> Path:
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (600, 200), "white")
    ImageDraw.Draw(img).text((20, 80), "This page was scanned: no text layer.", fill="black")
    png = tmp / "scan.png"
    img.save(png)
    pdf = FPDF()
    for _ in range(2):
        pdf.add_page()
        pdf.image(str(png), x=10, y=10, w=180)
    pdf.output(str(path))
    return path


@pytest.fixture
def make_pdf():
    return _make_pdf


@pytest.fixture
def make_scanned_pdf():
    return _make_scanned_pdf
