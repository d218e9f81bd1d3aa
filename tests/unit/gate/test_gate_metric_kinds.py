"""Metric kinds: each kind's tolerance rule, where the tolerance came from, and what the noise file changed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from assay.evals.retrieval._rag import GATE_TOLERANCE, RagRetrievalBenchmark
from assay.evals.serving._benchmark import ServingBenchmark
from assay.gate import compare, comparison_markdown, load_run
from assay.gate._simulate import _T0, simulated_meta
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.intervals import clustered_interval, wilson_interval
from assay.runs.records import Attempt, MetricSpec, MetricValue, Scorecard, Status
from assay.stats import noise_from_scorecards
from assay.stats.folding import fold
from assay.stats.tolerance import continuous_tolerance, paired_proportion_tolerance, t_quantile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "baselines"
#: files in the schema-1 format of earlier releases (a real 1-iteration code-search pr run), kept for readers
SCHEMA1 = FIXTURES.parent / "schema1"


def with_run_metrics(run_id: str, metrics: dict[str, MetricValue]) -> Scorecard:
    """A one-case run whose only metrics are run-level ones a benchmark computed (like serving's)."""
    meta = simulated_meta(["level-1"], 1, run_id=run_id)
    attempts = [Attempt(case_id="level-1", iteration=0, status=Status.PASS, started_at=_T0)]
    return fold(attempts, meta, run_metrics=metrics)


def test_no_absolute_allowance_crosses_scales() -> None:
    """Before: tolerance max(declared, 1.5/n): at one iteration accuracy_all (0..1) got 1.5 and
    request_throughput an absolute 1.5 req/s, so neither could ever regress."""
    thr = dict(kind="continuous", unit="req/s")

    def run(run_id: str, acc: float, rps: float):
        return with_run_metrics(
            run_id,
            {
                "accuracy_all": MetricValue(value=acc, n=200, kind="proportion"),
                "request_throughput": MetricValue(value=rps, n=1, samples=[rps], **thr),
            },
        )

    comp = compare(run("b", 0.90, 2.0), run("c", 0.60, 1.6))
    by = {m.name: m for m in comp.metrics}
    acc, rps = by["accuracy_all"], by["request_throughput"]
    assert acc.verdict == "regressed" and acc.tolerance_source == "binomial"
    assert acc.tolerance < 0.15  # binomial noise of 200 emails, nowhere near 1.5
    # one sample a side, nothing declared: a relative default (10%), not an absolute 1.5 req/s
    assert rps.tolerance_source == "default" and rps.relative_tolerance == pytest.approx(0.10)
    assert rps.verdict == "regressed" and comp.exit_code == 2
    # the same relative rule at another scale: 2000 -> 1900 req/s (-5%) is within 10%
    same_scale = compare(run("b", 0.9, 2000.0), run("c", 0.9, 1900.0))
    assert {m.name: m.verdict for m in same_scale.metrics}["request_throughput"] == "ok"


def test_serving_declares_kinds_and_relative_tolerances() -> None:
    specs = {s.name: s for s in ServingBenchmark.metric_specs}
    assert specs["ttft_median_ms"].kind == "continuous" and specs["ttft_median_ms"].tolerance == 0.10
    assert specs["request_throughput"].kind == "continuous"
    assert specs["accuracy_all"].kind == "proportion" and specs["errors"].kind == "count"


def test_rag_does_not_inflate_n() -> None:
    """Before: _specs folded 1.5/n into every tolerance and run_metrics set n=max(2, ...) to dodge 1.5/n."""
    bench = RagRetrievalBenchmark({})
    specs = {s.name: s for s in bench.metric_specs}
    assert specs["sdk_recall@5"].kind == "proportion" and specs["sdk_recall@5"].tolerance == GATE_TOLERANCE
    assert specs["hard_cases_passed"].kind == "count" and specs["docs_failed_to_index"].kind == "count"
    hard = [
        Attempt(case_id="hard/x", iteration=0, status=Status.PASS, started_at=_T0),
        Attempt(
            case_id="hard/y", iteration=0, status=Status.SKIPPED, skip_reason="needs a model", started_at=_T0
        ),
    ]
    mv = bench.run_metrics(hard)["hard_cases_passed"]
    assert (mv.kind, mv.value, mv.n) == ("count", 1.0, 1)  # one hard case measured, not max(2, 2)


def test_a_count_has_no_sampling_allowance() -> None:
    def run(run_id: str, passed: float):
        return with_run_metrics(run_id, {"hard_cases_passed": MetricValue(value=passed, n=10, kind="count")})

    m = compare(run("b", 10.0), run("c", 9.0)).metrics[0]
    assert m.verdict == "regressed" and m.tolerance == 0.0
    # a noise file that saw it move by one widens it, and says so
    noise = noise_from_scorecards([run("n1", 10.0), run("n2", 9.0)])
    comp = compare(run("b", 10.0), run("c", 9.0), noise=noise)
    assert comp.metrics[0].verdict == "ok" and comp.metrics[0].tolerance_source == "noise file"
    assert comp.noise_widened == ["hard_cases_passed"]


def test_paired_proportion_rule() -> None:
    # one item flipping is never a change; six of 200 all the same way is
    base = [1.0] * 200
    assert paired_proportion_tolerance(base, [0.0] + [1.0] * 199, 0.05) > 1 / 200
    six = [0.0] * 6 + [1.0] * 194
    assert paired_proportion_tolerance(base, six, 0.05) < 6 / 200
    assert paired_proportion_tolerance(base, base, 0.05) == 0.0


def test_continuous_rules() -> None:
    assert t_quantile(0.975, 2) == pytest.approx(4.303, abs=2e-3)
    assert t_quantile(0.95, 10) == pytest.approx(1.812, abs=2e-3)
    rng = np.random.default_rng(0)
    a, b = rng.lognormal(5, 0.3, 50), rng.lognormal(5, 0.3, 50)
    tol, how = continuous_tolerance(a, b, "p50", 0.05)  # type: ignore[misc]
    assert how.startswith("bootstrap") and 0 < tol < 0.3 * math.exp(5)
    tol, how = continuous_tolerance([10.0, 11.0], [10.5, 10.0], "mean", 0.05)  # type: ignore[misc]
    assert how.startswith("Welch")
    assert continuous_tolerance([1.0], [2.0], "mean", 0.05) is None


def test_markdown_says_where_each_tolerance_came_from() -> None:
    specs = [
        MetricSpec(name="recall", kind="proportion", tolerance=0.02),
        MetricSpec(name="search_ms", kind="continuous", direction="lower", tolerance=0.2, unit="ms"),
    ]
    qs = [f"q{i}" for i in range(30)]

    def run(run_id: str, recall: float, ms: float):
        return card(
            dict.fromkeys(qs, "P"),
            run_id=run_id,
            metrics={q: [{"recall": recall, "search_ms": ms + i}] for i, q in enumerate(qs)},
            metric_specs=specs,
        )

    noise = noise_from_scorecards([run("n1", 0.8, 10.0), run("n2", 0.8, 10.0)])
    comp = compare(run("b", 0.8, 10.0), run("c", 0.8, 11.0), noise=noise)
    md = comparison_markdown(comp)
    assert "| metric | kind | better | baseline | current | Δ | tolerance | tolerance from | verdict |" in md
    by = {m.name: m for m in comp.metrics}
    assert by["recall"].tolerance_source == "declared"
    assert by["search_ms"].tolerance_source in ("declared", "bootstrap")
    assert "declared 0.02" in md
    assert "Noise file changed no metric tolerance" in md


def test_run_interval_is_clustered_by_case() -> None:
    """Before: Wilson over pooled attempts: 53 deterministic cases x 3 iterations counted as 159."""
    outcomes = {f"c{i}": ("PPP" if i < 45 else "FFF") for i in range(53)}
    sc = card(outcomes)
    low, high = sc.summary.pass_rate_low, sc.summary.pass_rate_high
    assert (low, high) == pytest.approx(wilson_interval(45, 53))
    assert high - low > (lambda iv: iv[1] - iv[0])(wilson_interval(135, 159)) * 1.5
    # independent attempts (every case a coin flip) do count every attempt
    lo, hi = clustered_interval([1, 2, 1, 2] * 20, [3] * 80)
    assert hi - lo < (lambda iv: iv[1] - iv[0])(wilson_interval(30, 80))


def test_schema_1_scorecard_reads_with_new_labels(tmp_path: Path) -> None:
    raw = json.loads((SCHEMA1 / "retrieval-code-pr-scorecard.json").read_text())
    assert raw["schema_version"] == 1 and raw["cases"][0]["stability"] == "stable-pass"
    (tmp_path / "scorecard.json").write_text(json.dumps(raw))
    sc = load_run(tmp_path).scorecard
    assert {c.stability for c in sc.cases} == {"single-pass"}  # one iteration is not "stable"
    assert all(mv.kind is None for mv in sc.summary.metrics.values())
    comp = compare(sc, sc)
    assert all(m.verdict == "not_compared" for m in comp.metrics)
    assert any("schema 1" in w for w in comp.warnings)
