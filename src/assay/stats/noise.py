"""Noise floors: how much two runs of the same configuration differ, measured instead of assumed.

``noise.json`` is folded from N run directories of one configuration. Per case it keeps the pass rate of
every run and the pooled counts; per metric the value of every run. The gate asks it two questions:

* :meth:`NoiseReport.case_floor`: how large a pass-rate drop between a baseline of ``n_base`` attempts and a
  current run of ``n_cur`` attempts can this case show by chance? It is the largest of
  (a) the exact binomial drop reached with probability above ``alpha`` (the family-wise 5% split over the
  cases, Bonferroni) at the most variable pass rate still plausible from the pooled noise counts (the point
  of their one-standard-error Wilson interval nearest 0.5, so 25 passes of 25 is not read as "never
  fails"), and (b) the observed run-to-run spread,
  ``z(alpha) * sqrt(2) * stdev`` of the per-run pass rates (this catches variation a binomial model misses).
* :meth:`NoiseReport.metric_spread`: how much a metric moves between two runs: ``max(max - min,
  2 * sqrt(2) * stdev)`` of its per-run values (about two standard deviations of a difference of two runs,
  never below the range already seen).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist

from pydantic import BaseModel, Field, ValidationError

from assay.errors import ConfigError, NotComparableError
from assay.intervals import wilson_interval
from assay.runs import Scorecard, SubjectConfig
from assay.runs.records import SCHEMA_VERSION

#: family-wise false-alarm budget of one comparison, split over its cases
FAMILY_ALPHA = 0.05
#: width (in standard errors) of the Wilson interval of pass rates the noise counts make plausible
PLAUSIBLE_Z = 1.0
_EPS = 1e-9


class CaseNoise(BaseModel):
    case_id: str
    category: str = "default"
    runs: int
    measured: int
    passed: int
    iterations: int
    pass_rates: list[float]
    pass_rate_mean: float | None
    pass_rate_stdev: float
    pass_rate_range: float
    pass_rate_floor: float | None = None
    score_means: list[float] = Field(default_factory=list)
    score_stdev: float | None = None
    score_spread: float | None = None
    #: mean attempt time of each run, and how much it moves between two runs on the machine that ran them
    #: (``max(range, 2 * sqrt(2) * stdev)``): the floor a case's time must rise beyond to be a regression
    elapsed_means: list[float] = Field(default_factory=list)
    elapsed_spread: float | None = None


class MetricNoise(BaseModel):
    name: str
    values: list[float]
    mean: float
    stdev: float
    range: float
    spread: float
    direction: str = "higher"
    n: int = 0


class NoiseReport(BaseModel):
    """``noise.json``."""

    schema_version: int = SCHEMA_VERSION
    benchmark: str
    suite: str
    suite_version: str
    config: SubjectConfig
    run_ids: list[str]
    iterations: int
    family_alpha: float = FAMILY_ALPHA
    alpha: float
    cases: dict[str, CaseNoise]
    metrics: dict[str, MetricNoise] = Field(default_factory=dict)
    created_at: datetime

    def case_floor(self, case_id: str, n_base: int, n_cur: int) -> float | None:
        """The pass-rate drop this case can show by chance; None when the noise runs never measured it."""
        case = self.cases.get(case_id)
        if case is None or case.measured == 0 or n_base < 1 or n_cur < 1:
            return None
        return pass_rate_floor(case.passed, case.measured, n_base, n_cur, self.alpha, case.pass_rate_stdev)

    def metric_spread(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return m.spread if m is not None else None

    def is_flaky(self, case_id: str) -> bool:
        """True when the noise runs saw this case both pass and fail."""
        case = self.cases.get(case_id)
        return case is not None and 0 < case.passed < case.measured


@lru_cache(maxsize=4096)
def _binom_pmf(n: int, p: float) -> tuple[float, ...]:
    return tuple(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(n + 1))


def exact_drop_floor(p: float, n_base: int, n_cur: int, alpha: float) -> float:
    """Smallest t with P(X/n_base - Y/n_cur > t) <= alpha for X ~ Bin(n_base, p), Y ~ Bin(n_cur, p)."""
    pb, pc = _binom_pmf(n_base, p), _binom_pmf(n_cur, p)
    dist: dict[float, float] = {}
    for x, px in enumerate(pb):
        for y, py in enumerate(pc):
            d = round(x / n_base - y / n_cur, 12)
            dist[d] = dist.get(d, 0.0) + px * py
    support = sorted(dist)
    tail = 0.0  # P(D > support[i]) while walking down
    floor = support[-1]
    for i in range(len(support) - 1, -1, -1):
        if tail > alpha + _EPS:
            break
        floor = support[i]
        tail += dist[support[i]]
    return max(floor, 0.0)


def pass_rate_floor(
    passed: int, measured: int, n_base: int, n_cur: int, alpha: float, run_stdev: float = 0.0
) -> float:
    """The pass-rate drop between two runs of ``n_base`` and ``n_cur`` attempts that chance can explain.

    ``passed``/``measured`` are the pooled counts of the noise runs; ``run_stdev`` the stdev of their
    per-run pass rates. See the module docstring for the rule.
    """
    low, high = wilson_interval(passed, measured, z=PLAUSIBLE_Z)
    p = min(max(0.5, low), high)
    exact = exact_drop_floor(p, n_base, n_cur, alpha)
    z = NormalDist().inv_cdf(1 - alpha)
    return max(exact, z * math.sqrt(2) * run_stdev)


def _stdev(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _key(sc: Scorecard) -> tuple[str | None, ...]:
    c = sc.config
    return (sc.benchmark, sc.suite, sc.suite_version, c.subject, c.model, c.judge_model, c.embedder)


def noise_from_scorecards(scorecards: Sequence[Scorecard], names: Sequence[str] | None = None) -> NoiseReport:
    """Fold N scorecards of one configuration into a :class:`NoiseReport`.

    ``names`` label the scorecards in errors (their paths). Runs that differ in benchmark, suite, suite
    version, subject, model, judge model or embedder raise :class:`NotComparableError`.
    """
    if len(scorecards) < 2:
        raise ConfigError(f"a noise floor needs at least 2 runs of one configuration, got {len(scorecards)}")
    names = list(names) if names is not None else [sc.run_id for sc in scorecards]
    first = scorecards[0]
    fields = ("benchmark", "suite", "suite_version", "subject", "model", "judge_model", "embedder")
    for sc, name in zip(scorecards[1:], names[1:], strict=True):
        for field, a, b in zip(fields, _key(first), _key(sc), strict=True):
            if a != b:
                raise NotComparableError(
                    f"{name}: {field} is {b!r} but {names[0]} has {a!r}; noise runs must share one configuration"
                )
    case_ids: list[str] = []
    for sc in scorecards:
        case_ids.extend(c.case_id for c in sc.cases if c.case_id not in case_ids)
    alpha = FAMILY_ALPHA / max(len(case_ids), 1)
    cases: dict[str, CaseNoise] = {}
    for cid in case_ids:
        summaries = [c for sc in scorecards if (c := sc.case(cid)) is not None and c.measured > 0]
        rates = [c.passed / c.measured for c in summaries]
        scores = [c.score_mean for c in summaries if c.score_mean is not None]
        measured = sum(c.measured for c in summaries)
        passed = sum(c.passed for c in summaries)
        iterations = round(statistics.median([c.measured for c in summaries])) if summaries else 0
        stdev = _stdev(rates)
        score_stdev = _stdev(scores) if scores else None
        times = [c.mean_elapsed_s for c in summaries if c.mean_elapsed_s is not None]
        cases[cid] = CaseNoise(
            case_id=cid,
            category=next((c.category for sc in scorecards if (c := sc.case(cid)) is not None), "default"),
            runs=len(summaries),
            measured=measured,
            passed=passed,
            iterations=iterations,
            pass_rates=rates,
            pass_rate_mean=statistics.fmean(rates) if rates else None,
            pass_rate_stdev=stdev,
            pass_rate_range=(max(rates) - min(rates)) if rates else 0.0,
            pass_rate_floor=(
                pass_rate_floor(passed, measured, iterations, iterations, alpha, stdev) if measured else None
            ),
            score_means=scores,
            score_stdev=score_stdev,
            score_spread=(
                max(max(scores) - min(scores), 2 * math.sqrt(2) * (score_stdev or 0.0)) if scores else None
            ),
            elapsed_means=times,
            elapsed_spread=(
                max(max(times) - min(times), 2 * math.sqrt(2) * _stdev(times)) if len(times) > 1 else None
            ),
        )
    metrics: dict[str, MetricNoise] = {}
    metric_names = sorted({n for sc in scorecards for n in sc.summary.metrics})
    for name in metric_names:
        mvs = [mv for sc in scorecards if (mv := sc.summary.metrics.get(name)) is not None]
        values = [mv.value for mv in mvs if mv.value is not None]
        if not values:
            continue
        stdev = _stdev(values)
        rng = max(values) - min(values)
        metrics[name] = MetricNoise(
            name=name,
            values=values,
            mean=statistics.fmean(values),
            stdev=stdev,
            range=rng,
            spread=max(rng, 2 * math.sqrt(2) * stdev),
            direction=mvs[0].direction,
            n=max(mv.n for mv in mvs),
        )
    return NoiseReport(
        benchmark=first.benchmark,
        suite=first.suite,
        suite_version=first.suite_version,
        config=first.config,
        run_ids=[sc.run_id for sc in scorecards],
        iterations=round(statistics.median([sc.iterations for sc in scorecards])),
        alpha=alpha,
        cases=cases,
        metrics=metrics,
        created_at=datetime.now(UTC),
    )


def load_noise(path: Path) -> NoiseReport:
    """Read ``noise.json``; a missing or malformed file is a :class:`ConfigError` naming it."""
    path = Path(path)
    if path.is_dir():
        path = path / "noise.json"
    if not path.is_file():
        raise ConfigError("noise file not found (write one with `assay eval noise`)", path=str(path))
    try:
        return NoiseReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(f"not a noise.json written by assay: {first}", path=str(path)) from exc
