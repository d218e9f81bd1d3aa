"""noise.json: folding N runs into per-case floors and per-metric spreads."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from assay.errors import ConfigError, NotComparableError
from assay.gate._simulate import scorecard_from_outcomes, simulate_scorecard
from assay.runs.records import MetricSpec, SubjectConfig
from assay.stats import NoiseReport, load_noise, noise_from_scorecards, pass_rate_floor


def test_noise_report_fields() -> None:
    runs = [
        scorecard_from_outcomes({"a": "PPPP", "b": "PFPF", "c": "FFFF"}, run_id="r1"),
        scorecard_from_outcomes({"a": "PPPP", "b": "PPPF", "c": "FFFF"}, run_id="r2"),
        scorecard_from_outcomes({"a": "PPPP", "b": "FFPF", "c": "FFFF"}, run_id="r3"),
    ]
    rep = noise_from_scorecards(runs)
    assert rep.run_ids == ["r1", "r2", "r3"]
    assert rep.alpha == pytest.approx(0.05 / 3)
    b = rep.cases["b"]
    assert (b.runs, b.measured, b.passed, b.iterations) == (3, 12, 6, 4)
    assert b.pass_rates == [0.5, 0.75, 0.25]
    assert b.pass_rate_stdev == pytest.approx(0.25)
    assert b.pass_rate_range == pytest.approx(0.5)
    assert rep.is_flaky("b") and not rep.is_flaky("a") and not rep.is_flaky("c")
    # a flaky case has a wider floor than one that always passed
    fa, fb = rep.case_floor("a", 4, 4), rep.case_floor("b", 4, 4)
    assert fa is not None and fb is not None and fb >= fa
    assert rep.case_floor("zzz", 4, 4) is None


def test_floor_grows_with_fewer_attempts_and_run_to_run_spread() -> None:
    alpha = 0.05 / 40
    assert pass_rate_floor(25, 25, 10, 10, alpha) <= pass_rate_floor(25, 25, 5, 5, alpha)
    assert pass_rate_floor(25, 25, 5, 5, alpha) < pass_rate_floor(12, 25, 5, 5, alpha)
    z = 3.0226  # inv_cdf(1 - 0.05/40)
    assert pass_rate_floor(12, 25, 5, 5, alpha, run_stdev=0.4) == pytest.approx(
        z * math.sqrt(2) * 0.4, rel=1e-3
    )


def test_25_of_25_is_not_read_as_never_fails() -> None:
    """A clean noise record still leaves room for the odd failure: 5/5 -> 4/5 is not a regression."""
    floor = pass_rate_floor(25, 25, 5, 5, 0.05 / 40)
    assert floor >= 0.2


def test_metric_spread() -> None:
    spec = MetricSpec(name="recall", kind="proportion", direction="higher", tolerance=0.01)
    rng = np.random.default_rng(3)
    runs = [
        simulate_scorecard(
            {"q1": 1.0, "q2": 1.0},
            2,
            rng,
            run_id=f"r{i}",
            metric_specs=[spec],
            metric_means={"recall": 0.8},
            metric_sd=0.05,
        )
        for i in range(4)
    ]
    rep = noise_from_scorecards(runs)
    m = rep.metrics["recall"]
    assert len(m.values) == 4
    assert m.range == pytest.approx(max(m.values) - min(m.values))
    assert m.spread == pytest.approx(max(m.range, 2 * math.sqrt(2) * m.stdev))
    assert rep.metric_spread("recall") == m.spread
    assert rep.metric_spread("nope") is None


def test_noise_needs_two_comparable_runs() -> None:
    a = scorecard_from_outcomes({"a": "PP"}, run_id="a")
    with pytest.raises(ConfigError, match="at least 2"):
        noise_from_scorecards([a])
    b = scorecard_from_outcomes(
        {"a": "PP"}, run_id="b", config=SubjectConfig(subject="sim", model="other", judge_model="sim-judge")
    )
    with pytest.raises(NotComparableError, match="model"):
        noise_from_scorecards([a, b], names=["runs/a", "runs/b"])


def test_load_noise_errors_name_the_file(tmp_path) -> None:
    missing = tmp_path / "noise.json"
    with pytest.raises(ConfigError, match=re.escape(str(missing))):
        load_noise(missing)
    missing.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not a noise\.json"):
        load_noise(missing)
    runs = [scorecard_from_outcomes({"a": "PF"}, run_id=f"r{i}") for i in range(2)]
    missing.write_text(noise_from_scorecards(runs).model_dump_json(), encoding="utf-8")
    assert isinstance(load_noise(tmp_path), NoiseReport)  # a directory holding noise.json works too
    assert json.loads(missing.read_text())["cases"]["a"]["passed"] == 2
