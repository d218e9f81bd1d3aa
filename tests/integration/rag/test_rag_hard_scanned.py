"""The scanned-PDF hard case: refusal with OCR off, page-level recall with OCR on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from assay.embed import HashEmbedder
from assay.evals.retrieval._rag import default_eval_dir
from assay.evals.retrieval._rag_data import load_dataset
from assay.evals.retrieval._rag_hard import HardContext, scanned_pdf
from assay.runs.records import Status


def _run(tmp_path: Path, ocr: bool):
    data = load_dataset(default_eval_dir() / "pr" / "dataset.json")
    hard = default_eval_dir() / "pr" / "hard"
    ctx = HardContext(data, HashEmbedder(), tmp_path / "work", hard, None, ocr=ocr)
    return asyncio.run(scanned_pdf(ctx))


def test_scanned_pdf_is_refused_without_ocr(tmp_path: Path) -> None:
    out = _run(tmp_path, ocr=False)
    assert out.status == Status.PASS and "OCR" in out.details["error"]
    assert "scanned_page_recall@1" not in out.metrics


def test_scanned_pdf_pages_are_found_with_ocr(tmp_path: Path) -> None:
    out = _run(tmp_path, ocr=True)
    assert out.status == Status.PASS, out.details
    assert out.details["ocr_pages"] == [1, 2] and out.metrics["scanned_page_recall@1"] == 1.0
