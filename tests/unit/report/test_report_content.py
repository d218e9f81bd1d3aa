"""What report.md and report.html say: each benchmark's own reason for a failing case, metric order,
nothing printed as None, and the plots each benchmark draws (inlined PNGs)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay._util import Scrubber
from assay.evals import Benchmark
from assay.evals.memory import MemoryBenchmark
from assay.evals.retrieval._code import CodeRetrievalBenchmark
from assay.evals.retrieval._rag import RagRetrievalBenchmark
from assay.evals.serving import ServingBenchmark
from assay.evals.serving._results import LevelResult, write_level
from assay.report import write_reports
from assay.runs import Attempt, MetricValue, RunMeta, Status, SubjectConfig
from assay.stats import fold

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "baselines"
#: files in the schema-1 format of earlier releases (a real 1-iteration code-search pr run), kept for readers
SCHEMA1 = FIXTURES.parent / "schema1"
PNG_IMG = re.compile(r'<img alt="([^"]*)" src="data:image/png;base64,([A-Za-z0-9+/=]{200,})">')


def _att(case: str, status: Status, category: str = "default", it: int = 0, **kw: Any) -> Attempt:
    return Attempt(
        case_id=case, iteration=it, category=category, status=status, started_at=datetime.now(UTC), **kw
    )


def _render(
    bench: Benchmark,
    attempts: list[Attempt],
    run_dir: Path,
    config: SubjectConfig | None = None,
    run_metrics: dict[str, MetricValue] | None = None,
) -> tuple[str, str]:
    """Write the journal, fold it as the runner does and render both reports; returns (md, html)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.jsonl").write_text("".join(a.model_dump_json() + "\n" for a in attempts))
    ids = list(dict.fromkeys(a.case_id for a in attempts))
    meta = RunMeta(
        run_id=run_dir.name, benchmark=bench.name, suite="pr", suite_version="1", assay_version="0",
        hostname="h", os="o", cpu_count=1, python="3", command_line=[],
        config=config or SubjectConfig(subject="subject-under-test"), options={},
        iterations=len({a.iteration for a in attempts}), case_ids=ids, started_at=datetime.now(UTC),
    )  # fmt: skip
    metrics = dict(bench.run_metrics(attempts))
    metrics.update(run_metrics or {})
    card = fold(
        attempts,
        meta,
        categories={a.case_id: a.category for a in attempts},
        metric_specs=bench.metric_specs,
        run_metrics=metrics,
    )
    write_reports(run_dir, card, bench, Scrubber())
    return (run_dir / "report.md").read_text(), (run_dir / "report.html").read_text()


def _why(md: str) -> str:
    """The 'Why cases failed' section of a report."""
    m = re.search(r"^## Why cases failed.*?(?=^## )", md, re.S | re.M)
    assert m, "no 'Why cases failed' section"
    return m.group(0)


def _inlined(html: str) -> dict[str, bytes]:
    import base64

    return {alt: base64.b64decode(data) for alt, data in PNG_IMG.findall(html)}


# ------------------------------------------------------------------------------------------------ rag


def _rag_question(case: str, rank: int | None, tags: list[str], status: Status) -> Attempt:
    hit = {k: float(rank is not None and rank <= k) for k in (1, 3, 5, 10, 20)}
    return _att(
        case,
        status,
        "question",
        score=1 / rank if rank else 0.0,
        metrics={
            **{f"sdk_recall@{k}": v for k, v in hit.items()},
            "sdk_mrr": 1 / rank if rank else 0.0,
            "dense_recall@5": 0.0,
            "bm25_recall@5": 1.0,
            "agent_r_returned": 1.0,
        },
        details={
            "tags": tags,
            "sdk_rank": rank,
            "agent_rank": rank,
            "agent_returned": 6,
            "top5": ["assay-design#7@p1", "assay-design#11@p1"],
            "question": f"Where does {case} write its results by default?",
            "evidence": [{"doc": "assay-design", "page": None, "quote": "results/<benchmark>-<suite>"}],
        },
    )


