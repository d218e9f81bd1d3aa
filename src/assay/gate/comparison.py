"""Compare a current run with a baseline: per-case buckets, gated metrics, comparability, exit code.

Per case exactly one bucket, decided in this order:

1. ``only_in_baseline`` / ``only_in_current``: the case is in one scorecard only.
2. ``skipped``: skipped (with a reason) in both runs: consistent, nothing to compare.
3. ``not_measured``: one side has no measured attempt (INFRA_ERROR, NOT_RUN, or skipped on one side
   only). A case measured in the baseline and skipped now was *not run*: it is incomplete.
4. ``flipped`` (one side measured once): the pass rate changed, but one attempt cannot tell a change from
   chance, so it is a regression (or improvement) only where the noise file's floor for the case says so
   (:meth:`NoiseReport.case_floor`, which needs a case the noise runs saw stable many times).
5. ``regressed``: the pass-rate drop exceeds the case's noise floor from the noise file, or the baseline
   was stable-pass and the current run stable-fail (two or more attempts each), unless the noise file
   saw this case both pass and fail: then only its floor counts.
6. ``improved``: the mirror image of 5.
7. ``flaky``: either side is flaky (and the change is within the noise floor, or there is no noise file).
8. ``score_regressed``: same pass/fail picture, but the mean score dropped by more than
   ``max(0.1, noise score spread)``.
9. ``time_regressed`` / ``slower``: same picture, but the mean attempt time grew by more than 50% and at
   least 1 s. A wall-clock time on a shared runner is noise until measured: the case is ``time_regressed``
   only when the noise file (``assay eval noise`` on the same runner) measured the case's run-to-run time
   spread and the rise is beyond it; otherwise it is ``slower``: shown beside the baseline, never a failure.
10. ``unchanged``.

``regressed`` and ``time_regressed`` cases and gated metrics that got worse beyond their tolerance fail the
comparison (exit 2); ``score_regressed`` and ``slower`` are reported, not gated. Each metric is compared by
its kind (:mod:`assay.gate._metrics`): binomial noise of its items for a proportion, a relative tolerance
from measured spread for a continuous metric, the declared tolerance for a count; the noise file only
widens a tolerance, and the comparison says where each came from.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, Field

from assay.errors import ExitCode
from assay.runs import CaseSummary, Scorecard, SubjectConfig
from assay.runs.records import SCHEMA_VERSION, Stability
from assay.stats import NoiseReport, load_noise, suite_pass_hat_k

from ._complete import require_complete_code
from ._load import LoadedRun, load_run
from ._metrics import MetricComparison, compare_metric, metric_alpha
from ._selection import restrict_to_selection, selection_of

Bucket = Literal[
    "regressed",
    "score_regressed",
    "time_regressed",
    "slower",
    "improved",
    "flaky",
    "flipped",
    "unchanged",
    "only_in_baseline",
    "only_in_current",
    "not_measured",
    "skipped",
]
BUCKETS: tuple[Bucket, ...] = get_args(Bucket)

#: a mean score drop below this is never a score regression
SCORE_TOLERANCE = 0.1
#: a case is time-regressed when its mean attempt time grew by this factor and this many seconds
TIME_FACTOR = 1.5
TIME_MIN_S = 1.0
EXIT_OK, EXIT_REGRESSION, EXIT_NOT_COMPARABLE = ExitCode.OK, ExitCode.REGRESSION, ExitCode.NOT_COMPARABLE
_EPS = 1e-9

#: (label, getter) of what must match for two runs to be comparable
_COMPARABLE: tuple[tuple[str, str], ...] = (
    ("benchmark", "benchmark"),
    ("suite", "suite"),
    ("suite version", "suite_version"),
    ("subject model", "config.model"),
    ("judge model", "config.judge_model"),
    ("embedder", "config.embedder"),
    ("retrieval fusion", "config.extra.fusion_rule"),  # hybrid search's rule (assay.ranking.fusion_rule)
)


class Side(BaseModel):
    measured: int
    passed: int
    pass_rate: float | None
    stability: Stability
    skip_reason: str | None = None
    score_mean: float | None = None
    mean_elapsed_s: float | None = None

    @classmethod
    def of(cls, case: CaseSummary) -> Side:
        return cls(
            measured=case.measured,
            passed=case.passed,
            pass_rate=case.pass_rate,
            stability=case.stability,
            skip_reason=case.skip_reason if case.stability == "skipped" else None,
            score_mean=case.score_mean,
            mean_elapsed_s=case.mean_elapsed_s,
        )

    @property
    def skipped(self) -> bool:
        return self.stability == "skipped"

    def short(self) -> str:
        if self.skipped:
            return f"skipped ({self.skip_reason})"
        if self.measured == 0:
            return "not measured"
        return f"{self.passed}/{self.measured} {self.stability}"


class CaseComparison(BaseModel):
    case_id: str
    category: str = "default"
    bucket: Bucket
    baseline: Side | None
    current: Side | None
    pass_rate_delta: float | None = None
    floor: float | None = None
    score_delta: float | None = None
    reason: str = ""

    @property
    def flipped(self) -> bool:
        """The pass/fail picture changed: some pass-rate change between two measured sides."""
        return self.pass_rate_delta is not None and abs(self.pass_rate_delta) > _EPS


class RunRef(BaseModel):
    path: str
    run_id: str
    benchmark: str
    suite: str
    suite_version: str
    config: SubjectConfig
    iterations: int
    complete: bool
    commits: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, run: LoadedRun) -> RunRef:
        sc = run.scorecard
        return cls(
            path=str(run.path),
            run_id=sc.run_id,
            benchmark=sc.benchmark,
            suite=sc.suite,
            suite_version=sc.suite_version,
            config=sc.config,
            iterations=sc.iterations,
            complete=sc.complete,
            commits=sc.commits,
        )


class Comparison(BaseModel):
    """``comparison.json``: the verdict of one current run against one baseline."""

    schema_version: int = SCHEMA_VERSION
    baseline: RunRef
    current: RunRef
    comparable: bool
    not_comparable: list[str] = Field(default_factory=list)
    noise: str | None = None
    require_complete: bool = False
    cases: list[CaseComparison] = Field(default_factory=list)
    metrics: list[MetricComparison] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    regressions: list[str] = Field(default_factory=list)
    incomplete: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    #: mean pass^k over cases, k = 1..the fewer iterations of the two runs: {"baseline": {k: value}, ...}
    pass_hat_k: dict[str, dict[int, float | None]] = Field(default_factory=dict)
    #: baseline cases a targeted current run did not select: not run, neither compared nor missing
    not_selected: list[str] = Field(default_factory=list)
    #: metrics whose tolerance the noise file set (its spread was wider than every other rule)
    noise_widened: list[str] = Field(default_factory=list)
    exit_code: int
    verdict: str
    created_at: datetime

    def bucket(self, name: Bucket) -> list[CaseComparison]:
        return [c for c in self.cases if c.bucket == name]

    def flipped(self) -> list[CaseComparison]:
        """Every case whose pass rate changed, worst first (largest drop, regressions before others)."""
        order = {b: i for i, b in enumerate(BUCKETS)}
        flips = [c for c in self.cases if c.flipped]
        return sorted(flips, key=lambda c: (c.pass_rate_delta or 0.0, order[c.bucket], c.case_id))

    def save(self, path: Path) -> Path:
        path = Path(path)
        if path.is_dir():
            path = path / "comparison.json"
        from assay.runs.rundir import write_model

        return write_model(path, self)


def _get(sc: Scorecard, dotted: str) -> object:
    value: object = sc
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else getattr(value, part)
    return value


#: what is under test: a change of it is refused unless the comparison allows a subject change
_SUBJECT_LABELS = ("subject model", "subject")


def not_comparable_reasons(
    baseline: Scorecard, current: Scorecard, *, allow_subject_change: bool = False
) -> list[str]:
    """Why two scorecards cannot be compared; empty when they can.

    Runs imported from another tool (``assay import``, ``config.extra["imported_from"]``) also compare their
    subject (the agent, solver or scaffold the tool recorded). ``allow_subject_change`` drops the subject
    model and subject from the reasons (see :func:`subject_changes`).
    """
    reasons = []
    both_imported = bool(
        baseline.config.extra.get("imported_from") and current.config.extra.get("imported_from")
    )
    for label, attr in (*_COMPARABLE, *((("subject", "config.subject"),) if both_imported else ())):
        if allow_subject_change and label in _SUBJECT_LABELS:
            continue
        a, b = _get(baseline, attr), _get(current, attr)
        if a != b:
            reasons.append(f"{label} differs: baseline {a!r}, current {b!r}")
    return reasons


def subject_changes(baseline: Scorecard, current: Scorecard) -> list[str]:
    """What of the subject differs between two runs (the reasons ``allow_subject_change`` set aside)."""
    every = not_comparable_reasons(baseline, current)
    return [r for r in every if r.split(" differs", 1)[0] in _SUBJECT_LABELS]


def _changed_settings(base: dict[str, object], cur: dict[str, object]) -> list[str]:
    keys = sorted(set(base) | set(cur))
    return [f"{k}: {base.get(k)!r} -> {cur.get(k)!r}" for k in keys if base.get(k) != cur.get(k)]


def config_changes(base: SubjectConfig, cur: SubjectConfig) -> list[str]:
    """Every difference of two subject configurations: the subject, its model, judge model and embedder,
    and its settings (``extra``, what a comparison warns about as "subject settings differ")."""
    fields = ("subject", "model", "judge_model", "embedder")
    own = [
        f"{f}: {getattr(base, f)!r} -> {getattr(cur, f)!r}"
        for f in fields
        if getattr(base, f) != getattr(cur, f)
    ]
    return own + _changed_settings(base.extra, cur.extra)


def noise_mismatch(
    noise: NoiseReport, benchmark: str, suite: str, suite_version: str, config: SubjectConfig
) -> list[str]:
    """Why a noise file cannot give floors to a run of this benchmark, suite and configuration (empty: it can)."""
    reasons = []
    pairs = (
        ("benchmark", noise.benchmark, benchmark),
        ("suite", noise.suite, suite),
        ("suite version", noise.suite_version, suite_version),
        ("subject model", noise.config.model, config.model),
        ("judge model", noise.config.judge_model, config.judge_model),
        ("embedder", noise.config.embedder, config.embedder),
    )
    for label, a, b in pairs:
        if a != b:
            reasons.append(f"noise file {label} differs: noise {a!r}, current {b!r}")
    return reasons


def _noise_reasons(noise: NoiseReport, current: Scorecard) -> list[str]:
    return noise_mismatch(noise, current.benchmark, current.suite, current.suite_version, current.config)


def _compare_case(
    cid: str, base: CaseSummary | None, cur: CaseSummary | None, noise: NoiseReport | None
) -> CaseComparison:
    ref = cur if cur is not None else base
    category = ref.category if ref is not None else "default"
    if cur is None:
        assert base is not None
        return CaseComparison(
            case_id=cid,
            category=category,
            bucket="only_in_baseline",
            baseline=Side.of(base),
            current=None,
            reason="missing from the current run",
        )
    if base is None:
        return CaseComparison(
            case_id=cid,
            category=category,
            bucket="only_in_current",
            baseline=None,
            current=Side.of(cur),
            reason="new case",
        )
    b, c = Side.of(base), Side.of(cur)
    out = CaseComparison(case_id=cid, category=category, bucket="unchanged", baseline=b, current=c)
    if b.skipped and c.skipped:
        out.bucket, out.reason = "skipped", f"skipped in both runs: {c.skip_reason}"
        return out
    if b.measured == 0 or c.measured == 0:
        if c.skipped:
            out.reason = f"measured in the baseline, skipped now ({c.skip_reason}): not run"
        elif b.skipped:
            out.reason = f"skipped in the baseline ({b.skip_reason})"
        else:
            side = "current" if c.measured == 0 else "baseline"
            out.reason = f"no measured attempt in the {side} run"
        out.bucket = "not_measured"
        return out
    assert b.pass_rate is not None and c.pass_rate is not None
    delta = c.pass_rate - b.pass_rate
    out.pass_rate_delta = delta
    floor = noise.case_floor(cid, b.measured, c.measured) if noise is not None else None
    out.floor = floor
    flaky_here = "flaky" in (b.stability, c.stability)
    known_flaky = flaky_here or (noise is not None and noise.is_flaky(cid))
    if min(b.measured, c.measured) == 1 and abs(delta) > _EPS:
        if floor is not None and abs(delta) > floor + _EPS:
            change = "dropped" if delta < 0 else "rose"
            out.bucket = "regressed" if delta < 0 else "improved"
            out.reason = (
                f"pass rate {change} {abs(delta):.2f} on one attempt, beyond the noise floor {floor:.2f}"
            )
            return out
        out.bucket = "flipped"
        why = "known flaky" if known_flaky else "no noise floor says the case is stable"
        if floor is not None and not known_flaky:
            why = f"within the noise floor {floor:.2f}"
        out.reason = f"{b.stability} -> {c.stability}: one attempt, not evidence of a change ({why})"
        return out
    noise_flaky = noise is not None and noise.is_flaky(cid) and floor is not None
    if b.stability == "stable-pass" and c.stability == "stable-fail" and not noise_flaky:
        out.bucket, out.reason = "regressed", "stable-pass -> stable-fail"
        return out
    if floor is not None and -delta > floor + _EPS:
        out.bucket, out.reason = (
            "regressed",
            f"pass rate dropped {-delta:.2f}, beyond the noise floor {floor:.2f}",
        )
        return out
    if b.stability == "stable-fail" and c.stability == "stable-pass" and not noise_flaky:
        out.bucket, out.reason = "improved", "stable-fail -> stable-pass"
        return out
    if floor is not None and delta > floor + _EPS:
        out.bucket, out.reason = "improved", f"pass rate rose {delta:.2f}, beyond the noise floor {floor:.2f}"
        return out
    if flaky_here:
        out.bucket = "flaky"
        out.reason = f"{b.stability} -> {c.stability}" + (
            f", change {delta:+.2f} within the noise floor {floor:.2f}" if floor is not None else ""
        )
        return out
    if b.score_mean is not None and c.score_mean is not None:
        out.score_delta = c.score_mean - b.score_mean
        spread = None
        if noise is not None and (cn := noise.cases.get(cid)) is not None:
            spread = cn.score_spread
        tol = max(SCORE_TOLERANCE, spread or 0.0)
        if -out.score_delta > tol + _EPS:
            out.bucket = "score_regressed"
            out.reason = f"mean score dropped {-out.score_delta:.2f} (tolerance {tol:.2f})"
            return out
    if (
        b.mean_elapsed_s is not None
        and c.mean_elapsed_s is not None
        and c.mean_elapsed_s > b.mean_elapsed_s * TIME_FACTOR
        and c.mean_elapsed_s - b.mean_elapsed_s >= TIME_MIN_S
    ):
        times = f"mean time {b.mean_elapsed_s:.1f}s -> {c.mean_elapsed_s:.1f}s"
        case_noise = noise.cases.get(cid) if noise is not None else None
        floor_s = case_noise.elapsed_spread if case_noise is not None else None
        if floor_s is not None and c.mean_elapsed_s - b.mean_elapsed_s > floor_s + _EPS:
            out.bucket = "time_regressed"
            out.reason = f"{times}, beyond this runner's measured time noise {floor_s:.2f}s"
        else:
            out.bucket = "slower"
            why = (
                "no time noise measured on this runner" if floor_s is None else f"within {floor_s:.2f}s noise"
            )
            out.reason = f"{times} (not gated: {why})"
        return out
    return out


def _as_run(x: Path | str | LoadedRun | Scorecard) -> LoadedRun:
    if isinstance(x, LoadedRun):
        return x
    if isinstance(x, Scorecard):
        return LoadedRun(path=Path(f"<{x.run_id}>"), scorecard=x, meta=None)
    return load_run(x)


def compare(
    baseline: Path | str | LoadedRun | Scorecard,
    current: Path | str | LoadedRun | Scorecard,
    noise: Path | str | NoiseReport | None = None,
    require_complete: bool = False,
    allow_subject_change: bool = False,
) -> Comparison:
    """Hold ``current`` against ``baseline`` (run dirs, baseline dirs or scorecard.json paths).

    Never raises for runs that cannot be compared: the :class:`Comparison` says ``comparable=False`` with
    the reasons and ``exit_code=3``. Unreadable paths raise :class:`~assay.errors.ConfigError`. With
    ``allow_subject_change`` a different subject model or subject is compared case by case (paired) and the
    comparison says that the subjects differ.
    """
    base_run, cur_run = _as_run(baseline), _as_run(current)
    noise_report = noise if isinstance(noise, NoiseReport) or noise is None else load_noise(Path(noise))
    base, cur = base_run.scorecard, cur_run.scorecard
    reasons = not_comparable_reasons(base, cur, allow_subject_change=allow_subject_change)
    if noise_report is not None:
        reasons += _noise_reasons(noise_report, cur)
    comp = Comparison(
        baseline=RunRef.of(base_run),
        current=RunRef.of(cur_run),
        comparable=not reasons,
        not_comparable=reasons,
        noise=str(noise) if noise is not None and not isinstance(noise, NoiseReport) else None,
        require_complete=require_complete,
        exit_code=EXIT_NOT_COMPARABLE,
        verdict="not comparable: " + "; ".join(reasons) if reasons else "",
        created_at=datetime.now(UTC),
    )
    if reasons:
        return comp
    for side, card in (("baseline", base), ("current", cur)):
        if why := card.extra.get("no_items"):  # an import of aggregates: nothing to pair item by item
            comp.warnings.append(f"the {side} has no items, so no case is compared: {why}")
    if allow_subject_change and (changed := subject_changes(base, cur)):
        comp.warnings.append("the subjects differ (--allow-subject-change): " + "; ".join(changed))
    selected = selection_of(cur)
    if selected is not None:
        base, comp.not_selected, dropped = restrict_to_selection(base, selected)
        if comp.not_selected:
            comp.warnings.append(
                f"a targeted run: {len(comp.not_selected)} baseline case(s) not selected, so not run and not "
                "compared"
            )
        if dropped:
            comp.warnings.append("run-level metrics not compared on a targeted run: " + ", ".join(dropped))
    order = [c.case_id for c in base.cases] + [c.case_id for c in cur.cases if base.case(c.case_id) is None]
    base_by = {c.case_id: c for c in base.cases}
    cur_by = {c.case_id: c for c in cur.cases}
    comp.cases = [_compare_case(cid, base_by.get(cid), cur_by.get(cid), noise_report) for cid in order]
    names = list(base.summary.metrics) + [m for m in cur.summary.metrics if m not in base.summary.metrics]
    bm, cm = base.summary.metrics, cur.summary.metrics
    n_gated = sum(1 for m in names if (mv := cm.get(m) or bm.get(m)) is not None and mv.gated)
    alpha = metric_alpha(n_gated)
    base_items = {c.case_id: c.metrics for c in base.cases}
    cur_items = {c.case_id: c.metrics for c in cur.cases}
    comp.metrics = [
        compare_metric(m, bm.get(m), cm.get(m), noise_report, alpha, base_items, cur_items) for m in names
    ]
    comp.counts = {b: len(comp.bucket(b)) for b in BUCKETS}
    kmax = min(base.iterations, cur.iterations)
    if kmax >= 2:
        comp.pass_hat_k = {
            side: {k: suite_pass_hat_k(sc.cases, k) for k in range(1, kmax + 1)}
            for side, sc in (("baseline", base), ("current", cur))
        }
    comp.regressions = [c.case_id for c in comp.cases if c.bucket in ("regressed", "time_regressed")] + [
        f"metric:{m.name}" for m in comp.metrics if m.gated and m.verdict == "regressed"
    ]
    incomplete = [f"{c.case_id} (missing)" for c in comp.bucket("only_in_baseline")]
    incomplete += [
        f"{c.case_id} (skipped now: not run)" if c.current.skipped else f"{c.case_id} (not measured)"
        for c in comp.bucket("not_measured")
        if c.current is not None
        and c.current.measured == 0
        and (not c.current.skipped or (c.baseline is not None and c.baseline.measured))
    ]
    incomplete += [
        f"metric:{m.name} (not measured)"
        for m in comp.metrics
        if m.gated and m.baseline is not None and m.current is None
    ]
    comp.incomplete = incomplete
    unmeasured_base = [
        c.case_id
        for c in comp.bucket("not_measured")
        if c.baseline is not None
        and c.baseline.measured == 0
        and c.current is not None
        and c.current.measured
    ]
    legacy = [
        side for side, sc in (("baseline", base), ("current", cur)) if sc.schema_version < SCHEMA_VERSION
    ]
    if legacy:
        comp.warnings.append(
            f"the {' and '.join(legacy)} scorecard is schema 1 (metrics without a declared kind): metric kinds "
            "come from the other run; regenerate it with --save-baseline"
        )
    undeclared = [m.name for m in comp.metrics if m.verdict == "not_compared"]
    if undeclared:
        comp.warnings.append("not compared (no declared kind): " + ", ".join(undeclared))
    if unmeasured_base:
        comp.warnings.append("not measured in the baseline, so not compared: " + ", ".join(unmeasured_base))
    if noise_report is not None:
        widened = [m.name for m in comp.metrics if m.noise_widened]
        comp.noise_widened = widened
    if not cur.complete:
        comp.warnings.append("the current run is incomplete (some attempts did not finish): resume it")
    if cur.mixed_commits:
        comp.warnings.append(f"the current run mixes results from commits {', '.join(cur.commits)}")
    if not require_complete and incomplete:
        comp.warnings.append(f"{len(incomplete)} baseline item(s) not compared: " + ", ".join(incomplete))
    changed = _changed_settings(base.config.extra, cur.config.extra)
    if changed:  # subject settings are usually the change under test: said, not refused
        comp.warnings.append("subject settings differ: " + "; ".join(changed))
    if base.iterations < 2 or cur.iterations < 2:
        comp.warnings.append(
            "a single-iteration run cannot tell flaky from broken: use --iterations 3 or more"
        )
    if comp.regressions:
        comp.exit_code = EXIT_REGRESSION
        comp.verdict = f"REGRESSION: {len(comp.regressions)} regressed: " + ", ".join(comp.regressions)
    elif code := require_complete_code(incomplete, require_complete):
        comp.exit_code = code
        comp.verdict = (
            f"INCOMPLETE: {len(incomplete)} baseline item(s) missing or unmeasured (--require-complete)"
        )
    else:
        comp.exit_code = EXIT_OK
        comp.verdict = "no regression"
    return comp


def load_comparison(path: Path) -> Comparison:
    return Comparison.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
