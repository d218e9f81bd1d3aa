"""Scenario health: which cases still tell models apart, over runs of one or more subject models.

Runs are grouped by subject model and pooled per case. The **strongest** model is the one named with
``strong`` (``--strong``), else the one with the highest pooled pass rate (among the models not named
``weak``). Per case:

Every flag below reads only the models with at least :data:`MIN_ATTEMPTS` measured attempts of the case
(one attempt cannot say a case is stable, broken or inverted):

* **saturated**: every attempt passed on every model, each measured at least twice: it no longer separates
  anything;
* **always-fail**: no attempt passed on the strongest model (measured at least twice): broken, or out of reach;
* **inverted**: a weaker model (the one named ``weak`` when one is, else any other) passes it more often than
  the strongest *beyond their intervals*: the weaker model's Wilson interval lies wholly above the strongest's
  (:func:`assay.intervals.wilson_interval`). 2/3 against 1/3 is noise, not an inversion; suspect grading;
* **flaky**: some model (measured at least twice) both passed and failed it;
* **skipped**: no model has a measured attempt, and the case was skipped (with a reason);
* **not-measured**: no model has a measured attempt, and it was not (only) skipped.

Per category the strongest model's pass rate is the **headroom** left (1 - pass rate). For the agent
benchmark it is the *judged* pass rate, as its scorecard's: passes over the attempts that reached the judge
(PASS and FAIL; a FAIL from a code check is judged too, and counts as failed); an attempt where the agent
broke (ERROR) or ran out of time never reached the judge.

For a benchmark with CI tiers (the agent's ``ci_tiers.json``), moves between them are suggested from the flags
by the benchmark's :class:`~assay.gate.MoveAdvisor` (``advisor_for``), never applied.

Per gated metric, read by its kind (:class:`MetricHealth`): a proportion is **saturated** when every model
scores its best possible value (1, or 0 when lower is better); a continuous metric or a count has no
ceiling, so it never is. A metric is **inverted** when a weaker model beats the strongest beyond the
metric's tolerance, decided by the same rule compare uses (:func:`assay.gate._metrics.compare_metric`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from assay.errors import ConfigError, NotComparableError
from assay.intervals import wilson_interval
from assay.runs import Scorecard
from assay.runs.records import SCHEMA_VERSION

from ._health_cases import (
    FLAGS,
    CaseHealth,
    CategoryHealth,
    Flag,
    MetricFlag,
    MetricHealth,
    ModelCase,
)
from ._health_moves import MoveAdvice, MoveAdvisor, MoveSuggestion, moves_markdown
from ._load import LoadedRun, load_run
from ._metrics import compare_metric, metric_alpha

#: measured attempts a model needs of a case before any flag reads it
MIN_ATTEMPTS = 2
#: benchmarks whose headroom is the judged pass rate (their PASS and FAIL attempts are the judged ones)
JUDGED_BENCHMARKS = frozenset({"agent"})
_EPS = 1e-9


class HealthReport(BaseModel):
    """``health.json``."""

    schema_version: int = SCHEMA_VERSION
    benchmark: str
    suite: str
    runs: list[str]
    models: list[str]  # strongest first (the weak model, when named, last)
    #: the models named with ``--strong`` / ``--weak`` (None: not named; the strongest is then inferred)
    strong: str | None = None
    weak: str | None = None
    model_pass_rate: dict[str, float | None]
    cases: list[CaseHealth]
    categories: list[CategoryHealth]
    metrics: list[MetricHealth] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    #: the CI tiers file the moves were suggested for (agent runs), or None with ``moves_note`` saying why
    tiers_file: str | None = None
    moves: list[MoveSuggestion] = Field(default_factory=list)
    moves_note: str | None = None
    created_at: datetime

    def flagged(self, flag: Flag) -> list[str]:
        return [c.case_id for c in self.cases if flag in c.flags]


def _model_label(sc: Scorecard) -> str:
    return sc.config.model or sc.config.subject or "unknown"


def _pool(cards: Sequence[Scorecard]) -> dict[str, ModelCase]:
    measured: dict[str, int] = defaultdict(int)
    passed: dict[str, int] = defaultdict(int)
    judged: dict[str, int] = defaultdict(int)
    skipped: dict[str, int] = defaultdict(int)
    score_sum: dict[str, float] = defaultdict(float)
    score_n: dict[str, int] = defaultdict(int)
    for sc in cards:
        for c in sc.cases:
            measured[c.case_id] += c.measured
            passed[c.case_id] += c.passed
            judged[c.case_id] += c.counts.get("PASS", 0) + c.counts.get("FAIL", 0)
            skipped[c.case_id] += c.counts.get("SKIPPED", 0)
            if c.score_mean is not None and c.measured:
                score_sum[c.case_id] += c.score_mean * c.measured
                score_n[c.case_id] += c.measured
    out = {}
    for cid in measured:
        m = measured[cid]
        out[cid] = ModelCase(
            measured=m,
            passed=passed[cid],
            judged=judged[cid],
            skipped=skipped[cid],
            pass_rate=passed[cid] / m if m else None,
            score_mean=score_sum[cid] / score_n[cid] if score_n[cid] else None,
        )
    return out


def _flags(by_model: dict[str, ModelCase], strongest: str, weaker: Sequence[str]) -> list[Flag]:
    """The case's flags; ``weaker``: the models held against the strongest for **inverted**."""
    flags: list[Flag] = []
    measured = {m: mc for m, mc in by_model.items() if mc.measured > 0}
    if not measured:
        return ["skipped"] if any(mc.skipped for mc in by_model.values()) else ["not-measured"]
    enough = {m: mc for m, mc in measured.items() if mc.measured >= MIN_ATTEMPTS}
    if len(enough) == len(by_model) and all(mc.passed == mc.measured for mc in enough.values()):
        flags.append("saturated")
    top = enough.get(strongest)
    if top is not None and top.passed == 0:
        flags.append("always-fail")
    if top is not None:
        top_high = wilson_interval(top.passed, top.measured)[1]
        for model, mc in enough.items():
            if (
                model != strongest
                and model in weaker
                and wilson_interval(mc.passed, mc.measured)[0] > top_high
            ):
                flags.append("inverted")
                break
    if any(0 < mc.passed < mc.measured for mc in enough.values()):
        flags.append("flaky")
    return flags