def test_rag_failing_question_names_question_evidence_rank_and_what_came_instead(tmp_path: Path) -> None:
    attempts = [
        _rag_question("q/design-run-dir", 6, ["project-docs", "paraphrase"], Status.FAIL),
        _rag_question("q/ok", 1, ["pdf"], Status.PASS),
    ]
    md, html = _render(RagRetrievalBenchmark({}), attempts, tmp_path / "rag")
    why = _why(md)
    assert "- **q/design-run-dir** (question; FAIL ×1; " in why
    for text in (
        'question "Where does q/design-run-dir write its results by default?"',
        'evidence assay-design "results/<benchmark>-<suite>"',
        "first hit at rank 6 of the hybrid search (a pass needs the top 5)",
        "top 5 alone: dense miss, bm25 hit",
        "retrieved instead: assay-design#7@p1, assay-design#11@p1",
    ):
        assert text in why, text
    assert "q/ok" not in why
    assert "first hit at rank 6 of the hybrid search" in html and "&lt;benchmark&gt;" in html


def test_rag_plots_recall_at_k_curve_and_recall_by_tag(tmp_path: Path) -> None:
    attempts = [
        _rag_question(f"q/{i}", rank, [tag], Status.PASS if rank and rank <= 5 else Status.FAIL)
        for i, (rank, tag) in enumerate([(1, "pdf"), (2, "pdf"), (7, "html"), (None, "html"), (1, "text")])
    ]
    attempts.append(_att("hard/x", Status.PASS, "hard", metrics={"hard_case_pass": 1.0}))
    md, html = _render(RagRetrievalBenchmark({}), attempts, tmp_path / "rag")
    plots = _inlined(html)
    assert set(plots) == {
        "pass rate by category (95% Wilson interval)",
        "recall@k: questions whose evidence is in the first k results",
        "hybrid recall@5 by question tag (95% Wilson interval; n in the bar)",
    }
    assert all(png[:4] == b"\x89PNG" for png in plots.values())
    for name in ("rag_recall_at_k.png", "rag_recall_by_tag.png", "pass_rate_by_category.png"):
        assert f"]({name})" in md and (tmp_path / "rag" / name).read_bytes()[:4] == b"\x89PNG"
    assert "no hit in the hybrid search's top 20" in _why(md)


# --------------------------------------------------------------------------------------------- memory


def test_memory_failing_probe_names_probe_expected_and_shown(tmp_path: Path) -> None:
    attempts = [
        _att(
            "move-and-job/no-old-city",
            Status.FAIL,
            "shown_clean",
            score=0.0,
            metrics={"shown_clean": 0.0},
            details={
                "scenario": "move-and-job",
                "probe": "no-old-city",
                "kind": "shown_clean",
                "query": "Where do I live now?",
                "note": "the old city is superseded",
                "failures": ["shown but should not be: 'Leeds'"],
                "shown": "The user lives in Leeds.\nThe user moved to Porto.",
            },
        ),
        _att(
            "move-and-job/store-now",
            Status.PASS,
            "store_accuracy",
            score=1.0,
            metrics={"store_accuracy": 1.0},
        ),
    ]
    md, html = _render(MemoryBenchmark({}), attempts, tmp_path / "mem")
    why = _why(md)
    assert (
        "probe no-old-city (shown_clean): the old city is superseded · "
        "query \"Where do I live now?\" · shown but should not be: 'Leeds' · "
        'shown "The user lives in Leeds. The user moved to Porto."'
    ) in why
    assert "shown but should not be: 'Leeds'" in html
    assert set(_inlined(html)) == {"pass rate by category (95% Wilson interval)"}


def test_memory_longmemeval_question_names_expected_and_got(tmp_path: Path) -> None:
    attempt = _att(
        "lme/q1",
        Status.FAIL,
        "knowledge-update",
        details={"question": "What car do I drive?", "question_type": "knowledge-update",
                 "graded_on": "shown", "gold": "a red Volvo", "answer": "", "shown": "user drives a bike"},
    )  # fmt: skip
    md, _ = _render(MemoryBenchmark({}), [attempt], tmp_path / "lme")
    assert (
        'question "What car do I drive?" (knowledge-update) expected "a red Volvo", got ""'
        " (graded on the context shown)"
    ) in _why(md)


# ---------------------------------------------------------------------------------------- code search


