"""Comparing one run-level metric by its kind: the tolerance, where it came from, and the verdict.

The tolerance of a metric is the largest of

* the **declared** tolerance of its spec (absolute for a proportion or a count, relative for a
  continuous metric: ``0.1`` is 10% of the baseline value);
* the **kind's noise rule** (:mod:`assay.stats.tolerance`): for a proportion the binomial noise of its
  ``n`` items (paired over the cases both runs measured when the value is their mean, unpaired
  otherwise); for a continuous metric the bootstrap interval of the difference of its samples, or Welch's
  t for a few per-attempt means; a count has no sampling rule (it is a tally of the same events);
* the **noise file**: the metric's run-to-run spread over N runs of one configuration.

A continuous metric with no samples, no declared tolerance and no noise file gets a default relative
tolerance of :data:`DEFAULT_RELATIVE`. The one-sided level of every noise rule is 2.5% (5% two-sided,
see :func:`metric_alpha`). A metric whose kind neither run declares (scorecards of
schema 1, or a metric no spec names) is listed, not compared.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel

from assay.runs import MetricValue
from assay.runs.records import MetricKind
from assay.stats import NoiseReport
from assay.stats.noise import FAMILY_ALPHA
from assay.stats.tolerance import (
    binomial_tolerance,
    continuous_tolerance,
    paired_proportion_tolerance,
    t_quantile,
)

MetricVerdict = Literal["ok", "regressed", "improved", "not_measured", "not_compared"]
#: where a tolerance came from (the largest candidate wins)
TolSource = Literal[
    "declared", "binomial", "paired binomial", "bootstrap", "Welch t", "noise file", "default", "none"
]
#: relative tolerance of a continuous metric nothing else gives a tolerance to
DEFAULT_RELATIVE = 0.10
#: units that make a metric a time (an ungated one that grew reads ``slower``)
TIME_UNITS = frozenset({"s", "ms", "sec", "seconds", "milliseconds"})
_EPS = 1e-9


class MetricComparison(BaseModel):
    name: str
    kind: MetricKind | None = None
    direction: Literal["higher", "lower"]
    gated: bool
    unit: str = ""
    baseline: float | None
    current: float | None
    delta: float | None
    #: absolute, in the metric's unit; ``relative_tolerance`` is it over |baseline| for continuous metrics
    tolerance: float
    relative_tolerance: float | None = None
    tolerance_source: TolSource = "none"
    tolerance_detail: str = ""
    #: the noise file's spread is what set the tolerance (it was wider than every other candidate)
    noise_widened: bool = False
    n: int = 0
    verdict: MetricVerdict

    @property
    def label(self) -> str:
        """The verdict as shown: a metric that is not gated never reads as a regression or improvement
        (``not gated`` within its tolerance, else ``slower``/``faster`` for a time, ``changed`` otherwise)."""
        if self.gated or self.verdict not in ("ok", "regressed", "improved"):
            return self.verdict
        if self.verdict == "ok":
            return "not gated"
        if self.unit in TIME_UNITS:
            return "slower" if (self.delta or 0.0) > 0 else "faster"
        return "changed"


def metric_alpha(n_gated: int) -> float:
    """One-sided level of each metric's noise rule: 5% two-sided (a metric can be called regressed or
    improved). It is not split over the gated metrics the way the case floor is split over cases: a
    benchmark's gated metrics measure overlapping things (recall@5, MRR and R@returned move together), and
    a Bonferroni split over them would let a deterministic suite lose 7 of 51 queries unflagged.
    ``n_gated`` is kept so the rule has one place to change."""
    del n_gated
    return FAMILY_ALPHA / 2


def _case_items(
    name: str, base: Mapping[str, Mapping[str, float]], cur: Mapping[str, Mapping[str, float]]
) -> tuple[list[float], list[float]] | None:
    """Per-case values of the metric when both runs have it for exactly the same cases."""
    b_ids = {cid for cid, m in base.items() if name in m}
    c_ids = {cid for cid, m in cur.items() if name in m}
    if not b_ids or b_ids != c_ids:
        return None
    ids = sorted(b_ids)
    return [base[cid][name] for cid in ids], [cur[cid][name] for cid in ids]


def _rule(
    kind: MetricKind,
    name: str,
    base: MetricValue,
    cur: MetricValue,
    alpha: float,
    base_cases: Mapping[str, Mapping[str, float]],
    cur_cases: Mapping[str, Mapping[str, float]],
) -> tuple[float, TolSource, str] | None:
    """The kind's own noise tolerance (absolute), or None when the values cannot give one."""
    if kind == "proportion":
        items = _case_items(name, base_cases, cur_cases) if "cases" == base.source == cur.source else None
        if items is not None:
            b, c = items
            tol = paired_proportion_tolerance(b, c, alpha)
            differ = sum(abs(x - y) > _EPS for x, y in zip(b, c, strict=True))
            return tol, "paired binomial", f"paired over {len(b)} items, {differ} differ"
        if base.n >= 1 and cur.n >= 1 and base.value is not None and cur.value is not None:
            tol = binomial_tolerance(base.value, base.n, cur.value, cur.n, alpha)
            return tol, "binomial", f"{base.n} and {cur.n} items"
        return None
    if kind == "continuous":
        got = continuous_tolerance(base.samples, cur.samples, cur.stat, alpha, seed=zlib.crc32(name.encode()))
        if got is None:
            return None
        tol, detail = got
        return tol, ("bootstrap" if detail.startswith("bootstrap") else "Welch t"), detail
    return None  # a count: a tally of the same events, no sampling noise to assume


