"""Real pr runs: every failing case in report.md and report.html carries its benchmark's own reason."""

from __future__ import annotations

import html as htmllib
import json
from pathlib import Path

import pytest

from assay.exec import RunOptions, run_benchmark


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))


def _failed(run_dir: Path) -> list[dict]:
    rows = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    return [r for r in rows if r["status"] in ("FAIL", "ERROR")]


def _why(md: str) -> str:
    return md[md.index("## Why cases failed") :].split("\n## ", 1)[0]


def test_rag_pr_failing_questions_name_question_rank_and_retrieved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.evals.retrieval import RetrievalBenchmark, _rag

    monkeypatch.setattr(_rag, "PASS_RANK", 1, raising=False)  # a stricter rule: several questions fail
    result = run_benchmark(RetrievalBenchmark, {"component": "rag"}, RunOptions(out=tmp_path / "rag"))
    failed = _failed(result.run_dir)
    assert len(failed) >= 3
    md = (result.run_dir / "report.md").read_text()
    page = htmllib.unescape((result.run_dir / "report.html").read_text())
    why = _why(md)
    for r in failed:
        d = r["details"]
        line = next(x for x in why.splitlines() if x.startswith(f"- **{r['case_id']}**"))
        assert f'question "{d["question"]}"' in line
        assert f"first hit at rank {d['sdk_rank']} " in line or d["sdk_rank"] is None
        assert "retrieved instead: " + ", ".join(d["top5"]) in line
        assert f'question "{d["question"]}"' in page
    assert (
        'alt="recall@k: questions whose evidence is in the first k results" src="data:image/png;base64,'
        in (result.run_dir / "report.html").read_text()
    )


def test_memory_pr_failing_probes_name_what_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.evals.memory import MemoryBenchmark
    from assay.memory import _store

    monkeypatch.setattr(_store.MemoryStore, "supersede", lambda self, old, new: None)  # old facts linger
    result = run_benchmark(MemoryBenchmark, {}, RunOptions(out=tmp_path / "mem"))
    failed = _failed(result.run_dir)
    assert failed
    md = (result.run_dir / "report.md").read_text()
    page = htmllib.unescape((result.run_dir / "report.html").read_text())
    why = _why(md)
    for r in failed:
        d = r["details"]
        line = next(x for x in why.splitlines() if x.startswith(f"- **{r['case_id']}**"))
        assert f"probe {d['probe']} ({d['kind']})" in line
        for failure in d["failures"]:
            assert failure in line and failure in page
    raw = (result.run_dir / "report.html").read_text()
    for alt in ("pass rate by category (95% Wilson interval)", "pass rate by scenario (95% Wilson interval)"):
        assert f'<img alt="{alt}" src="data:image/png;base64,' in raw


def test_serving_outage_report_names_the_error_and_no_missing_file(tmp_path: Path) -> None:
    from assay.evals.serving import ServingBenchmark, StubConfig, StubServer

    stub = StubServer(StubConfig()).start_process()  # a process: stopping it closes every connection

    class DiesAfterSetup(ServingBenchmark):
        async def setup(self, run_dir: str) -> None:
            await super().setup(run_dir)
            stub.stop()  # the server goes away once the run has started

    try:
        result = run_benchmark(
            DiesAfterSetup,
            {"model": f"openai-compat/stub@{stub.base_url}/v1", "num_requests": 3},
            RunOptions(out=tmp_path / "srv"),
        )
    finally:
        stub.stop()
    assert result.exit_code == 3
    rows = [json.loads(x) for x in (result.run_dir / "results.jsonl").read_text().splitlines()]
    outage = next(r for r in rows if r["status"] == "INFRA_ERROR")
    message = outage["error"]["message"]
    md = (result.run_dir / "report.md").read_text()
    section = md[md.index("## Serving speed") :]
    assert f"INFRA_ERROR: InfraError: {message} |" in section
    assert not (result.run_dir / "results.json").exists() and "results.json`." not in md
    assert "No level finished, so there is no `results.json`" in section
    assert message in htmllib.unescape((result.run_dir / "report.html").read_text())