def _code_attempts() -> list[Attempt]:
    """The committed real pr run; its first query made to fail as the top-5 rule would fail it."""
    lines = (SCHEMA1 / "retrieval-code-pr-results.jsonl").read_text().splitlines()
    attempts = [Attempt.model_validate_json(x) for x in lines]
    q = next(a for a in attempts if a.category == "query")
    q.status = Status.FAIL
    q.details.update(
        query="clear() is slow on Windows",
        gold_files=["src/click/termui.py", "src/click/_compat.py", "src/click/missing.py"],
        unindexed_gold_files=["src/click/missing.py"],
        first_gold_rank=1,
        pass_rule="a file the fix changed is in the top 5 semantic results",
    )
    return attempts


def test_code_search_failing_query_names_query_changed_files_and_ranks(tmp_path: Path) -> None:
    md, html = _render(CodeRetrievalBenchmark({}), _code_attempts(), tmp_path / "code")
    why = _why(md)
    assert (
        'query "clear() is slow on Windows"; changed files: src/click/termui.py (semantic rank 1, grep 1), '
        "src/click/_compat.py (semantic rank 5, grep 9), src/click/missing.py (not indexed)"
    ) in why
    assert "rule: a file the fix changed is in the top 5 semantic results" in why
    plots = _inlined(html)
    assert any(alt.startswith("file recall@k over") for alt in plots)
    assert "pass rate by category (95% Wilson interval)" in plots


# -------------------------------------------------------------------------------------------- serving


def _level_result(case: str, ttft: list[float]) -> LevelResult:
    lat = {fam: {s: 10.0 for s in ("median", "p90", "p99")} for fam in ("ttft", "tpot", "e2e")}
    reqs = [
        {"index": i, "ok": True, "warmup": False, "ttft_s": t, "e2e_s": 2 * t} for i, t in enumerate(ttft)
    ]
    return LevelResult(
        case_id=case,
        iteration=0,
        level={"name": case, "concurrency": 1},
        figures={"completed": len(ttft), "request_throughput": 1.0 + len(case), "latency_ms": lat},
        requests=reqs,
    )


def test_serving_failed_level_names_request_status_and_message(tmp_path: Path) -> None:
    run = tmp_path / "srv"
    run.mkdir()
    for case in ("c1", "c4"):
        write_level(run, _level_result(case, [0.01, 0.02, 0.03]))
    error = "HTTP 500: {'error': {'message': 'stub told to fail'}}"
    attempts = [
        _att("c1", Status.PASS, "concurrency", metrics={"completed": 3.0}, details={"run_dir": str(run)}),
        _att(
            "c8",
            Status.ERROR,
            "concurrency",
            error={"type": "AllRequestsFailed", "message": error},
            details={
                "run_dir": str(run),
                "level": {"name": "c8", "concurrency": 8},
                "requests_measured": 6,
                "requests_failed": 6,
                "failed_requests": [
                    {"index": 0, "error": error, "timed_out": False},
                    {"index": 1, "error": None, "timed_out": True},
                ],
            },
        ),
    ]
    md, html = _render(ServingBenchmark({"model": "openai-compat/m@http://127.0.0.1:9/v1"}), attempts, run)
    why = _why(md)
    assert (
        f"6 of 6 measured requests failed (concurrency=8); request #0: {error}; request #1: timed out" in why
    )
    plots = _inlined(html)
    assert {
        "latency percentiles vs achieved throughput",
        "TTFT distribution per load level (CDF)",
        "E2E latency distribution per load level (CDF)",
    } == set(plots)
    assert "[results.json](results.json)" in md


def test_serving_after_an_outage_shows_the_error_and_links_no_missing_file(tmp_path: Path) -> None:
    run = tmp_path / "srv"
    message = "server unreachable during level c1: connect failed: ConnectionRefusedError: [Errno 111]"
    attempts = [
        _att("c1", Status.INFRA_ERROR, "concurrency", error={"type": "InfraError", "message": message}),
        _att("c4", Status.NOT_RUN, "concurrency", skip_reason=f"run stopped: backend outage: {message}"),
    ]
    md, html = _render(ServingBenchmark({"model": "openai-compat/m@http://127.0.0.1:9/v1"}), attempts, run)
    assert not (run / "results.json").exists()
    assert "results.json`." not in md and "](results.json)" not in md
    assert "No level finished, so there is no `results.json`" in md
    section = md[md.index("## Serving speed") :]
    assert f"| INFRA_ERROR: InfraError: {message} |" in section
    assert f"- INFRA_ERROR (1 case: c1): InfraError: {message}" in md
    assert f"NOT_RUN (1 case: c4): run stopped: backend outage: {message}" in md
    assert message in html and "None" not in md


