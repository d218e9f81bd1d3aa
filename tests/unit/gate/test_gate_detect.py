"""The smallest change a proportion's items let the gate see, and the items a wanted change needs."""

from __future__ import annotations

import pytest

from assay.gate import detect_line, detect_lines, detectable_change, items_to_detect
from assay.gate._simulate import scorecard_from_outcomes
from assay.runs import MetricSpec
from assay.stats.noise import FAMILY_ALPHA
from assay.stats.tolerance import binomial_tolerance


def test_it_is_the_gates_own_tolerance_between_two_runs_of_that_size() -> None:
    assert detectable_change(0.5, 8) == binomial_tolerance(0.5, 8, 0.5, 8, FAMILY_ALPHA / 2)
    assert detectable_change(0.5, 100) < detectable_change(0.5, 8)  # more items see smaller changes


@pytest.mark.parametrize(("rate", "change"), [(0.5, 0.03), (0.9, 0.05), (0.2, 0.1)])
def test_items_to_detect_is_the_fewest_items_that_see_the_change(rate: float, change: float) -> None:
    n = items_to_detect(rate, change)
    assert n is not None and detectable_change(rate, n) <= change < detectable_change(rate, n - 1)


def test_a_change_no_items_can_show_and_the_report_line() -> None:
    assert items_to_detect(0.5, 0.0) is None and detectable_change(0.5, 0) is None
    line = detect_line("pass rate", 0.5, 8, 0.03)
    assert line is not None and "±0.615" in line and "needs about 2201 items" in line


def test_a_runs_lines_are_its_pass_rate_over_cases_and_each_gated_proportion() -> None:
    outcomes = {f"c{i}": "PP" if i < 4 else "FF" for i in range(8)}
    hit = {f"c{i}": [{"hit": float(i % 2), "speed": 3.0, "seen": 1.0}] * 2 for i in range(8)}
    specs = [
        MetricSpec(name="hit", kind="proportion"),
        MetricSpec(name="seen", kind="proportion", gated=False),
        MetricSpec(name="speed", kind="continuous"),
    ]
    card = scorecard_from_outcomes(outcomes, metrics=hit, metric_specs=specs)
    lines = detect_lines(card)
    # the 8 cases are the items (the 16 attempts repeat them); an ungated or continuous metric says nothing
    assert [line.split(":")[0] for line in lines] == ["pass rate", "hit"]
    assert lines[0] == detect_line("pass rate", 0.5, 8) and "needs" not in lines[0]
    asked = detect_lines(card, 0.1)
    assert all(f"a change of 0.1 needs about {items_to_detect(0.5, 0.1)} items" in line for line in asked)
    assert detect_lines(scorecard_from_outcomes({"c0": "I"})) == []  # nothing measured: nothing said
