"""The committed baseline is an unedited real `pr` run with the local embedder: check what it shows."""

from __future__ import annotations

import json
from pathlib import Path

from assay.runs._records import RunMeta, Scorecard

BASELINE = Path(__file__).resolve().parents[2] / "fixtures" / "baselines" / "retrieval-code-pr"


def test_baseline_is_a_complete_real_pr_run() -> None:
    sc = Scorecard.model_validate_json((BASELINE / "scorecard.json").read_text())
    meta = RunMeta.model_validate_json((BASELINE / "meta.json").read_text())
    assert sc.benchmark == meta.benchmark == "retrieval-code" and sc.suite == "pr" and sc.complete
    assert sc.config.embedder is not None and sc.config.embedder.startswith("all-MiniLM-L6-v2")
    assert sc.summary.counts["PASS"] == len(sc.cases) and sc.summary.counts["ERROR"] == 0
    categories = {c.category for c in sc.cases}
    assert categories == {"query", "incremental", "robustness"}
    rows = [json.loads(line) for line in (BASELINE / "results.jsonl").read_text().splitlines()]
    assert {r["case_id"] for r in rows} == {c.case_id for c in sc.cases}


def test_semantic_search_beats_grep_on_file_recall_at_5() -> None:
    m = Scorecard.model_validate_json((BASELINE / "scorecard.json").read_text()).summary.metrics
    assert m["file_recall@5"].value > m["grep_file_recall@5"].value
    assert m["file_recall@5"].gated and not m["grep_file_recall@5"].gated
    assert m["file_recall@5"].tolerance == 0.05
