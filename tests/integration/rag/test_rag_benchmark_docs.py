"""The rag benchmark and documents as people have them: OCR only in the full suite, degraded ones reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval._rag import default_eval_dir
from assay.exec import RunOptions, run_benchmark


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _run(tmp_path: Path, name: str, **options: object):
    return run_benchmark(
        RetrievalBenchmark,
        {"component": "rag", **options},
        RunOptions(out=tmp_path / name, command_line=["test"]),
    )


def _image_page_pdf(path: Path) -> Path:
    from fpdf import FPDF
    from PIL import Image

    png = path.with_suffix(".png")
    Image.new("L", (300, 200), 200).save(png)
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(
        0, 6, "Ferry timetable, winter season. Sailings leave Port Aven at 07:10 and 15:40 daily. " * 3
    )
    pdf.add_page()
    pdf.image(str(png), x=0, y=0, w=210, h=297)
    pdf.set_font("helvetica", size=6)
    pdf.text(10, 290, "Scanned by ACME Copier 3000")
    pdf.output(str(path))
    return path


def test_ocr_is_refused_in_the_pr_suite(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--ocr.*pr suite"):
        _run(tmp_path, "x", ocr=True)


def test_a_degraded_document_is_counted_and_named_in_the_report(tmp_path: Path) -> None:
    dst = tmp_path / "ds"
    shutil.copytree(default_eval_dir() / "pr", dst, ignore=shutil.ignore_patterns("hard", "pdf_src"))
    data = json.loads((dst / "dataset.json").read_text())
    data["documents"].append({"id": "winter-timetable", "path": "docs/winter.pdf", "tags": ["pdf"]})
    (dst / "dataset.json").write_text(json.dumps(data))
    _image_page_pdf(dst / "docs" / "winter.pdf")
    result = _run(tmp_path, "run", dataset=str(dst / "dataset.json"))
    m = result.scorecard.summary.metrics
    assert m["docs_degraded"].value == 1 and m["docs_failed_to_index"].value == 0
    # the numeric question answered from the kettle's specification table is its own tag
    assert m["tag:numeric-table/sdk_recall@5"].n == 1
    report = (result.run_dir / "report.md").read_text()
    assert "### Documents indexed degraded" in report
    assert "`winter-timetable`: page 2 is mostly image" in report
    assert "| numeric-table | 1 |" in report


def test_a_run_with_ocr_stops_before_indexing_when_ocr_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from PIL import Image

    from assay.evals.retrieval._rag import RagRetrievalBenchmark
    from assay.rag import ocr

    blank = tmp_path / "blank.png"
    Image.new("L", (300, 80), 255).save(blank)
    monkeypatch.setattr(ocr, "_CHECK_IMAGE", blank)
    ocr.check_ocr.cache_clear()
    bench = RagRetrievalBenchmark({"component": "rag", "ocr": True})
    with pytest.raises(ConfigError, match="OCR self-check failed"):
        asyncio.run(bench.preflight())
    ocr.check_ocr.cache_clear()
