"""Confidence intervals: Wilson for pass rates (clustered by case for a run), percentile bootstrap for means."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion; (0, 1) when nothing was measured."""
    return wilson_interval_float(float(successes), float(n), z)


def bootstrap_interval(
    values: Sequence[float], confidence: float = 0.95, resamples: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (deterministic for a given seed)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return (math.nan, math.nan)
    if arr.size == 1 or np.all(arr == arr[0]):
        return (float(arr[0]), float(arr[0]))
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(resamples, arr.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    return (float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha)))


def clustered_interval(
    passed: Sequence[int], measured: Sequence[int], z: float = 1.96
) -> tuple[float, float]:
    """Interval of a pass rate over cases (clusters) with several attempts each.

    Attempts of one case are not independent (a deterministic case passes all or none), so the sample size
    is the *effective* number of attempts ``p (1 - p) / v``, with ``v`` the cluster-robust variance of the
    pooled rate ``sum(passed) / sum(measured)``, kept between the number of cases and the number of
    attempts; then the Wilson interval at that size. 53 deterministic cases x 3 iterations count as 53;
    cases whose attempts are independent coin flips count as all their attempts.
    """
    pairs = [(x, m) for x, m in zip(passed, measured, strict=True) if m > 0]
    k = len(pairs)
    total = sum(m for _, m in pairs)
    if k == 0:
        return (0.0, 1.0)
    p = sum(x for x, _ in pairs) / total
    if k == 1 or p in (0.0, 1.0):
        n_eff = float(k)
    else:
        var = k / (k - 1) * sum((x - p * m) ** 2 for x, m in pairs) / total**2
        n_eff = min(max(p * (1 - p) / var, k), total) if var > 0 else float(total)
    return wilson_interval_float(p * n_eff, n_eff, z)


def wilson_interval_float(successes: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """:func:`wilson_interval` for a non-integer (effective) sample size."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
