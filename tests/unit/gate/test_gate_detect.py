"""The smallest change a proportion's items let the gate see, and the items a wanted change needs."""

from __future__ import annotations

import pytest

from assay.gate import detect_line, detectable_change, items_to_detect
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
