"""Fold a run's journal into a scorecard: per case, per category and for the whole run."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from assay.intervals import bootstrap_interval, clustered_interval
from assay.runs import (
    FINAL_STATUSES,
    MEASURED_STATUSES,
    Attempt,
    CaseSummary,
    MetricSpec,
    MetricValue,
    RunMeta,
    Scorecard,
    Status,
    Summary,
    Usage,
    latest_attempts,
)
from assay.runs.records import Stability
from assay.stats._passk import pass_hat_k, suite_pass_hat_k


def stability_label(passed: int, measured: int, skipped: int = 0) -> Stability:
    """Stable needs two or more measured attempts; one is ``single-pass``/``single-fail``.

    A case with no measured attempt is ``skipped`` when it was skipped (with a reason) rather than left
    unmeasured by an outage or an unfinished run.
    """
    if measured == 0:
        return "skipped" if skipped else "not-measured"
    if measured == 1:
        return "single-pass" if passed else "single-fail"
    if passed == measured:
        return "stable-pass"
    if passed == 0:
        return "stable-fail"
    return "flaky"


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def fold_case(case_id: str, category: str, attempts: Sequence[Attempt]) -> CaseSummary:
    """Summarise the attempts of one case (one record per iteration)."""
    counts: dict[str, int] = defaultdict(int)
    for att in attempts:
        counts[att.status.value] += 1
    measured_atts = [a for a in attempts if a.status in MEASURED_STATUSES]
    measured = len(measured_atts)
    passed = sum(1 for a in measured_atts if a.status is Status.PASS)
    scores = [a.score for a in measured_atts if a.score is not None]
    metric_values: dict[str, list[float]] = defaultdict(list)
    for att in measured_atts:
        for name, value in att.metrics.items():
            metric_values[name].append(value)
    usage = sum((a.usage for a in attempts if a.usage is not None), Usage())
    skips = [a for a in attempts if a.status is Status.SKIPPED]
    # "skipped" only when every unmeasured attempt was a skip: an outage or a missing attempt is not one
    all_skipped = bool(skips) and all(
        a.status is Status.SKIPPED for a in attempts if a.status not in MEASURED_STATUSES
    )
    return CaseSummary(
        case_id=case_id,
        category=category,
        counts=dict(counts),
        measured=measured,
        passed=passed,
        pass_rate=passed / measured if measured else None,
        stability=stability_label(passed, measured, len(skips) if all_skipped else 0),
        skip_reason=(skips[-1].skip_reason or "skipped") if skips else None,
        score_mean=_mean(scores),
        score_std=statistics.pstdev(scores) if len(scores) > 1 else (0.0 if scores else None),
        metrics={name: statistics.fmean(vals) for name, vals in metric_values.items()},
        mean_elapsed_s=_mean([a.elapsed_s for a in measured_atts]),
        usage=usage if usage.calls or usage.total_tokens else None,
    )


def metric_summary(
    cases: Sequence[CaseSummary], specs: Mapping[str, MetricSpec], seed: int
) -> dict[str, MetricValue]:
    """Each per-case metric as the mean over cases (the items), with a bootstrap interval over cases.

    A metric no spec declares is kept, ungated and without a kind (the gate does not compare it).
    """
    per_metric: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        for name, value in case.metrics.items():
            per_metric[name].append(value)
    out: dict[str, MetricValue] = {}
    for name, values in sorted(per_metric.items()):
        spec = specs.get(name)
        low, high = bootstrap_interval(values, seed=seed)
        out[name] = MetricValue(
            value=statistics.fmean(values),
            low=low,
            high=high,
            n=len(values),
            kind=spec.kind if spec else None,
            direction=spec.direction if spec else "higher",
            tolerance=spec.tolerance if spec else 0.0,
            gated=spec.gated if spec else False,
            unit=spec.unit if spec else "",
            samples=list(values) if spec is not None and spec.kind == "continuous" else [],
            source="cases",
        )
    return out


def _declared(
    run_metrics: Mapping[str, MetricValue], specs: Mapping[str, MetricSpec]
) -> dict[str, MetricValue]:
    """Run-level metrics of a benchmark, their kind filled from its spec; a gated one must have a kind."""
    out = {}
    for name, mv in run_metrics.items():
        spec = specs.get(name)
        if mv.kind is None and spec is not None:
            mv = mv.model_copy(update={"kind": spec.kind})
        if mv.kind is None and mv.gated:
            raise ValueError(f"gated run metric {name!r} declares no kind (proportion, continuous or count)")
        if spec is not None and mv.kind != spec.kind:
            raise ValueError(f"run metric {name!r} is {mv.kind} but its spec declares {spec.kind}")
        out[name] = mv
    return out


def _pass_hat_k(cases: Sequence[CaseSummary], iterations: int) -> dict[int, float]:
    """Fill each case's pass^k (k = 1..its measured attempts) and return the run's, k = 1..``iterations``
    (each k over the cases measured at least k times); nothing for a run of one iteration."""
    if iterations < 2:
        return {}
    for case in cases:
        case.pass_hat_k = {
            k: round(pass_hat_k(case.measured, case.passed, k), 4) for k in range(1, case.measured + 1)
        }
    overall = {k: suite_pass_hat_k(cases, k) for k in range(1, iterations + 1)}
    return {k: round(v, 4) for k, v in overall.items() if v is not None}


def fold(
    attempts: Sequence[Attempt],
    meta: RunMeta,
    categories: Mapping[str, str] | None = None,
    metric_specs: Sequence[MetricSpec] = (),
    run_metrics: Mapping[str, MetricValue] | None = None,
    extra: dict[str, Any] | None = None,
) -> Scorecard:
    """Fold journal records into a :class:`Scorecard`.

    Every (case, iteration) of the suite appears: one without a record counts as NOT_RUN. Only PASS, FAIL,
    ERROR and TIMEOUT are in pass-rate denominators; INFRA_ERROR, SKIPPED and NOT_RUN never count as a pass
    or a fail.
    """
    categories = dict(categories or {})
    latest = latest_attempts(list(attempts))
    by_case: dict[str, list[Attempt]] = defaultdict(list)
    for att in latest.values():
        by_case[att.case_id].append(att)
        categories.setdefault(att.case_id, att.category)
    started = datetime.now(UTC)
    for case_id in meta.case_ids:
        have = {a.iteration for a in by_case[case_id]}
        for it in range(meta.iterations):
            if it not in have:
                by_case[case_id].append(
                    Attempt(
                        case_id=case_id,
                        iteration=it,
                        status=Status.NOT_RUN,
                        started_at=started,
                        category=categories.get(case_id, "default"),
                    )
                )
    order = list(meta.case_ids) + sorted(set(by_case) - set(meta.case_ids))
    cases = [fold_case(cid, categories.get(cid, "default"), by_case[cid]) for cid in order]
    overall_hat_k = _pass_hat_k(cases, meta.iterations)

    counts: dict[str, int] = {s.value: 0 for s in Status}
    for case in cases:
        for status, n in case.counts.items():
            counts[status] += n
    measured = sum(c.measured for c in cases)
    passed = sum(c.passed for c in cases)
    # over cases, not pooled attempts: the attempts of one case are not independent
    low, high = clustered_interval([c.passed for c in cases], [c.measured for c in cases])
    judged = [a for a in latest.values() if a.status in MEASURED_STATUSES and a.details.get("judged")]
    by_category: dict[str, dict[str, float | None]] = {}
    for cat in sorted({c.category for c in cases}):
        in_cat = [c for c in cases if c.category == cat]
        m = sum(c.measured for c in in_cat)
        p = sum(c.passed for c in in_cat)
        by_category[cat] = {
            "cases": float(len(in_cat)),
            "measured": float(m),
            "pass_rate": p / m if m else None,
        }
    specs = {s.name: s for s in metric_specs}
    metrics = metric_summary(cases, specs, meta.seed)
    metrics.update(_declared(run_metrics or {}, specs))
    summary = Summary(
        counts=counts,
        total=sum(counts.values()),
        measured=measured,
        pass_rate=passed / measured if measured else None,
        pass_rate_low=low if measured else None,
        pass_rate_high=high if measured else None,
        judged_pass_rate=(sum(a.status is Status.PASS for a in judged) / len(judged)) if judged else None,
        metrics=metrics,
        by_category=by_category,
        pass_hat_k=overall_hat_k,
    )
    commits = sorted({a.commit for a in latest.values() if a.commit})
    all_final = all(a.status in FINAL_STATUSES for case_atts in by_case.values() for a in case_atts)
    return Scorecard(
        run_id=meta.run_id,
        benchmark=meta.benchmark,
        suite=meta.suite,
        suite_version=meta.suite_version,
        config=meta.config,
        iterations=meta.iterations,
        summary=summary,
        cases=cases,
        cost=sum((a.usage for a in latest.values() if a.usage is not None), Usage()),
        commits=commits,
        mixed_commits=len(commits) > 1,
        complete=all_final,
        created_at=datetime.now(UTC),
        extra=extra or {},
    )