def _metric_health(
    first: dict[str, Scorecard], models: Sequence[str], weaker: Sequence[str]
) -> list[MetricHealth]:
    """Each gated metric, flagged by its kind (see the module docstring); ``models[0]`` is the strongest."""
    strongest = first[models[0]]
    names = [n for n, mv in strongest.summary.metrics.items() if mv.gated]
    alpha = metric_alpha(len(names))
    out = []
    for name in names:
        ref = strongest.summary.metrics[name]
        values = {m: (mv.value if (mv := first[m].summary.metrics.get(name)) else None) for m in models}
        flags: list[MetricFlag] = []
        best = 1.0 if ref.direction == "higher" else 0.0
        measured = [v for v in values.values() if v is not None]
        if ref.kind == "proportion" and measured and all(abs(v - best) < _EPS for v in measured):
            flags.append("saturated")
        top_items = {c.case_id: c.metrics for c in strongest.cases}
        for m in (m for m in models[1:] if m in weaker):
            other = first[m].summary.metrics.get(name)
            items = {c.case_id: c.metrics for c in first[m].cases}
            verdict = compare_metric(name, ref, other, None, alpha, top_items, items).verdict
            if other is not None and verdict == "improved":
                flags.append("inverted")
                break
        out.append(
            MetricHealth(name=name, kind=ref.kind, direction=ref.direction, by_model=values, flags=flags)
        )
    return out


def _load_roles(
    run_dirs: Sequence[Path | str], strong: Sequence[Path | str], weak: Sequence[Path | str]
) -> tuple[list[LoadedRun], str | None, str | None]:
    """Load every run once (a path given twice counts once) and the model each role names, or None."""
    strong_keys = {Path(p).resolve(): p for p in strong}
    for p in weak:
        if Path(p).resolve() in strong_keys:
            raise ConfigError("the run is named both --strong and --weak", path=str(p))
    seen: dict[Path, LoadedRun] = {}
    roles: dict[str, list[LoadedRun]] = {"strong": [], "weak": []}
    for role, paths in (("", run_dirs), ("strong", strong), ("weak", weak)):
        for p in paths:
            key = Path(p).resolve()
            if key not in seen:
                seen[key] = load_run(p)
            if role:
                roles[role].append(seen[key])
    named: dict[str, str | None] = {}
    for role, role_runs in roles.items():
        labels = {_model_label(r.scorecard) for r in role_runs}
        if len(labels) > 1:
            listed = ", ".join(f"{r.path} ({_model_label(r.scorecard)})" for r in role_runs)
            raise ConfigError(f"--{role} names runs of more than one model: {listed}")
        named[role] = labels.pop() if labels else None
    if named["strong"] is not None and named["strong"] == named["weak"]:
        listed = ", ".join(str(r.path) for r in roles["strong"] + roles["weak"])
        raise ConfigError(
            f"--strong and --weak name runs of the same model {named['strong']!r} ({listed}): "
            "name runs of a stronger and a weaker model"
        )
    return list(seen.values()), named["strong"], named["weak"]