def _noise_tolerance(
    kind: MetricKind, name: str, noise: NoiseReport | None, alpha: float
) -> tuple[float, TolSource, str] | None:
    """The noise file's word on a metric: its run-to-run spread (a proportion or a count), or for a
    continuous metric the t bound on the difference of two runs from the spread of its N runs."""
    m = noise.metrics.get(name) if noise is not None else None
    if m is None:
        return None
    runs = len(m.values)
    if kind == "continuous" and runs >= 2:
        tol = t_quantile(1 - alpha, runs - 1) * math.sqrt(2) * m.stdev
        return tol, "noise file", f"noise file: t bound from the spread of {runs} runs"
    return m.spread, "noise file", f"noise file: run-to-run spread over {runs} runs"


def compare_metric(
    name: str,
    base: MetricValue | None,
    cur: MetricValue | None,
    noise: NoiseReport | None,
    alpha: float,
    base_cases: Mapping[str, Mapping[str, float]],
    cur_cases: Mapping[str, Mapping[str, float]],
) -> MetricComparison:
    ref = cur or base
    assert ref is not None
    kind = (cur.kind if cur is not None else None) or (base.kind if base is not None else None)
    bv = base.value if base is not None else None
    cv = cur.value if cur is not None else None
    out = MetricComparison(
        name=name,
        kind=kind,
        direction=ref.direction,
        gated=ref.gated and kind is not None,
        unit=ref.unit,
        baseline=bv,
        current=cv,
        delta=None if bv is None or cv is None else cv - bv,
        tolerance=0.0,
        n=ref.n,
        verdict="not_measured",
    )
    if kind is None:
        out.verdict, out.tolerance_detail = "not_compared", "no declared kind"
        return out
    if base is None or cur is None or bv is None or cv is None:
        return out
    scale = abs(bv)
    candidates: list[tuple[float, TolSource, str]] = []
    if ref.tolerance > 0:
        declared = ref.tolerance * scale if kind == "continuous" else ref.tolerance
        what = f"{ref.tolerance:.0%} of the baseline" if kind == "continuous" else f"{ref.tolerance:.4g}"
        candidates.append((declared, "declared", f"declared {what}"))
    rule = _rule(kind, name, base, cur, alpha, base_cases, cur_cases)
    if rule is not None:
        candidates.append(rule)
    from_noise = _noise_tolerance(kind, name, noise, alpha)
    if from_noise is not None:
        candidates.append(from_noise)
    if not candidates and kind == "continuous":
        candidates.append(
            (DEFAULT_RELATIVE * scale, "default", f"default {DEFAULT_RELATIVE:.0%}: no spread was measured")
        )
    if candidates:
        tol, source, detail = max(candidates, key=lambda t: t[0])
        others = [t[0] for t in candidates if t[1] != "noise file"]
        out.noise_widened = source == "noise file" and tol > max(others, default=0.0)
        out.tolerance, out.tolerance_source, out.tolerance_detail = tol, source, detail
    if kind == "continuous" and scale > 0:
        out.relative_tolerance = out.tolerance / scale
    delta = cv - bv
    worse_by = -delta if ref.direction == "higher" else delta
    if worse_by > out.tolerance + _EPS:
        out.verdict = "regressed"
    elif -worse_by > out.tolerance + _EPS:
        out.verdict = "improved"
    else:
        out.verdict = "ok"
    return out
