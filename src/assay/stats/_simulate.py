"""Simulated runs: a subject whose cases pass with fixed probabilities, folded by the real fold.

Used by the gate's tests and ``benchmarks/gate_simulation.py`` to measure false alarms and detection
through the same code paths real runs take (journal records -> :func:`fold` -> scorecard -> compare).
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np

from assay.runs._records import Attempt, MetricSpec, RunMeta, Scorecard, Status, SubjectConfig
from assay.stats._fold import fold

_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def simulated_meta(
    case_ids: Sequence[str],
    iterations: int,
    *,
    run_id: str = "sim",
    benchmark: str = "sim",
    suite: str = "pr",
    suite_version: str = "1",
    config: SubjectConfig | None = None,
) -> RunMeta:
    return RunMeta(
        run_id=run_id,
        benchmark=benchmark,
        suite=suite,
        suite_version=suite_version,
        assay_version="0",
        hostname="sim",
        os=platform.system(),
        cpu_count=1,
        python=platform.python_version(),
        command_line=["simulated"],
        config=config or SubjectConfig(subject="sim", model="sim-model", judge_model="sim-judge"),
        options={},
        iterations=iterations,
        case_ids=list(case_ids),
        started_at=_T0,
    )


def simulate_scorecard(
    pass_probs: Mapping[str, float],
    iterations: int,
    rng: np.random.Generator,
    *,
    run_id: str = "sim",
    categories: Mapping[str, str] | None = None,
    statuses: Mapping[tuple[str, int], Status] | None = None,
    metric_specs: Sequence[MetricSpec] = (),
    metric_means: Mapping[str, float] | None = None,
    metric_sd: float = 0.0,
    config: SubjectConfig | None = None,
    suite_version: str = "1",
) -> Scorecard:
    """One run: every case attempted ``iterations`` times, passing with its probability.

    ``statuses`` overrides single attempts (for INFRA_ERROR, SKIPPED, ...). ``metric_means`` gives each
    attempt metrics drawn from ``N(mean, metric_sd)``.
    """
    attempts = []
    for cid, p in pass_probs.items():
        for it in range(iterations):
            status = statuses.get((cid, it)) if statuses else None
            passed = bool(rng.random() < p)
            status = status or (Status.PASS if passed else Status.FAIL)
            metrics = {}
            if metric_means:
                metrics = {m: float(mu + metric_sd * rng.standard_normal()) for m, mu in metric_means.items()}
            attempts.append(
                Attempt(
                    case_id=cid,
                    iteration=it,
                    category=(categories or {}).get(cid, "default"),
                    status=status,
                    score=1.0 if status is Status.PASS else (0.0 if status is Status.FAIL else None),
                    metrics=metrics if status in (Status.PASS, Status.FAIL) else {},
                    started_at=_T0,
                    elapsed_s=1.0,
                )
            )
    meta = simulated_meta(
        list(pass_probs), iterations, run_id=run_id, config=config, suite_version=suite_version
    )
    return fold(attempts, meta, categories=categories, metric_specs=metric_specs)


_LETTERS = {
    "P": Status.PASS,
    "F": Status.FAIL,
    "E": Status.ERROR,
    "T": Status.TIMEOUT,
    "I": Status.INFRA_ERROR,
    "S": Status.SKIPPED,
}


def scorecard_from_outcomes(
    outcomes: Mapping[str, str],
    *,
    run_id: str = "run",
    iterations: int | None = None,
    categories: Mapping[str, str] | None = None,
    scores: Mapping[str, Sequence[float]] | None = None,
    metrics: Mapping[str, Sequence[Mapping[str, float]]] | None = None,
    elapsed: Mapping[str, float] | None = None,
    metric_specs: Sequence[MetricSpec] = (),
    config: SubjectConfig | None = None,
    benchmark: str = "sim",
    suite: str = "pr",
    suite_version: str = "1",
) -> Scorecard:
    """A scorecard folded from per-case outcome strings, one letter per iteration.

    ``P`` pass, ``F`` fail, ``E`` error, ``T`` timeout, ``I`` infra error, ``S`` skipped, ``-`` not run
    (no journal record). ``scores``/``metrics`` give per-iteration values for a case; ``elapsed`` its
    attempt time. Example: ``scorecard_from_outcomes({"a": "PPP", "b": "PFP"})``.
    """
    iters = iterations if iterations is not None else max((len(s) for s in outcomes.values()), default=1)
    attempts = []
    for cid, letters in outcomes.items():
        for it, letter in enumerate(letters):
            if letter == "-":
                continue
            status = _LETTERS[letter]
            case_scores = (scores or {}).get(cid)
            default_score = 1.0 if status is Status.PASS else (0.0 if status is Status.FAIL else None)
            attempts.append(
                Attempt(
                    case_id=cid,
                    iteration=it,
                    category=(categories or {}).get(cid, "default"),
                    status=status,
                    score=case_scores[it] if case_scores is not None else default_score,
                    metrics=dict((metrics or {}).get(cid, [{}] * (it + 1))[it]),
                    started_at=_T0,
                    elapsed_s=(elapsed or {}).get(cid, 1.0),
                    skip_reason="simulated" if status is Status.SKIPPED else None,
                )
            )
    meta = RunMeta.model_validate(
        {
            **simulated_meta(list(outcomes), iters, run_id=run_id, config=config).model_dump(),
            "benchmark": benchmark,
            "suite": suite,
            "suite_version": suite_version,
        }
    )
    return fold(attempts, meta, categories=categories, metric_specs=metric_specs)
