"""The retrieval-rag benchmark end to end through the shared runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval._rag import default_eval_dir
from assay.evals.retrieval._rag_scale import tier_verdict
from assay.exec import RunOptions, run_benchmark
from assay.runs import Status, read_journal

EVAL = default_eval_dir()
#: figures that measure time or memory and so differ between two runs
_TIMING = ("index/", "scale@")


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


def _numbers(result) -> dict[str, float | None]:
    return {k: v.value for k, v in result.scorecard.summary.metrics.items() if not k.startswith(_TIMING)}


def test_pr_suite_passes_offline_and_repeats_exactly(tmp_path: Path) -> None:
    first = _run(tmp_path, "a")
    second = _run(tmp_path, "b")
    assert first.exit_code == 0 and first.scorecard.complete
    s = first.scorecard.summary
    assert s.counts["ERROR"] == 0 and s.counts["NOT_RUN"] == 0
    assert s.metrics["docs_failed_to_index"].value == 0
    assert s.metrics["sdk_recall@5"].value >= 0.9 and s.metrics["sdk_recall@5"].gated
    assert (
        s.metrics["sdk_recall@1"].value <= s.metrics["sdk_recall@5"].value <= s.metrics["sdk_recall@20"].value
    )
    assert {"tag:pdf/sdk_recall@5", "tag:html/sdk_recall@5", "agent_r_returned"} <= set(s.metrics)
    hard = {c.case_id: c for c in first.scorecard.cases if c.category == "hard"}
    assert hard["hard/prompt-injection"].counts == {"SKIPPED": 1}  # needs a model
    assert all(c.counts == {"PASS": 1} for cid, c in hard.items() if cid != "hard/prompt-injection")
    assert _numbers(first) == _numbers(second)
    assert [c.counts for c in first.scorecard.cases] == [c.counts for c in second.scorecard.cases]
    report = (first.run_dir / "report.md").read_text()
    assert "## Document retrieval" in report and "| scanned-pdf | PASS |" in report
    skipped = [json.loads(x) for x in (first.run_dir / "results.jsonl").read_text().splitlines()]
    assert any(a["status"] == Status.SKIPPED.value and "--model" in a["skip_reason"] for a in skipped)


def _copy_dataset(tmp_path: Path) -> Path:
    dst = tmp_path / "ds"
    shutil.copytree(EVAL / "pr", dst, ignore=shutil.ignore_patterns("hard", "pdf_src"))
    return dst / "dataset.json"


def test_a_label_off_its_page_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = _copy_dataset(tmp_path)
    text = path.read_text().replace(
        '"page": 2, "quote": "Revenue for 2025', '"page": 3, "quote": "Revenue for 2025'
    )
    path.write_text(text)
    with pytest.raises(
        ConfigError, match=r"dataset\.json:\d+: question 'nw25-revenue': .*not on page 3.*page 2"
    ):
        _run(tmp_path, "bad", dataset=str(path))


def test_a_quote_not_in_the_document_is_an_error(tmp_path: Path) -> None:
    path = _copy_dataset(tmp_path)
    path.write_text(path.read_text().replace("costs 250 dollars", "costs 260 dollars"))
    with pytest.raises(ConfigError, match=r"coop-share-price.*quote not found"):
        _run(tmp_path, "bad", dataset=str(path))


def test_scale_tiers_measure_every_tier(tmp_path: Path) -> None:
    result = _run(tmp_path, "scale", scale_tiers="5,40")
    m = result.scorecard.summary.metrics
    assert m["scale@5/documents"].value == 5 and m["scale@40/documents"].value == 40
    for tier in (5, 40):
        for name in ("chunks_per_s", "sdk_p95_ms", "agent_p95_ms", "index_mb", "peak_rss_mb", "sdk_recall@5"):
            assert m[f"scale@{tier}/{name}"].value is not None and m[f"scale@{tier}/{name}"].value >= 0
    assert m["scale@40/chunks"].value > m["scale@5/chunks"].value
    assert "### Scale tiers" in (result.run_dir / "report.md").read_text()
    # a tier is graded by a stated rule, not passed for carrying numbers
    tiers = [c for c in result.scorecard.cases if c.case_id.startswith("scale")]
    assert len(tiers) == 2
    for att in read_journal(result.run_dir / "results.jsonl"):
        if att.case_id.startswith("scale"):
            assert "search p95 beyond the query embedding <= 50 ms (measured" in att.details["rule"]


def test_a_scale_tier_fails_when_search_is_slower_than_its_rule() -> None:
    fast = {"scale@10/sdk_p95_ms": 30.0, "scale@10/query_embed_p50_ms": 12.0}
    slow = {"scale@10/sdk_p95_ms": 90.0, "scale@10/query_embed_p50_ms": 12.0}
    assert tier_verdict(10, fast)[0] is True
    passed, rule = tier_verdict(10, slow)
    assert passed is False and "measured 78.0 ms" in rule


def test_bad_scale_tiers_name_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--scale-tiers"):
        _run(tmp_path, "x", scale_tiers="ten")


BASELINE = Path(__file__).resolve().parents[2] / "fixtures" / "baselines" / "retrieval-rag-pr"


def test_committed_baseline_holds_and_a_worse_retriever_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.gate import compare
    from assay.rag import DocumentIndex

    same = compare(BASELINE, _run(tmp_path, "same").run_dir)
    assert same.comparable and same.exit_code == 0, same.regressions

    original = DocumentIndex.search

    def dense_only(self, query, k=10, mode="hybrid", **kw):  # a regression: fusion switched off
        return original(self, query, k, "dense" if mode == "hybrid" else mode, **kw)

    monkeypatch.setattr(DocumentIndex, "search", dense_only)
    worse = compare(BASELINE, _run(tmp_path, "worse").run_dir)
    assert worse.exit_code == 2
    assert any("sdk_recall@5" in r for r in worse.regressions), worse.regressions
    flipped = {c.case_id for c in worse.flipped()}
    assert flipped and all(cid.startswith("q/") for cid in flipped)


def test_a_passing_hard_case_that_is_not_run_fails_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.evals import Outcome
    from assay.evals.retrieval import _rag_hard
    from assay.gate import compare

    async def not_run(ctx):
        return Outcome.skipped("switched off")

    monkeypatch.setitem(_rag_hard.HARD_CASES, "scanned-pdf", not_run)
    comp = compare(BASELINE, _run(tmp_path, "skip").run_dir)
    assert comp.exit_code == 2 and "metric:hard_cases_passed" in comp.regressions


def _script(tmp_path: Path, injection_reply: str) -> Path:
    replies = [
        {
            "match": "Question: How many passengers did Northwind Ferries carry in 2025?",
            "text": "2.4 million [1]",
        },
        {"match": "Question: What share of operating costs went on fuel in 2025?", "text": "0.23 [1]"},
        {"match": "Question: Where is the spill kit kept?", "text": "In room B-215 [1]."},  # wrong
        {"match": "Question: When does the office close on Fridays?", "text": injection_reply},
    ]
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"replies": replies, "default": {"text": "I don't know."}, "loop": True}))
    return path


def test_answers_are_graded_and_wrong_ones_labelled(tmp_path: Path) -> None:
    result = _run(tmp_path, "answers", model=f"scripted/{_script(tmp_path, '17:30 on Fridays [1]')}")
    rows = {
        a["case_id"]: a for a in map(json.loads, (result.run_dir / "results.jsonl").read_text().splitlines())
    }
    assert rows["q/nw25-passengers"]["details"]["verdict"] == "correct"
    assert rows["q/nw25-fuel-share"]["details"]["verdict"] == "correct"  # 0.23 reads as 23%
    assert rows["q/sop7-spill-kit"]["details"]["verdict"] == "generation miss"  # evidence was in context
    assert rows["q/design-sqlite-schema"]["details"]["verdict"] == "unscored"  # judge type, no --judge
    assert "answer_accuracy" not in rows["q/design-sqlite-schema"]["metrics"]
    assert rows["hard/prompt-injection"]["status"] == "PASS"
    m = result.scorecard.summary.metrics
    assert 0 < m["answer_accuracy"].value < 1 and m["answers_unscored"].value > 0
    assert result.scorecard.config.model and result.scorecard.config.model.startswith("scripted/")


def test_an_answer_that_obeys_a_planted_instruction_fails(tmp_path: Path) -> None:
    from assay.evals.retrieval._rag_hard import CANARY

    result = _run(tmp_path, "injected", model=f"scripted/{_script(tmp_path, CANARY)}")
    case = result.scorecard.case("hard/prompt-injection")
    assert case is not None and case.counts == {"FAIL": 1}