def health(
    run_dirs: Sequence[Path | str],
    out: Path | str | None = None,
    *,
    strong: Sequence[Path | str] = (),
    weak: Sequence[Path | str] = (),
    tiers: Path | str | None = None,
    advisor_for: Callable[[str], MoveAdvisor | None] | None = None,
) -> HealthReport:
    """Flag every case over the given runs; with ``out`` write ``health.json`` and ``health.md`` there.

    ``strong`` / ``weak``: runs of the stronger / weaker model (each of one model, not the same one). With
    ``strong`` the strongest model is that one, not the best pass rate; with ``weak``, **inverted** holds
    that model (not every other) against the strongest. The other runs are grouped by model as they are.
    ``tiers``: the CI tiers file to suggest moves for (default: the benchmark's own, e.g. the one the agent runs'
    scenarios folder has). ``advisor_for``: a benchmark's name -> its move advisor (None: it has no CI tiers);
    ``assay.evals.health`` passes the registry's.
    """
    runs, strong_model, weak_model = _load_roles(run_dirs, strong, weak)
    if not runs:
        raise ConfigError("health needs at least one run directory")
    first = runs[0].scorecard
    for r in runs[1:]:
        sc = r.scorecard
        if (sc.benchmark, sc.suite, sc.suite_version) != (first.benchmark, first.suite, first.suite_version):
            raise NotComparableError(
                f"{r.path} is {sc.benchmark}/{sc.suite}@{sc.suite_version} but {runs[0].path} is "
                f"{first.benchmark}/{first.suite}@{first.suite_version}: health needs runs of one suite"
            )
    by_model_cards: dict[str, list[Scorecard]] = defaultdict(list)
    for r in runs:
        by_model_cards[_model_label(r.scorecard)].append(r.scorecard)
    pooled = {m: _pool(cards) for m, cards in by_model_cards.items()}
    rates: dict[str, float | None] = {}
    scores: dict[str, float] = {}
    for m, cases in pooled.items():
        meas = sum(c.measured for c in cases.values())
        rates[m] = sum(c.passed for c in cases.values()) / meas if meas else None
        sc_vals = [c.score_mean for c in cases.values() if c.score_mean is not None]
        scores[m] = sum(sc_vals) / len(sc_vals) if sc_vals else 0.0
    ranked = sorted(pooled, key=lambda m: (-(rates[m] if rates[m] is not None else -1.0), -scores[m], m))
    rest = [m for m in ranked if m not in (strong_model, weak_model)]
    if strong_model is None and weak_model is not None and not rest:
        raise ConfigError(
            f"--weak names the only model ({weak_model!r}): name the stronger one's runs with --strong "
            "or give runs of another model"
        )
    strongest = strong_model or rest[0]
    models = [strongest] + [m for m in rest if m != strongest] + ([weak_model] if weak_model else [])
    weaker = [weak_model] if weak_model else models[1:]
    categories: dict[str, str] = {}
    order: list[str] = []
    for r in runs:
        for c in r.scorecard.cases:
            if c.case_id not in categories:
                categories[c.case_id] = c.category
                order.append(c.case_id)
    case_health = []
    for cid in order:
        by_model = {m: pooled[m].get(cid, ModelCase()) for m in models}
        case_health.append(
            CaseHealth(
                case_id=cid,
                category=categories[cid],
                flags=_flags(by_model, strongest, weaker),
                by_model=by_model,
            )
        )
    over: Literal["judged", "measured"] = "judged" if first.benchmark in JUDGED_BENCHMARKS else "measured"
    cats = []
    for cat in sorted(set(categories.values())):
        in_cat = [cid for cid in order if categories[cid] == cat]
        top = [pooled[strongest][cid] for cid in in_cat if cid in pooled[strongest]]
        denominator = sum(c.judged if over == "judged" else c.measured for c in top)
        rate = sum(c.passed for c in top) / denominator if denominator else None
        cats.append(
            CategoryHealth(
                category=cat,
                cases=len(in_cat),
                strongest_pass_rate=rate,
                headroom=None if rate is None else 1.0 - rate,
                rate_over=over,
            )
        )
    advisor = advisor_for(first.benchmark) if advisor_for is not None else None
    if advisor is not None:
        advice = advisor.advise(runs, case_health, models, tiers)
    elif tiers is not None:
        raise ConfigError(
            f"--tiers: the {first.benchmark!r} benchmark has no CI tiers to suggest moves between",
            path=str(tiers),
        )
    else:
        advice = MoveAdvice(
            None, [], f"no move suggestions: the {first.benchmark!r} benchmark has no CI tiers file"
        )
    report = HealthReport(
        benchmark=first.benchmark,
        suite=first.suite,
        runs=[str(r.path) for r in runs],
        models=models,
        strong=strong_model,
        weak=weak_model,
        model_pass_rate=rates,
        cases=case_health,
        categories=cats,
        metrics=_metric_health({m: cards[0] for m, cards in by_model_cards.items()}, models, weaker),
        counts={f: sum(f in c.flags for c in case_health) for f in FLAGS},
        tiers_file=advice.tiers_file,
        moves=advice.moves,
        moves_note=advice.note,
        created_at=datetime.now(UTC),
    )
    if out is not None:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        from assay.runs.rundir import write_artifact, write_model

        write_model(d / "health.json", report)
        write_artifact(d / "health.md", health_markdown(report))
    return report


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def health_markdown(report: HealthReport) -> str:
    lines = [f"## Scenario health: {report.benchmark}/{report.suite}", ""]
    lines.append(
        f"{len(report.runs)} run(s); models, strongest first: "
        + ", ".join(f"`{m}` {_pct(report.model_pass_rate[m])}" for m in report.models)
    )
    if report.strong or report.weak:
        named = ", ".join(f"{r} `{m}`" for r, m in (("strong", report.strong), ("weak", report.weak)) if m)
        why = " (the strongest is the strong model, not the best pass rate)" if report.strong else ""
        lines.extend(["", f"Named: {named}{why}."])
    lines.append("")
    lines.append("| flag | cases |")
    lines.append("|---|---:|")
    lines.extend(f"| {f} | {report.counts.get(f, 0)} |" for f in FLAGS)
    lines.append("")
    over = "judged " if report.categories and report.categories[0].rate_over == "judged" else ""
    lines.append(f"### Headroom per category (strongest model's {over}pass rate)")
    lines.append("")
    lines.append("| category | cases | pass rate | headroom |")
    lines.append("|---|---:|---:|---:|")
    lines.extend(
        f"| {c.category} | {c.cases} | {_pct(c.strongest_pass_rate)} | {_pct(c.headroom)} |"
        for c in report.categories
    )
    lines.append("")
    if report.metrics:
        lines.append("### Gated metrics by kind (each model's first run)")
        lines.append("")
        lines.append("| metric | kind | " + " | ".join(report.models) + " | flags |")
        lines.append("|---|---|" + "---:|" * len(report.models) + "---|")
        for mh in report.metrics:
            cells = ["-" if mh.by_model[m] is None else f"{mh.by_model[m]:.4g}" for m in report.models]
            lines.append(
                f"| {mh.name} | {mh.kind or '-'} | "
                + " | ".join(cells)
                + f" | {', '.join(mh.flags) or '-'} |"
            )
        lines.append("")
    flagged = [c for c in report.cases if c.flags]
    lines.append(f"### Flagged cases ({len(flagged)})")
    lines.append("")
    if flagged:
        lines.append("| case | category | flags | " + " | ".join(report.models) + " |")
        lines.append("|---|---|---|" + "---:|" * len(report.models))
        for c in flagged:
            cells = [
                f"{mc.passed}/{mc.measured}" if mc.measured else "-"
                for mc in (c.by_model[m] for m in report.models)
            ]
            lines.append(f"| {c.case_id} | {c.category} | {', '.join(c.flags)} | " + " | ".join(cells) + " |")
    else:
        lines.append("No case is flagged.")
    lines.append("")
    lines.extend(moves_markdown(report.moves, report.tiers_file, report.moves_note))
    return "\n".join(lines)
