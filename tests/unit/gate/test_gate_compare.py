"""compare(): buckets, the regression rule, noise floors, metrics, comparability, exit codes, output."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from assay.errors import ConfigError
from assay.gate import compare, comparison_markdown, load_comparison, load_run, print_comparison
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.runs.records import MetricSpec, SubjectConfig
from assay.stats import noise_from_scorecards


def bucket_of(comp, case_id: str) -> str:
    return next(c.bucket for c in comp.cases if c.case_id == case_id)


def test_every_bucket() -> None:
    base = card(
        {
            "reg": "PPPPP",
            "imp": "FFFFF",
            "flk": "PFPFP",
            "same": "PPPPP",
            "gone": "PPPPP",
            "unm": "PPPPP",
            "score": "PPPPP",
            "slow": "PPPPP",
        },
        scores={"score": [0.9] * 5},
        elapsed={"slow": 1.0},
    )
    cur = card(
        {
            "reg": "FFFFF",
            "imp": "PPPPP",
            "flk": "FFFFF",
            "same": "PPPPP",
            "new": "PPPPP",
            "unm": "IIIII",
            "score": "PPPPP",
            "slow": "PPPPP",
        },
        scores={"score": [0.5] * 5},
        elapsed={"slow": 4.0},
    )
    comp = compare(base, cur)
    expected = {
        "reg": "regressed",
        "imp": "improved",
        "flk": "flaky",
        "same": "unchanged",
        "gone": "only_in_baseline",
        "new": "only_in_current",
        "unm": "not_measured",
        "score": "score_regressed",
        "slow": "slower",  # was "time_regressed": a time with no measured noise is not a verdict
    }
    assert {c.case_id: c.bucket for c in comp.cases} == expected
    assert sum(comp.counts.values()) == len(expected)
    assert comp.regressions == ["reg"]
    assert comp.exit_code == 2
    assert "REGRESSION" in comp.verdict
    # missing and unmeasured cases are warnings without --require-complete
    assert any("gone (missing)" in w and "unm (not measured)" in w for w in comp.warnings)


def test_score_and_time_regressions_do_not_fail_the_run() -> None:
    base = card({"a": "PPP", "b": "PPP"}, scores={"a": [1.0] * 3}, elapsed={"b": 1.0})
    cur = card({"a": "PPP", "b": "PPP"}, scores={"a": [0.5] * 3}, elapsed={"b": 9.0})
    comp = compare(base, cur)
    assert [c.bucket for c in comp.cases] == ["score_regressed", "slower"]  # was "time_regressed"
    assert comp.exit_code == 0


def test_flaky_baseline_drop_is_not_a_regression_without_noise() -> None:
    comp = compare(card({"a": "PPPFP"}), card({"a": "FFFFF"}))
    assert bucket_of(comp, "a") == "flaky" and comp.exit_code == 0
    comp = compare(card({"a": "PPPPP"}), card({"a": "PFFFF"}))
    assert bucket_of(comp, "a") == "flaky" and comp.exit_code == 0


def test_single_iteration_pass_to_fail_against_flaky_baseline_is_a_flip() -> None:
    # was: bucket "flaky"; a one-attempt change is now reported as a flip, whatever the baseline
    comp = compare(card({"a": "PPPFP"}), card({"a": "F"}))
    assert bucket_of(comp, "a") == "flipped"
    assert "known flaky" in comp.cases[0].reason
    assert comp.exit_code == 0
    assert [c.case_id for c in comp.flipped()] == ["a"]


def test_one_attempt_flip_is_a_flip_not_a_regression_without_a_noise_floor() -> None:
    # was: "a single P -> F is a regression, even at one iteration" (the old rule called one pass stable)
    comp = compare(card({"a": "P"}), card({"a": "F"}))
    a = comp.cases[0]
    assert (a.baseline.stability, a.current.stability) == ("single-pass", "single-fail")
    assert a.bucket == "flipped" and comp.exit_code == 0 and comp.regressions == []
    assert a in comp.flipped() and "one attempt" in a.reason
    # the same against a stable-pass baseline of 5 attempts: still one attempt on the current side
    assert compare(card({"a": "PPPPP"}), card({"a": "F"})).cases[0].bucket == "flipped"
    # a noise file that saw the case flake keeps it a flip
    noise = noise_from_scorecards([card({"a": "PFPPP"}, run_id=f"n{i}") for i in range(3)])
    assert compare(card({"a": "P"}), card({"a": "F"}), noise=noise).cases[0].bucket == "flipped"


def test_one_attempt_flip_is_a_regression_where_the_noise_floor_says_the_case_is_stable() -> None:
    # 2000 noise attempts, all passing: one failure in one attempt is beyond what chance explains
    noise = noise_from_scorecards([card({"a": "P" * 1000}, run_id=f"n{i}") for i in range(2)])
    assert noise.case_floor("a", 1, 1) == 0.0
    comp = compare(card({"a": "P"}), card({"a": "F"}), noise=noise)
    assert comp.cases[0].bucket == "regressed" and comp.exit_code == 2
    assert "one attempt" in comp.cases[0].reason
    # in a suite of 40 cases (5% split over them) a record of 25 passes is not enough for one attempt
    ids = [f"c{i}" for i in range(40)]
    few = noise_from_scorecards([card(dict.fromkeys(ids, "PPPPP"), run_id=f"n{i}") for i in range(5)])
    comp = compare(card(dict.fromkeys(ids, "P")), card({**dict.fromkeys(ids, "P"), "c0": "F"}), noise=few)
    assert comp.cases[0].bucket == "flipped" and comp.exit_code == 0


def test_noise_floor_decides_partial_drops() -> None:
    steady = noise_from_scorecards([card({"a": "PPPPP", "b": "PPPPP"}, run_id=f"n{i}") for i in range(5)])
    wobbly = noise_from_scorecards(
        [
            card({"a": o, "b": "PPPPP"}, run_id=f"n{i}")
            for i, o in enumerate(["PFPFP", "FFPPF", "PPFFP", "FPFPF", "PFFPP"])
        ]
    )
    base, cur = card({"a": "PPPPP", "b": "PPPPP"}), card({"a": "PPFFF", "b": "PPPPF"})
    comp = compare(base, cur, noise=steady)
    a = comp.cases[0]
    assert a.bucket == "regressed" and a.floor is not None and a.floor < 0.6
    assert "noise floor" in a.reason
    assert bucket_of(comp, "b") == "unchanged" or bucket_of(comp, "b") == "flaky"
    assert "b" not in comp.regressions  # one failure in five of a case that always passed: within noise
    comp = compare(base, cur, noise=wobbly)
    assert bucket_of(comp, "a") == "flaky" and comp.exit_code == 0
    # the mirror image: a rise beyond the floor is an improvement
    assert compare(cur, base, noise=steady).cases[0].bucket == "improved"


def test_metrics_tolerance_direction_and_gating() -> None:
    specs = [
        MetricSpec(name="recall", kind="proportion", direction="higher", tolerance=0.02),
        MetricSpec(name="latency_ms", kind="continuous", direction="lower", tolerance=0.05, unit="ms"),
        MetricSpec(name="cosmetic", kind="proportion", direction="higher", gated=False),
    ]
    qs = [f"q{i}" for i in range(100)]  # n = 100 questions -> 1.5/n = 0.015

    def run(recall: float, latency: float, cosmetic: float, run_id: str):
        return card(
            {q: "P" for q in qs},
            run_id=run_id,
            metrics={q: [{"recall": recall, "latency_ms": latency, "cosmetic": cosmetic}] for q in qs},
            metric_specs=specs,
        )

    base = run(0.80, 100.0, 0.5, "b")
    ok = compare(base, run(0.785, 104.0, 0.1, "c1"))
    by = {m.name: m for m in ok.metrics}
    assert by["recall"].tolerance == pytest.approx(0.02) and by["recall"].verdict == "ok"
    assert by["latency_ms"].verdict == "ok"
    assert by["cosmetic"].verdict == "regressed" and not by["cosmetic"].gated
    assert ok.exit_code == 0
    bad = compare(base, run(0.75, 110.0, 0.5, "c2"))
    by = {m.name: m for m in bad.metrics}
    assert by["recall"].verdict == "regressed" and by["latency_ms"].verdict == "regressed"
    assert set(bad.regressions) == {"metric:recall", "metric:latency_ms"}
    assert bad.exit_code == 2
    # a gated metric the current run lost is incomplete; one only the current run has is not
    lost = card({q: "P" for q in qs}, run_id="c5", metric_specs=specs)
    comp = compare(base, lost, require_complete=True)
    assert comp.exit_code == 2 and "metric:recall (not measured)" in comp.incomplete
    assert compare(lost, base, require_complete=True).exit_code == 0
    better = compare(base, run(0.9, 50.0, 0.5, "c3"))
    assert {m.name: m.verdict for m in better.metrics}["latency_ms"] == "improved"
    # the noise spread widens the tolerance
    noisy = noise_from_scorecards([run(r, 100.0, 0.5, f"n{i}") for i, r in enumerate([0.70, 0.80, 0.90])])
    widened = compare(base, run(0.75, 100.0, 0.5, "c4"), noise=noisy)
    rec = next(m for m in widened.metrics if m.name == "recall")
    assert rec.tolerance >= 0.2 and rec.verdict == "ok"


def test_few_questions_widen_metric_tolerance() -> None:
    # was: tolerance exactly 1.5/n = 0.5; now the paired binomial rule over the 3 questions
    spec = [MetricSpec(name="acc", kind="proportion", direction="higher", tolerance=0.0)]
    base = card(
        {"q1": "P", "q2": "P", "q3": "P"},
        metrics={q: [{"acc": 1.0}] for q in ("q1", "q2", "q3")},
        metric_specs=spec,
    )
    cur = card(
        {"q1": "P", "q2": "P", "q3": "P"},
        metrics={"q1": [{"acc": 0.0}], "q2": [{"acc": 1.0}], "q3": [{"acc": 1.0}]},
        metric_specs=spec,
    )
    m = compare(base, cur).metrics[0]
    assert m.tolerance_source == "paired binomial" and "3 items, 1 differ" in m.tolerance_detail
    assert m.tolerance > 1 / 3  # one question flipping is noise
    assert m.verdict == "ok"


@pytest.mark.parametrize(
    ("field", "kwargs", "needle"),
    [
        ("benchmark", {"benchmark": "other"}, "benchmark differs"),
        ("suite", {"suite": "nightly"}, "suite differs"),
        ("suite_version", {"suite_version": "2"}, "suite version differs"),
        (
            "model",
            {"config": SubjectConfig(subject="sim", model="m2", judge_model="sim-judge")},
            "subject model",
        ),
        (
            "judge",
            {"config": SubjectConfig(subject="sim", model="sim-model", judge_model="j2")},
            "judge model",
        ),
        (
            "embedder",
            {
                "config": SubjectConfig(
                    subject="sim", model="sim-model", judge_model="sim-judge", embedder="e2"
                )
            },
            "embedder",
        ),
    ],
)
def test_not_comparable(field: str, kwargs: dict, needle: str) -> None:
    comp = compare(card({"a": "PPP"}), card({"a": "FFF"}, **kwargs))
    assert not comp.comparable and comp.exit_code == 3
    assert any(needle in r for r in comp.not_comparable)
    assert comp.verdict.startswith("not comparable")
    assert comp.cases == []  # nothing is judged across a config change


def test_noise_for_another_configuration_is_not_comparable() -> None:
    other = SubjectConfig(subject="sim", model="m2", judge_model="sim-judge")
    noise = noise_from_scorecards([card({"a": "PP"}, run_id=f"n{i}", config=other) for i in range(2)])
    comp = compare(card({"a": "PP"}), card({"a": "PP"}), noise=noise)
    assert comp.exit_code == 3 and "noise file subject model differs" in comp.not_comparable[0]


def test_require_complete() -> None:
    base, cur = card({"a": "PPP", "b": "PPP"}), card({"a": "PPP", "b": "III"})
    assert compare(base, cur).exit_code == 0
    comp = compare(base, cur, require_complete=True)
    assert comp.exit_code == 2 and comp.incomplete == ["b (not measured)"]
    assert "INCOMPLETE" in comp.verdict
    comp = compare(base, card({"a": "PPP"}), require_complete=True)
    assert comp.exit_code == 2 and comp.incomplete == ["b (missing)"]
    # a case the baseline never measured is a warning, not an incomplete current run
    comp = compare(card({"a": "PPP", "b": "III"}), card({"a": "PPP", "b": "PPP"}), require_complete=True)
    assert comp.exit_code == 0 and comp.counts["not_measured"] == 1
    assert any("not measured in the baseline" in w for w in comp.warnings)
    # a new case in the current run is not incompleteness
    assert compare(card({"a": "PPP"}), card({"a": "PPP", "c": "FFF"}), require_complete=True).exit_code == 0


def test_flipped_cases_worst_first_in_markdown() -> None:
    base = card({"x": "PPPPP", "y": "PPPPP", "z": "FFFFF", "w": "PPPPP"})
    cur = card({"x": "PPPPF", "y": "FFFFF", "z": "PPPPP", "w": "PPPPP"})
    comp = compare(base, cur)
    assert [c.case_id for c in comp.flipped()] == ["y", "x", "z"]
    assert comp.pass_hat_k["baseline"] == {k: pytest.approx(0.75) for k in range(1, 6)}
    assert comp.pass_hat_k["current"][1] == pytest.approx((0.8 + 0 + 1 + 1) / 4)
    assert comp.pass_hat_k["current"][5] == pytest.approx(0.5)
    md = comparison_markdown(comp)
    assert "### Flipped cases (3), worst first" in md
    assert md.index("| y |") < md.index("| x |") < md.index("| z |")
    assert "| w |" not in md
    assert "| baseline | 0.75 | 0.75 | 0.75 | 0.75 | 0.75 |" in md
    assert "**Verdict: REGRESSION: 1 regressed: y** (exit 2)" in md


def test_terminal_output_and_json_roundtrip(tmp_path: Path) -> None:
    comp = compare(
        card({"a": "PPP", "b": "PPP", "[c]": "PFP"}, run_id="base"),
        card({"a": "FFF", "b": "PPP", "[c]": "PPP"}, run_id="cur"),
    )
    buf = io.StringIO()
    print_comparison(comp, Console(file=buf, width=120, color_system=None))
    lines = buf.getvalue().splitlines()
    assert lines[0] == "compare base (<base>) -> cur (<cur>)"
    assert lines[1] == "cases: regressed 1, flaky 1, unchanged 1"
    rows = [ln for ln in lines if ln.startswith("│")]
    assert len(rows) == 2  # only the cases that changed; "b" is counted, not listed
    assert [cell.strip() for cell in rows[0].split("│")[1:-1]] == [
        "regressed", "a", "3/3", "0/3", "-1.00", "stable-pass -> stable-fail"
    ]  # fmt: skip
    assert " [c] " in rows[1]  # case ids are shown literally, never read as markup
    assert lines[-1] == "REGRESSION: 1 regressed: a"
    path = comp.save(tmp_path)
    assert path.name == "comparison.json"
    again = load_comparison(path)
    assert again == comp
    assert json.loads(path.read_text())["exit_code"] == 2


def test_compare_reads_run_dirs_and_scorecard_files(tmp_path: Path) -> None:
    for name, outcome in (("base", "PPP"), ("cur", "FFF")):
        d = tmp_path / name
        d.mkdir()
        (d / "scorecard.json").write_text(
            card({"a": outcome}, run_id=name).model_dump_json(), encoding="utf-8"
        )
    assert compare(tmp_path / "base", tmp_path / "cur" / "scorecard.json").exit_code == 2
    assert load_run(tmp_path / "base").meta is None


def test_load_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such run directory"):
        load_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"has no scorecard\.json"):
        load_run(tmp_path / "empty")
    bad = tmp_path / "bad.json"
    bad.write_text('{"run_id": 1}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.json: not a scorecard\.json"):
        load_run(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_run(bad)
