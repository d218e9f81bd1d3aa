"""Property tests of the pass@k / pass^k estimators, the fold, Wilson intervals and noise floors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.gate._simulate import scorecard_from_outcomes
from assay.runs.records import MEASURED_STATUSES, Status
from assay.stats import (
    case_pass_at_k,
    case_pass_hat_k,
    exact_drop_floor,
    pass_at_k,
    pass_hat_k,
    suite_pass_at_k,
    suite_pass_hat_k,
    wilson_interval,
)

FAST = settings(max_examples=150, deadline=None, derandomize=True)


@st.composite
def n_c_k(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 60))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


@FAST
@given(n_c_k())
def test_pass_hat_k_bounds(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    hat, at = pass_hat_k(n, c, k), pass_at_k(n, c, k)
    assert 0.0 <= hat <= 1.0 and 0.0 <= at <= 1.0
    # all k pass <= one pass (k=1) <= at least one of k passes
    assert hat <= c / n + 1e-12
    assert c / n <= at + 1e-12
    # sampling without replacement: never more than the with-replacement power
    assert hat <= (c / n) ** k + 1e-12
    assert math.isclose(pass_hat_k(n, c, 1), c / n) and math.isclose(pass_at_k(n, c, 1), c / n)


@FAST
@given(n_c_k())
def test_monotone_in_k(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    if k < n:
        assert pass_hat_k(n, c, k + 1) <= pass_hat_k(n, c, k) + 1e-12
        assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k) - 1e-12


@FAST
@given(n_c_k())
def test_complement_symmetry(nck: tuple[int, int, int]) -> None:
    """P(at least one of k passes) = 1 - P(all k fail) = 1 - pass^k of the failures."""
    n, c, k = nck
    assert math.isclose(pass_at_k(n, c, k), 1.0 - pass_hat_k(n, n - c, k), abs_tol=1e-12)


@FAST
@given(st.integers(1, 25), st.floats(0.0, 1.0), st.data())
def test_unbiased_over_binomial(n: int, p: float, data: st.DataObject) -> None:
    """E[estimate] over c ~ Binomial(n, p) equals p^k and 1 - (1 - p)^k exactly."""
    k = data.draw(st.integers(1, n))
    pmf = [math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]
    e_hat = sum(w * pass_hat_k(n, c, k) for c, w in enumerate(pmf))
    e_at = sum(w * pass_at_k(n, c, k) for c, w in enumerate(pmf))
    assert math.isclose(e_hat, p**k, abs_tol=1e-9)
    assert math.isclose(e_at, 1 - (1 - p) ** k, abs_tol=1e-9)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_bad_arguments_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_known_values() -> None:
    assert pass_hat_k(5, 4, 2) == pytest.approx(6 / 10)
    assert pass_at_k(5, 1, 2) == pytest.approx(1 - 6 / 10)
    assert pass_at_k(5, 4, 2) == 1.0
    assert pass_hat_k(5, 1, 2) == 0.0


def test_case_helpers_use_measured_attempts_only() -> None:
    card = scorecard_from_outcomes({"a": "PPFII"})
    case = card.cases[0]
    assert case.measured == 3
    assert case_pass_hat_k(case, 2) == pytest.approx(1 / 3)
    assert case_pass_at_k(case, 3) == 1.0
    assert case_pass_hat_k(case, 4) is None  # only 3 measured


# --- folding -------------------------------------------------------------------------------------------

outcome = st.text(alphabet="PFETIS-", min_size=1, max_size=8)


@FAST
@given(st.dictionaries(st.from_regex(r"c[0-9]{1,3}", fullmatch=True), outcome, min_size=1, max_size=12))
def test_fold_properties(outcomes: dict[str, str]) -> None:
    card = scorecard_from_outcomes(outcomes)
    iters = max(len(s) for s in outcomes.values())
    assert card.summary.total == len(outcomes) * iters
    assert sum(card.summary.counts.values()) == card.summary.total
    for case in card.cases:
        letters = outcomes[case.case_id].ljust(iters, "-")
        measured = sum(ch in "PFET" for ch in letters)
        passed = letters.count("P")
        assert (case.measured, case.passed) == (measured, passed)
        # INFRA_ERROR, SKIPPED and NOT_RUN never enter the denominator
        assert case.measured == sum(n for s, n in case.counts.items() if Status(s) in MEASURED_STATUSES)
        if measured == 0:
            # all-skipped is its own outcome; an outage or a missing attempt leaves it unmeasured
            only_skips = "S" in letters and set(letters) <= {"S"}
            assert case.pass_rate is None
            assert case.stability == ("skipped" if only_skips else "not-measured")
            assert (case.skip_reason is not None) == ("S" in letters)
        else:
            assert case.pass_rate == pytest.approx(passed / measured)
            # stability needs two measured attempts: one is single-pass / single-fail
            expected = "stable-pass" if passed == measured else "stable-fail" if passed == 0 else "flaky"
            if measured == 1:
                expected = "single-pass" if passed else "single-fail"
            assert case.stability == expected
    total_measured = sum(c.measured for c in card.cases)
    assert card.summary.measured == total_measured
    if total_measured:
        rate = card.summary.pass_rate
        assert rate is not None
        low, high = card.summary.pass_rate_low, card.summary.pass_rate_high
        assert low is not None and high is not None
        assert low - 1e-12 <= rate <= high + 1e-12
    assert card.complete == all("-" not in s.ljust(iters, "-") and "I" not in s for s in outcomes.values())


# --- Wilson coverage on simulated data ----------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.floats(0.05, 0.95), st.sampled_from([10, 20, 50, 100]))
def test_wilson_coverage_simulated(p: float, n: int) -> None:
    rng = np.random.default_rng(int(p * 1e6) + n)
    draws = rng.binomial(n, p, size=4000)
    covered = 0
    for x in draws:
        low, high = wilson_interval(int(x), n)
        assert 0.0 <= low <= x / n <= high <= 1.0
        covered += low <= p <= high
    # nominal 95%; Wilson's worst case over p in [0.05, 0.95] and n >= 10 stays above ~0.89
    assert covered / len(draws) >= 0.88


def test_wilson_average_coverage_is_nominal() -> None:
    rng = np.random.default_rng(7)
    ps = rng.uniform(0.05, 0.95, size=400)
    hits = 0
    for p in ps:
        x = int(rng.binomial(30, p))
        low, high = wilson_interval(x, 30)
        hits += low <= p <= high
    assert 0.92 <= hits / len(ps) <= 0.98


# --- noise floors ---------------------------------------------------------------------------------------


def _tail_gt(p: float, nb: int, nc: int, t: float) -> float:
    total = 0.0
    for x in range(nb + 1):
        for y in range(nc + 1):
            if x / nb - y / nc > t + 1e-9:
                total += (
                    math.comb(nb, x)
                    * p**x
                    * (1 - p) ** (nb - x)
                    * math.comb(nc, y)
                    * p**y
                    * (1 - p) ** (nc - y)
                )
    return total


@FAST
@given(st.floats(0.0, 1.0), st.integers(1, 12), st.integers(1, 12), st.sampled_from([0.05, 0.01, 0.00125]))
def test_exact_drop_floor_is_the_smallest_safe_threshold(p: float, nb: int, nc: int, alpha: float) -> None:
    floor = exact_drop_floor(p, nb, nc, alpha)
    assert 0.0 <= floor <= 1.0
    assert _tail_gt(p, nb, nc, floor) <= alpha + 1e-9
    # any smaller achievable drop would be exceeded by chance more often than alpha
    smaller = sorted(
        {x / nb - y / nc for x in range(nb + 1) for y in range(nc + 1) if x / nb - y / nc < floor - 1e-9}
    )
    if smaller and smaller[-1] >= 0:
        assert _tail_gt(p, nb, nc, smaller[-1]) > alpha - 1e-9


def test_suite_curves_average_over_cases_measured_k_times() -> None:
    card = scorecard_from_outcomes({"a": "PPPP", "b": "PFPF", "c": "PI--"})
    # c has one measured attempt: it is in the k=1 average only
    assert suite_pass_hat_k(card.cases, 1) == pytest.approx((1 + 0.5 + 1) / 3)
    assert suite_pass_hat_k(card.cases, 2) == pytest.approx((1 + 1 / 6) / 2)
    assert suite_pass_at_k(card.cases, 2) == pytest.approx((1 + 5 / 6) / 2)
    assert suite_pass_hat_k(card.cases, 5) is None
