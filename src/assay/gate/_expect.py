"""Expectations: limits a run must meet, per (benchmark, suite, subject model, judge model).

An expectations file (YAML or JSON) looks like::

    schema_version: 1
    benchmark: agent
    suite: pr
    model: qwen2.5-7b-instruct
    judge_model: qwen2.5-7b-instruct
    measured:                 # what the runs the limits came from measured, and where
      - {run_id: ..., commit: ..., machine: ..., values: {passed: 18.0, tokens: 41230, ...}}
    limits:                   # min_* floors and max_* ceilings on any measured quantity
      min_passed: 17
      max_tokens: 55661
      min_quality: 3.6

Quantities: ``passed`` (cases passing per iteration: the sum of case pass rates), ``pass_rate``,
``tokens`` and ``cost_usd`` (per iteration of the suite), ``wall_time_s`` (the sum of mean attempt
times: one serial pass over the suite) and every summary metric of the scorecard by its name.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from assay.errors import ConfigError, NotComparableError
from assay.runs import Scorecard
from assay.runs.records import SCHEMA_VERSION
from assay.stats.tolerance import binomial_tolerance

from ._complete import unmeasured_cases
from ._load import LoadedRun, load_run
from ._metrics import TIME_UNITS

#: where `assay gate` looks for a matching expectations file when none is named
DEFAULT_DIR = Path("eval") / "expectations"
ENV_DIR = "ASSAY_EXPECTATIONS_DIR"
_SUFFIXES = (".yaml", ".yml", ".json")
_EPS = 1e-9

#: headroom for one noisy run (issue 4): one case may flip, quality -0.5, tokens/steps +35%, wall time +50%
FLIP_CASES = 1
QUALITY_HEADROOM = 0.5
TOKENS_FACTOR = 1.35
TIME_FACTOR = 1.5
#: one-sided level of the binomial headroom of a proportion metric
PROPOSE_ALPHA = 0.05


class Measured(BaseModel):
    run_id: str
    commit: str | None = None
    machine: str | None = None
    values: dict[str, float]


class Expectations(BaseModel):
    schema_version: int = SCHEMA_VERSION
    benchmark: str
    suite: str
    model: str | None = None
    judge_model: str | None = None
    measured: list[Measured] = Field(default_factory=list)
    limits: dict[str, float]

    @field_validator("limits")
    @classmethod
    def _limit_names(cls, v: dict[str, float]) -> dict[str, float]:
        for key in v:
            if not (key.startswith("min_") or key.startswith("max_")) or len(key) < 5:
                raise ValueError(f"limit {key!r} must be named min_<quantity> or max_<quantity>")
        return v

    @property
    def key(self) -> tuple[str, str, str | None, str | None]:
        return (self.benchmark, self.suite, self.model, self.judge_model)


class Check(BaseModel):
    name: str
    quantity: str
    kind: Literal["min", "max"]
    limit: float
    actual: float | None
    ok: bool | None  # None: not measured

    def describe(self) -> str:
        sign = ">=" if self.kind == "min" else "<="
        actual = "not measured" if self.actual is None else f"{self.actual:.4g}"
        state = {True: "ok", False: "MISS", None: "NOT MEASURED"}[self.ok]
        return f"{state:12} {self.quantity} {actual} {sign} {self.limit:.4g}"


class GateResult(BaseModel):
    run: str
    expectations: str | None
    status: Literal["not-gated", "met", "missed", "not-comparable"]
    reason: str = ""
    checks: list[Check] = Field(default_factory=list)
    unmeasured_cases: list[str] = Field(default_factory=list)
    #: cases every attempt of which was skipped with a reason (not unmeasured)
    skipped_cases: list[str] = Field(default_factory=list)
    enforce: bool = False
    exit_code: int = 0


def run_key(sc: Scorecard) -> tuple[str, str, str | None, str | None]:
    return (sc.benchmark, sc.suite, sc.config.model, sc.config.judge_model)


def measure(sc: Scorecard) -> dict[str, float]:
    """The quantities an expectations file can limit, measured on one scorecard."""
    iters = max(sc.iterations, 1)
    out: dict[str, float] = {}
    for name, mv in sc.summary.metrics.items():
        if mv.value is not None and math.isfinite(mv.value):
            out[name] = mv.value
    rates = [c.pass_rate for c in sc.cases if c.pass_rate is not None]
    out["passed"] = round(sum(rates), 6)
    if sc.summary.pass_rate is not None:
        out["pass_rate"] = sc.summary.pass_rate
    if sc.cost.total_tokens:
        out["tokens"] = sc.cost.total_tokens / iters
    if sc.cost.cost_usd is not None:
        out["cost_usd"] = sc.cost.cost_usd / iters
    times = [c.mean_elapsed_s for c in sc.cases if c.mean_elapsed_s is not None]
    if times:
        out["wall_time_s"] = sum(times)
    return out


def load_expectations(path: Path) -> Expectations:
    """Parse an expectations file; a malformed one is a :class:`ConfigError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("expectations file not found", path=str(path))
    text = path.read_text(encoding="utf-8")
    try:
        data: Any = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        line = (
            exc.lineno if isinstance(exc, json.JSONDecodeError) else (line + 1 if line is not None else None)
        )
        raise ConfigError(
            f"cannot parse expectations: {str(exc).splitlines()[0]}", path=str(path), line=line
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError("expectations must be a mapping with benchmark, suite and limits", path=str(path))
    try:
        return Expectations.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{where}: {err['msg']}", path=str(path)) from exc


def _search_dirs() -> list[Path]:
    env = os.environ.get(ENV_DIR)
    return [Path(env)] if env else [DEFAULT_DIR]


def find_expectations(sc: Scorecard, search_dirs: Sequence[Path] | None = None) -> Path | None:
    """The first expectations file in ``search_dirs`` whose key matches the scorecard's, if any."""
    for d in search_dirs if search_dirs is not None else _search_dirs():
        if not Path(d).is_dir():
            continue
        for f in sorted(Path(d).iterdir()):
            if f.suffix in _SUFFIXES and f.is_file() and load_expectations(f).key == run_key(sc):
                return f
    return None


def check_limits(values: dict[str, float], limits: dict[str, float]) -> list[Check]:
    checks = []
    for name, limit in limits.items():
        kind: Literal["min", "max"] = "min" if name.startswith("min_") else "max"
        quantity = name[4:]
        actual = values.get(quantity)
        ok = None if actual is None else (actual >= limit - _EPS if kind == "min" else actual <= limit + _EPS)
        checks.append(Check(name=name, quantity=quantity, kind=kind, limit=limit, actual=actual, ok=ok))
    return checks


def gate(
    run_dir: Path | str | LoadedRun,
    expect: Path | str | None = None,
    enforce: bool = False,
    search_dirs: Sequence[Path] | None = None,
) -> GateResult:
    """Check a run against its expectations file (named, or found by key in the expectations directory).

    No matching file: status ``not-gated``, exit 0. A named file that does not exist: ConfigError. A named
    file for another benchmark/suite/model/judge: ``not-comparable``, exit 3. With ``enforce`` a missed
    limit, a limit on something not measured, or a case without a measured attempt exits 2.
    """
    run = run_dir if isinstance(run_dir, LoadedRun) else load_run(run_dir)
    sc = run.scorecard
    if expect is not None:
        path: Path | None = Path(expect)
        if not path.is_file():
            raise ConfigError("--expect: expectations file not found", path=str(path))
    else:
        path = find_expectations(sc, search_dirs)
    if path is None:
        where = ", ".join(str(d) for d in (search_dirs if search_dirs is not None else _search_dirs()))
        return GateResult(
            run=str(run.path),
            expectations=None,
            status="not-gated",
            enforce=enforce,
            reason=f"not gated yet: no expectations file for {run_key(sc)} in {where} "
            "(write one with `assay propose`)",
        )
    exp = load_expectations(path)
    if exp.key != run_key(sc):
        labels = ("benchmark", "suite", "model", "judge model")
        diffs = [
            f"{lab} {a!r} vs run {b!r}"
            for lab, a, b in zip(labels, exp.key, run_key(sc), strict=True)
            if a != b
        ]
        return GateResult(
            run=str(run.path),
            expectations=str(path),
            status="not-comparable",
            enforce=enforce,
            exit_code=3,
            reason=f"{path} is for another configuration: " + "; ".join(diffs),
        )
    checks = check_limits(measure(sc), exp.limits)
    unmeasured = unmeasured_cases(sc)
    skipped = [c.case_id for c in sc.cases if c.stability == "skipped"]
    missed = any(c.ok is False for c in checks)
    incomplete = any(c.ok is None for c in checks) or bool(unmeasured)
    status: Literal["met", "missed"] = "missed" if missed or incomplete else "met"
    reasons = []
    if missed:
        reasons.append(f"{sum(c.ok is False for c in checks)} limit(s) missed")
    if any(c.ok is None for c in checks):
        reasons.append(f"{sum(c.ok is None for c in checks)} limit(s) not measured")
    if unmeasured:
        reasons.append(f"{len(unmeasured)} case(s) not measured")
    if skipped and not reasons:
        reasons.append(f"all {len(checks)} limit(s) met; {len(skipped)} case(s) skipped")
    return GateResult(
        run=str(run.path),
        expectations=str(path),
        status=status,
        checks=checks,
        unmeasured_cases=unmeasured,
        skipped_cases=skipped,
        enforce=enforce,
        exit_code=2 if enforce and status == "missed" else 0,
        reason="; ".join(reasons) if reasons else f"all {len(checks)} limit(s) met",
    )


def _headroom(quantity: str, vals: Sequence[float], sc: Scorecard) -> float:
    """Widen the worst value seen by what one noisy run may add (issue 4's headroom rules).

    A scorecard metric is widened by its kind: a proportion by the binomial noise between two runs of its
    ``n`` items (at least one item), a continuous metric by a relative margin (its declared tolerance, the
    spread the runs showed, and at least +50% for times, +35% otherwise), a count by its declared
    tolerance and the spread the runs showed.
    """
    direction = _direction(quantity, sc)
    worst = min(vals) if direction == "higher" else max(vals)
    ncases = max(len(sc.cases), 1)
    if quantity == "passed":
        return max(worst - FLIP_CASES, 0.0)
    if quantity == "pass_rate":
        return max(worst - FLIP_CASES / ncases, 0.0)
    if quantity == "quality":
        return worst - QUALITY_HEADROOM
    if quantity in ("tokens", "cost_usd", "steps") or quantity.endswith(("_tokens", "_steps")):
        return worst * TOKENS_FACTOR
    if quantity == "wall_time_s":
        return worst * TIME_FACTOR
    mv = sc.summary.metrics.get(quantity)
    if mv is None or mv.kind is None:
        return worst
    spread = max(vals) - min(vals)
    sign = -1.0 if direction == "higher" else 1.0
    if mv.kind == "proportion":
        noise = binomial_tolerance(worst, mv.n, worst, mv.n, PROPOSE_ALPHA) if mv.n else 0.0
        return min(max(worst + sign * max(mv.tolerance, spread, noise), 0.0), 1.0)
    if mv.kind == "count":
        return worst + sign * max(mv.tolerance, spread)
    factor = (TIME_FACTOR if mv.unit in TIME_UNITS else TOKENS_FACTOR) - 1
    rel = max(mv.tolerance, factor, spread / abs(worst) if worst else 0.0)
    return worst * (1 + rel) if direction == "lower" else worst / (1 + rel)


def _direction(quantity: str, sc: Scorecard) -> Literal["higher", "lower"]:
    if quantity in ("passed", "pass_rate"):
        return "higher"
    if quantity in ("tokens", "cost_usd", "wall_time_s"):
        return "lower"
    mv = sc.summary.metrics.get(quantity)
    return mv.direction if mv is not None else "higher"


def propose(run_dirs: Sequence[Path | str], out: Path | str) -> Expectations:
    """Write limits every given run met, widened by the headroom for one noisy run; YAML or JSON by suffix."""
    if not run_dirs:
        raise ConfigError("propose needs at least one run directory")
    if Path(out).suffix not in _SUFFIXES:
        raise ConfigError("--out must end in .yaml, .yml or .json", path=str(out))
    runs = [load_run(p) for p in run_dirs]
    key = run_key(runs[0].scorecard)
    for r in runs[1:]:
        if run_key(r.scorecard) != key:
            raise NotComparableError(
                f"{r.path} is {run_key(r.scorecard)} but {runs[0].path} is {key}: "
                "expectations are per (benchmark, suite, model, judge model)"
            )
    measured = []
    for r in runs:
        commit = r.meta.git_commit if r.meta is not None and r.meta.git_commit else None
        commit = commit or (r.scorecard.commits[-1] if r.scorecard.commits else None)
        machine = r.meta.hostname if r.meta is not None else None
        measured.append(
            Measured(run_id=r.scorecard.run_id, commit=commit, machine=machine, values=measure(r.scorecard))
        )
    ref = runs[-1].scorecard
    shared = set.intersection(*(set(m.values) for m in measured))
    limits: dict[str, float] = {}
    for q in sorted(shared):
        vals = [m.values[q] for m in measured]
        if _direction(q, ref) == "higher":
            limits[f"min_{q}"] = math.floor(round(_headroom(q, vals, ref) * 1e4, 6)) / 1e4
        else:
            limits[f"max_{q}"] = math.ceil(round(_headroom(q, vals, ref) * 1e4, 6)) / 1e4
    exp = Expectations(
        benchmark=key[0], suite=key[1], model=key[2], judge_model=key[3], measured=measured, limits=limits
    )
    write_expectations(exp, Path(out))
    return exp


def write_expectations(exp: Expectations, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = exp.model_dump(mode="json")
    from assay.runs.rundir import write_artifact

    if path.suffix in (".yaml", ".yml"):
        write_artifact(path, yaml.safe_dump(data, sort_keys=False))
    elif path.suffix == ".json":
        write_artifact(path, json.dumps(data, indent=2) + "\n")
    else:
        raise ConfigError("--out must end in .yaml, .yml or .json", path=str(path))
