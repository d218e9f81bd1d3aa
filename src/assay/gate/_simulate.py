"""Simulated runs: a subject whose cases pass with fixed probabilities, folded by the real fold.

Used by the gate's tests and ``benchmarks/gate_simulation.py`` to measure false alarms and detection
through the same code paths real runs take (journal records -> :func:`fold` -> scorecard -> compare).
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from assay.gate.comparison import compare
from assay.runs import Attempt, MetricSpec, MetricValue, RunMeta, Scorecard, Status, SubjectConfig
from assay.stats import fold, noise_from_scorecards

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


# --- the power table: false alarms and detection per metric kind, through the real compare ----------------


def reliable_or_not(rng: np.random.Generator) -> float:
    """A case's pass probability as realistic suites have them: 65% reliable (half of them always pass,
    the rest 0.95-1.0), 20% flaky (0.3-0.8), 15% nearly always fail (0-0.05)."""
    kind = rng.random()
    if kind < 0.65:
        return 1.0 if rng.random() < 0.5 else float(rng.uniform(0.95, 1.0))
    if kind < 0.85:
        return float(rng.uniform(0.3, 0.8))
    return float(rng.uniform(0.0, 0.05))


@dataclass
class PowerRow:
    """One row of the power table: how often an unchanged pair is flagged, and each injected change."""

    kind: str
    setting: str
    trials: int
    false_alarms: int
    #: (label of the injected change, share of trials it was detected in), smallest change first
    detection: list[tuple[str, float]] = field(default_factory=list)
    #: the change the goal is about, and the detection rate it needs
    goal: tuple[str, float] | None = None

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.trials

    @property
    def smallest_detected(self) -> str | None:
        """The smallest injected change detected with probability >= 0.95 (the gate's resolution)."""
        return next((label for label, rate in self.detection if rate >= 0.95), None)

    @property
    def goal_rate(self) -> float | None:
        if self.goal is None:
            return None
        return dict(self.detection)[self.goal[0]]


def _one_case(p: float, iterations: int, rng: np.random.Generator, run_id: str) -> Scorecard:
    return simulate_scorecard({"case": p}, iterations, rng, run_id=run_id)


def power_pass_fail(iterations: int, trials: int, rng: np.random.Generator, noise_runs: int = 5) -> PowerRow:
    """One case, compared with its noise file of ``noise_runs`` runs (the first is the baseline).

    False alarms: a case drawn from :func:`reliable_or_not`, unchanged. Detection: a stable-pass case
    (probability 1.0 or 0.95-1.0) whose pass probability falls to q; detected when it is ``regressed``.
    """

    drops_to = (0.7, 0.5, 0.3, 0.0)
    alarms = 0
    hits = dict.fromkeys(drops_to, 0)
    for _ in range(trials):
        p = reliable_or_not(rng)
        runs = [_one_case(p, iterations, rng, f"n{i}") for i in range(noise_runs)]
        noise = noise_from_scorecards(runs)
        alarms += compare(runs[0], _one_case(p, iterations, rng, "same"), noise=noise).exit_code == 2
        p = 1.0 if rng.random() < 0.5 else float(rng.uniform(0.95, 1.0))
        runs = [_one_case(p, iterations, rng, f"n{i}") for i in range(noise_runs)]
        noise = noise_from_scorecards(runs)
        for q in drops_to:
            comp = compare(runs[0], _one_case(q, iterations, rng, f"to{q}"), noise=noise)
            hits[q] += comp.cases[0].bucket == "regressed"
    return PowerRow(
        kind="per-case pass/fail",
        setting=f"{iterations} iteration(s), noise file of {noise_runs} runs",
        trials=trials,
        false_alarms=alarms,
        detection=[(f"p 1.0 -> {q:.1f}", hits[q] / trials) for q in drops_to],
        goal=(f"p 1.0 -> {0.3:.1f}", 0.95) if iterations == 5 else None,
    )


_RECALL = MetricSpec(name="recall@5", kind="proportion", tolerance=0.02)


def _recall_run(probs: Sequence[float], rng: np.random.Generator, run_id: str) -> Scorecard:
    attempts = []
    for i, p in enumerate(probs):
        hit = bool(rng.random() < p)
        attempts.append(
            Attempt(
                case_id=f"q{i:03d}",
                status=Status.PASS if hit else Status.FAIL,
                metrics={"recall@5": 1.0 if hit else 0.0},
                started_at=_T0,
            )
        )
    meta = simulated_meta([a.case_id for a in attempts], 1, run_id=run_id)
    return fold(attempts, meta, metric_specs=[_RECALL])


def power_recall(n_queries: int, trials: int, rng: np.random.Generator) -> PowerRow:
    """recall@5 over ``n_queries`` labelled queries, one iteration, no noise file.

    Queries: 60% always found, 25% never, 15% found with probability 0.2-0.9 (a model in the loop).
    A drop of d turns round(d * n) always-found queries into never-found ones; detected when the gated
    metric regresses.
    """

    drops = (0.05, 0.10, 0.20)
    alarms = 0
    hits = dict.fromkeys(drops, 0)
    for _ in range(trials):
        kinds = rng.random(n_queries)
        probs = np.where(kinds < 0.6, 1.0, np.where(kinds < 0.85, 0.0, rng.uniform(0.2, 0.9, n_queries)))
        base = _recall_run(probs, rng, "base")
        alarms += compare(base, _recall_run(probs, rng, "same")).exit_code == 2
        found = np.flatnonzero(probs == 1.0)
        for d in drops:
            worse = probs.copy()
            k = min(round(d * n_queries), found.size)
            worse[rng.choice(found, size=k, replace=False)] = 0.0
            comp = compare(base, _recall_run(worse, rng, f"drop{d}"))
            hits[d] += "metric:recall@5" in comp.regressions
    return PowerRow(
        kind="recall@5 (proportion)",
        setting=f"{n_queries} queries, 1 iteration",
        trials=trials,
        false_alarms=alarms,
        detection=[(f"-{d:.2f}", hits[d] / trials) for d in drops],
        goal=(f"-{0.10:.2f}", 0.95) if n_queries == 200 else None,
    )


def _continuous_run(name: str, spec: MetricSpec, samples: np.ndarray, stat: str, run_id: str) -> Scorecard:
    value = float(np.percentile(samples, float(stat[1:]))) if stat.startswith("p") else float(samples.mean())
    mv = MetricValue(
        value=value,
        n=int(samples.size),
        kind="continuous",
        direction=spec.direction,
        tolerance=spec.tolerance,
        unit=spec.unit,
        samples=[float(x) for x in samples],
        stat=stat,
    )
    meta = simulated_meta(["level"], 1, run_id=run_id)
    attempts = [Attempt(case_id="level", status=Status.PASS, started_at=_T0)]
    return fold(attempts, meta, metric_specs=[spec], run_metrics={name: mv})


_LATENCY = MetricSpec(name="e2e_median_ms", kind="continuous", direction="lower", tolerance=0.10, unit="ms")
_THROUGHPUT = MetricSpec(name="request_throughput", kind="continuous", tolerance=0.10, unit="req/s")


def power_latency(n_requests: int, trials: int, rng: np.random.Generator, noise_runs: int = 5) -> PowerRow:
    """p50 latency over ``n_requests`` fixed-length requests: lognormal (sigma 0.2, a CV of about 20%)
    around a run median that moves 3% from run to run (machine state); compared with a noise file of
    ``noise_runs`` runs (the first is the baseline). A change is detected when the run exits 2."""

    rises = (0.10, 0.25, 0.50, 1.00)

    def run(scale: float, run_id: str) -> Scorecard:
        median = 800.0 * scale * float(np.exp(rng.normal(0, 0.03)))
        return _continuous_run(
            _LATENCY.name, _LATENCY, median * rng.lognormal(0, 0.20, n_requests), "p50", run_id
        )

    alarms = 0
    hits = dict.fromkeys(rises, 0)
    for _ in range(trials):
        runs = [run(1.0, f"n{i}") for i in range(noise_runs)]
        noise = noise_from_scorecards(runs)
        alarms += compare(runs[0], run(1.0, "same"), noise=noise).exit_code == 2
        for r in rises:
            hits[r] += compare(runs[0], run(1.0 + r, f"up{r}"), noise=noise).exit_code == 2
    return PowerRow(
        kind="latency p50 (continuous)",
        setting=f"{n_requests} requests, noise file of {noise_runs} runs",
        trials=trials,
        false_alarms=alarms,
        detection=[(f"+{r:.0%}", hits[r] / trials) for r in rises],
        goal=(f"+{0.50:.0%}", 0.95) if n_requests == 20 else None,
    )


def power_throughput(iterations: int, trials: int, rng: np.random.Generator, noise_runs: int = 5) -> PowerRow:
    """Request throughput, one value per iteration (5% apart) on a run level that moves 3% from run to
    run; compared with a noise file of ``noise_runs`` runs (the first is the baseline)."""

    drops = (0.05, 0.10, 0.20, 0.30)

    def run(scale: float, run_id: str) -> Scorecard:
        level = 12.0 * scale * float(np.exp(rng.normal(0, 0.03)))
        per_iter = level * np.exp(rng.normal(0, 0.05, iterations))
        return _continuous_run(_THROUGHPUT.name, _THROUGHPUT, per_iter, "mean", run_id)

    alarms = 0
    hits = dict.fromkeys(drops, 0)
    for _ in range(trials):
        runs = [run(1.0, f"n{i}") for i in range(noise_runs)]
        noise = noise_from_scorecards(runs)
        alarms += compare(runs[0], run(1.0, "same"), noise=noise).exit_code == 2
        for d in drops:
            hits[d] += compare(runs[0], run(1.0 - d, f"down{d}"), noise=noise).exit_code == 2
    return PowerRow(
        kind="throughput (continuous)",
        setting=f"{iterations} iterations, noise file of {noise_runs} runs",
        trials=trials,
        false_alarms=alarms,
        detection=[(f"-{d:.0%}", hits[d] / trials) for d in drops],
    )


def power_suite(
    trials: int, rng: np.random.Generator, n_cases: int = 40, iterations: int = 5, broken: int = 5
) -> PowerRow:
    """A whole suite of :func:`reliable_or_not` cases, noise file of 5 runs (the first is the baseline):
    false alarm when an unchanged run exits 2; detected when ``broken`` cases that used to pass at least
    sometimes (p >= 0.3) now always fail, the run exits 2 and a broken case is ``regressed``."""

    alarms = detected = 0
    for t in range(trials):
        probs = {f"case-{i:02d}": reliable_or_not(rng) for i in range(n_cases)}
        runs = [simulate_scorecard(probs, iterations, rng, run_id=f"t{t}-n{i}") for i in range(5)]
        noise = noise_from_scorecards(runs)
        same = simulate_scorecard(probs, iterations, rng, run_id=f"t{t}-same")
        alarms += compare(runs[0], same, noise=noise).exit_code == 2
        candidates = [c for c, p in probs.items() if p >= 0.3]
        gone = set(rng.choice(candidates, size=min(broken, len(candidates)), replace=False).tolist())
        worse = simulate_scorecard(
            {c: (0.0 if c in gone else p) for c, p in probs.items()}, iterations, rng, run_id=f"t{t}-broken"
        )
        comp = compare(runs[0], worse, noise=noise)
        detected += comp.exit_code == 2 and bool({c.case_id for c in comp.bucket("regressed")} & gone)
    return PowerRow(
        kind="suite pass/fail",
        setting=f"{n_cases} cases x {iterations} iterations, noise file of 5 runs",
        trials=trials,
        false_alarms=alarms,
        detection=[(f"{broken} cases break", detected / trials)],
    )


def power_table(trials: int, seed: int) -> list[PowerRow]:
    """Every row of the power table, each from its own seeded stream."""
    rows: list[PowerRow] = []
    makers = [
        *(lambda r, k=k: power_pass_fail(k, trials, r, noise_runs=10) for k in (1, 3, 5)),
        *(lambda r, n=n: power_recall(n, trials, r) for n in (20, 50, 200)),
        *(lambda r, n=n: power_latency(n, trials, r) for n in (20, 100)),
        lambda r: power_throughput(3, trials, r),
        lambda r: power_suite(trials, r),
    ]
    for i, make in enumerate(makers):
        rows.append(make(np.random.default_rng([seed, i])))
    return rows
