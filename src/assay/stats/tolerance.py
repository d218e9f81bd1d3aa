"""How far a metric moves between two runs by chance, by metric kind.

Each rule returns the *noise tolerance* of one comparison: the change in the worse direction beyond which
the difference is not chance at one-sided level ``alpha`` (the gate splits its 5% over the gated metrics).

* **proportion, paired** (:func:`paired_proportion_tolerance`): the same ``n`` items were measured on both
  sides (per-case values of the scorecard). Under "nothing changed" each item's difference ``d_i`` is as
  likely to be positive as negative, so the mean difference has variance ``sum(d_i^2) / n^2`` (the sign
  test; McNemar's test for 0/1 items). Tolerance ``(z * sqrt(sum d_i^2) + max |d_i|) / n``: the normal
  bound plus one item of continuity, so one item flipping alone is never a change.
* **proportion, unpaired** (:func:`binomial_tolerance`): only the two proportions and their item counts are
  known: ``z * sqrt(p (1 - p) (1/n_b + 1/n_c)) + (1/n_b + 1/n_c) / 2`` at the pooled ``p``.
* **continuous** (:func:`continuous_tolerance`): from the per-request or per-attempt samples of both runs.
  With at least :data:`BOOTSTRAP_MIN` samples a side: the half-width of the central ``1 - 2 alpha``
  percentile-bootstrap interval of the difference of the statistic (mean or percentile); with fewer (but
  two or more) samples of a mean: Welch's t bound on the difference of means. The caller turns it into a
  relative tolerance (``tol / |baseline|``).

Counts have no sampling rule: a count is a tally of the same events in both runs, so only the declared
tolerance and the run-to-run spread measured by a noise file widen it (see ``assay.gate.comparison``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist

import numpy as np

#: fewest samples a side for the bootstrap of a difference; fewer means use Welch's t (means only)
BOOTSTRAP_MIN = 10
BOOTSTRAP_RESAMPLES = 2000


def z_one_sided(alpha: float) -> float:
    return NormalDist().inv_cdf(1 - alpha)


@lru_cache(maxsize=256)
def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t with ``df`` (> 0, may be fractional) degrees of freedom, for p in (0.5, 1)."""
    if df > 1000:
        return NormalDist().inv_cdf(p)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(t: float) -> float:  # P(T <= t) for t >= 0, Simpson's rule on the density
        xs = np.linspace(0.0, t, 2001)
        ys = np.exp(log_c - (df + 1) / 2 * np.log1p(xs * xs / df))
        h = t / 2000
        return 0.5 + float(h / 3 * (ys[0] + ys[-1] + 4 * ys[1:-1:2].sum() + 2 * ys[2:-1:2].sum()))

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, hi * 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def paired_proportion_tolerance(base: Sequence[float], cur: Sequence[float], alpha: float) -> float:
    """Noise tolerance of the mean difference of per-item proportions measured on the same items."""
    b = np.asarray(base, dtype=float)
    c = np.asarray(cur, dtype=float)
    if b.shape != c.shape or b.size == 0:
        raise ValueError("paired items must be two non-empty sequences of one length")
    d = c - b
    if not np.any(np.abs(d) > 1e-12):
        return 0.0
    return float((z_one_sided(alpha) * math.sqrt(float(np.sum(d * d))) + float(np.max(np.abs(d)))) / b.size)


def binomial_tolerance(p_base: float, n_base: int, p_cur: float, n_cur: int, alpha: float) -> float:
    """Noise tolerance of the difference of two proportions over ``n_base`` and ``n_cur`` items."""
    if n_base < 1 or n_cur < 1:
        raise ValueError("a proportion needs at least one item on each side")
    p = (p_base * n_base + p_cur * n_cur) / (n_base + n_cur)
    p = min(max(p, 0.0), 1.0)
    inv = 1 / n_base + 1 / n_cur
    return z_one_sided(alpha) * math.sqrt(p * (1 - p) * inv) + inv / 2


def statistic(values: np.ndarray, stat: str) -> np.ndarray:
    """``mean`` or a percentile ``pNN`` along the last axis."""
    if stat == "mean":
        return values.mean(axis=-1)
    if stat.startswith("p") and stat[1:].replace(".", "", 1).isdigit():
        return np.percentile(values, float(stat[1:]), axis=-1)
    if stat == "median":
        return np.median(values, axis=-1)
    raise ValueError(f"unknown statistic {stat!r}: use mean, median or pNN")


def continuous_tolerance(
    base: Sequence[float], cur: Sequence[float], stat: str, alpha: float, seed: int = 0
) -> tuple[float, str] | None:
    """Noise tolerance of ``stat(cur) - stat(base)`` from the samples, and the rule that gave it.

    None when the samples cannot say (fewer than two a side, or a percentile of too few samples).
    """
    b = np.asarray(base, dtype=float)
    c = np.asarray(cur, dtype=float)
    if b.size >= BOOTSTRAP_MIN and c.size >= BOOTSTRAP_MIN:
        rng = np.random.default_rng(seed)
        bs = statistic(b[rng.integers(0, b.size, size=(BOOTSTRAP_RESAMPLES, b.size))], stat)
        cs = statistic(c[rng.integers(0, c.size, size=(BOOTSTRAP_RESAMPLES, c.size))], stat)
        diff = cs - bs
        lo, hi = np.quantile(diff, [alpha, 1 - alpha])
        return float((hi - lo) / 2), f"bootstrap of the {stat} difference, {b.size}+{c.size} samples"
    if stat != "mean" or b.size < 2 or c.size < 2:
        return None
    vb, vc = float(b.var(ddof=1)) / b.size, float(c.var(ddof=1)) / c.size
    se = math.sqrt(vb + vc)
    if se == 0:
        return 0.0, f"Welch t, {b.size}+{c.size} samples with no spread"
    df = (vb + vc) ** 2 / (vb**2 / (b.size - 1) + vc**2 / (c.size - 1))
    return t_quantile(1 - alpha, df) * se, f"Welch t of the mean difference, {b.size}+{c.size} samples"
