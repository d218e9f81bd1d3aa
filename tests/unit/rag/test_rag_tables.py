"""Tables: rows kept together and in order, the header repeated on a split, from Markdown, HTML and PDF."""

from __future__ import annotations

import re
from pathlib import Path

from assay.embed import HashEmbedder
from assay.rag import ChunkConfig, DocumentIndex, chunk_document, extract, extract_bytes

PAPER = Path(__file__).resolve().parents[2] / "fixtures" / "rag" / "latex" / "paper.pdf"
ROWS = [f"| Route {i} | {100 + i} km | {i}.5 h | EUR {20 + i} |" for i in range(1, 31)]
TABLE = "| Route | Length | Crossing | Fare |\n|---|---|---|---|\n" + "\n".join(ROWS) + "\n"


def _rows_in(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\| Route \d", line)]


def test_a_table_that_fits_stays_whole_in_one_chunk() -> None:
    small = "| Item | Price |\n|---|---|\n| Tea | 2.10 |\n| Coffee | 2.60 |\n| Cake | 3.40 |\n"
    text = "# Menu\n\n" + "The cafe opens at eight and serves breakfast until eleven every day. " * 3 + "\n\n"
    doc = extract_bytes((text + small + "\nAsk for the daily special.\n").encode(), "markdown")
    chunks = chunk_document("menu", doc, ChunkConfig(max_tokens=60, overlap_tokens=8, min_tokens=10))
    holding = [c for c in chunks if "| Tea |" in c.text or "| Cake |" in c.text]
    assert len(holding) == 1 and small.strip() in holding[0].text


def test_a_long_table_is_cut_between_rows_with_the_header_repeated() -> None:
    doc = extract_bytes(("# Routes\n\n" + TABLE).encode(), "markdown")
    chunks = chunk_document("routes", doc, ChunkConfig(max_tokens=120, overlap_tokens=16, min_tokens=20))
    parts = [c for c in chunks if _rows_in(c.text)]
    assert len(parts) >= 3
    for part in parts:
        assert part.text.startswith(("| Route | Length", "# Routes")), part.text[:40]
        assert "| Route | Length | Crossing | Fare |\n|---|---|---|---|" in part.text
        assert part.n_tokens <= 120
    seen = [row for part in parts for row in _rows_in(part.text)]
    assert seen == ROWS  # every row once, whole, in order
    for part in parts[1:]:  # the span is the rows themselves: the header is repeated, not re-covered
        assert (
            doc.text[part.start : part.end].startswith("| Route ")
            and "Length" not in doc.text[part.start : part.end]
        )


def test_html_tables_become_rows_with_their_header() -> None:
    html = (
        "<html><body><h2>Tides</h2><table><tr><th>Port</th><th>High water</th></tr>"
        "<tr><td>Kessling</td><td><p>06:12</p></td></tr><tr><td>Port Aven</td><td>06:40</td></tr>"
        "</table><p>Times are local.</p></body></html>"
    )
    doc = extract_bytes(html.encode(), "html")
    assert "| Port | High water |\n|---|---|\n| Kessling | 06:12 |\n| Port Aven | 06:40 |" in doc.text
    (chunk,) = chunk_document("tides", doc)
    assert "| Kessling | 06:12 |\n| Port Aven | 06:40 |" in chunk.text


def _datasheet(path: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    pdf.multi_cell(0, 5, "Electrical characteristics of the TX-9 regulator. All values at 25 C ambient.")
    with pdf.table() as table:
        for cells in [("Parameter", "Min", "Typ", "Max", "Unit")] + [
            (f"Rail {i} voltage", f"0.{i}", f"{i}.0", f"{i + 2}.5", "V") for i in range(1, 8)
        ]:
            row = table.row()
            for cell in cells:
                row.cell(cell)
    pdf.multi_cell(0, 5, "The regulator shuts down above 150 C junction temperature.")
    pdf.output(str(path))
    return path


def test_a_pdf_table_keeps_its_rows_and_columns(tmp_path: Path) -> None:
    pdf = _datasheet(tmp_path / "tx9.pdf")
    doc = extract(pdf)
    assert (
        "| Parameter | Min | Typ | Max | Unit |\n|---|---|---|---|---|\n| Rail 1 voltage | 0.1 | 1.0 | 3.5 | V |"
        in doc.text
    )
    assert "Electrical characteristics of the TX-9 regulator." in doc.text  # prose stays prose
    idx = DocumentIndex(HashEmbedder(), cache_dir=None)
    idx.index_document(pdf, "tx9")
    (hit,) = idx.search("Rail 5 voltage", k=1, mode="bm25")
    assert "| Rail 5 voltage | 0.5 | 5.0 | 7.5 | V |" in hit.chunk.text
    assert all(f"| Rail {i} voltage |" in hit.chunk.text for i in range(1, 8))


def test_latex_table_rows_are_found_beside_a_column_of_prose() -> None:
    doc = extract(PAPER)
    head = "| Sensor | Depth (m) | Drift (%) | Battery (days) |\n|---|---|---|---|\n| Buoy North | 1.5 | 0.8 | 210 |"
    assert head in doc.text  # the header is found above rows it does not line up with
    assert "| Buoy West | 4.0 | 1.4 | 160 |" in doc.text
    prose = [
        line
        for line in doc.text.splitlines()
        if "|" in line and not line.startswith(("| Buoy", "| Sensor", "|---"))
    ]
    assert prose == []  # justified two-column prose is never taken for a table
