"""Unbiased pass@k and pass^k estimators from n trials of which c passed.

* **pass@k**: the chance that at least one of k independent attempts passes (what a user who may retry
  sees). Unbiased estimator (Chen et al. 2021): ``1 - C(n - c, k) / C(n, k)``.
* **pass^k**: the chance that all k independent attempts pass (what a user who needs it to work every
  time sees; tau-bench). Unbiased estimator: ``C(c, k) / C(n, k)``.

Both are exact for ``c ~ Binomial(n, p)``: their expectations are ``1 - (1 - p)^k`` and ``p^k``.
Both need ``1 <= k <= n``; asking for more attempts than were made is an error, not a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

from assay.runs import CaseSummary


def _check(n: int, c: int, k: int) -> None:
    if n < 1:
        raise ValueError(f"need at least one trial, got n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"passes must be between 0 and n={n}, got c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and n={n} (the number of trials), got k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(at least one of k attempts passes) from c passes in n trials."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(all k attempts pass) (pass^k) from c passes in n trials."""
    _check(n, c, k)
    if c < k:
        return 0.0
    return comb(c, k) / comb(n, k)


def case_pass_at_k(case: CaseSummary, k: int) -> float | None:
    """pass@k of a folded case from its measured attempts; None when fewer than k were measured."""
    if case.measured < k or k < 1:
        return None
    return pass_at_k(case.measured, case.passed, k)


def case_pass_hat_k(case: CaseSummary, k: int) -> float | None:
    """pass^k of a folded case from its measured attempts; None when fewer than k were measured."""
    if case.measured < k or k < 1:
        return None
    return pass_hat_k(case.measured, case.passed, k)


def suite_pass_hat_k(cases: Sequence[CaseSummary], k: int) -> float | None:
    """Mean pass^k over the cases measured at least k times (tau-bench's reliability curve at k)."""
    vals = [v for c in cases if (v := case_pass_hat_k(c, k)) is not None]
    return sum(vals) / len(vals) if vals else None


def suite_pass_at_k(cases: Sequence[CaseSummary], k: int) -> float | None:
    """Mean pass@k over the cases measured at least k times."""
    vals = [v for c in cases if (v := case_pass_at_k(c, k)) is not None]
    return sum(vals) / len(vals) if vals else None