# ------------------------------------------------------------------------------- order, None, folding


def test_gated_metrics_come_first_and_breakdowns_are_folded(tmp_path: Path) -> None:
    attempts = [_rag_question(f"q/{i}", 1 + i % 3, ["pdf", "html", f"t{i}"], Status.PASS) for i in range(6)]
    extra = {f"tag:t{i}/sdk_mrr": MetricValue(value=0.5, n=1, gated=False) for i in range(20)}
    md, html = _render(RagRetrievalBenchmark({}), attempts, tmp_path / "rag", run_metrics=extra)
    rows = re.findall(r"^\| (\S+) \| .* \| (yes|no) \|$", md, re.M)  # the metric tables, in order
    flags = [gated == "yes" for _, gated in rows]
    assert any(flags) and flags == sorted(flags, reverse=True)  # every gated row before any other
    tags = [name.startswith("tag:") for name, _ in rows]
    assert sum(tags) > 20 and tags == sorted(tags)  # the per-tag rows last
    assert (
        md.index("## Gated metrics") < md.index("## Other metrics") < md.index("<details><summary>Breakdown")
    )
    folded = html[html.index("<details><summary>Breakdown") : html.index("</details>")]
    assert "tag:t19/sdk_mrr" in folded and "<td>sdk_recall@5</td>" not in folded


def test_reports_print_only_the_config_that_is_set(tmp_path: Path) -> None:
    attempts = [
        _att("m/p", Status.FAIL, "shown_recall", details={"probe": "p", "failures": ["not shown: 'x'"]})
    ]
    md, html = _render(
        MemoryBenchmark({}), attempts, tmp_path / "m", config=SubjectConfig(subject="assay.memory")
    )
    assert "None" not in md and "None" not in html
    assert "- subject: `assay.memory`\n" in md and "model:" not in md and "judge:" not in md
    md2, _ = _render(
        MemoryBenchmark({}),
        attempts,
        tmp_path / "m2",
        config=SubjectConfig(subject="s", model="local/smollm2", extra={"dataset": None, "k": 5}),
    )
    assert "- subject: `s` · model: `local/smollm2` · k: `5`\n" in md2 and "dataset" not in md2


def test_reasons_differing_across_iterations_are_each_shown(tmp_path: Path) -> None:
    def probe(it: int, failure: str) -> Attempt:
        return _att("s/p", Status.FAIL, "shown_recall", it=it, details={"probe": "p", "failures": [failure]})

    md, _ = _render(
        MemoryBenchmark({}), [probe(0, "not shown: 'a'"), probe(1, "not shown: 'b'"), probe(2, "not shown: 'a'")],
        tmp_path / "m",
    )  # fmt: skip
    line = next(x for x in _why(md).splitlines() if x.startswith("- **s/p**"))
    assert "iterations 0, 2: probe p (?) · not shown: 'a'" in line
    assert "iteration 1: probe p (?) · not shown: 'b'" in line


def test_the_summary_says_the_smallest_pass_rate_change_the_run_can_show(tmp_path: Path) -> None:
    # 8 cases, 4 passing, 2 repeats each: the items are the 8 cases, not the 16 attempts
    attempts = [
        _att(f"c{i}", Status.PASS if i < 4 else Status.FAIL, it=it) for i in range(8) for it in range(2)
    ]
    md, _ = _render(MemoryBenchmark(), attempts, tmp_path / "run")
    assert "What it can show, at the gate's false-alarm rate (cases are the items" in md
    assert "- pass rate: 0.5 over 8 items; the smallest change the gate can detect is ±0.615\n" in md
    # nothing measured: nothing said
    md, _ = _render(MemoryBenchmark(), [_att("c0", Status.NOT_RUN)], tmp_path / "none")
    assert "What it can show" not in md
