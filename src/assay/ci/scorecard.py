"""``assay scorecard``: the benchmarks a release is measured on, folded into one weighted aggregate.

The weights file (JSON or YAML) maps each benchmark (as its scorecards name it: ``agent``, ``retrieval-rag``)
to a weight, or to ``{"weight": w, "metric": NAME}`` for a proportion metric other than the pass rate::

    {"agent": 0.4, "memory": 0.2, "retrieval-rag": {"weight": 0.2, "metric": "sdk_mrr"}, "code": 0.2}

Each row carries its value, 95% interval, model and commits. The aggregate is the weighted mean; its interval
combines the rows' as independent normal errors (half-width / 1.96 each). ``--compare PREVIOUS`` fails (exit 2)
on an aggregate drop beyond the two aggregates' combined noise, and says which rows dropped beyond theirs;
different benchmarks or weights are not comparable (exit 3).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from assay.errors import ConfigError
from assay.runs import Scorecard

__all__ = ["ReleaseRow", "ReleaseScorecard", "compare_release", "load_weights", "release_scorecard"]

SCHEMA = 1
Z = 1.96


class ReleaseRow(BaseModel):
    benchmark: str
    metric: str
    weight: float
    value: float
    low: float
    high: float
    run_id: str
    model: str | None
    commits: list[str] = Field(default_factory=list)

    @property
    def se(self) -> float:
        return (self.high - self.low) / (2 * Z)


class ReleaseScorecard(BaseModel):
    schema_version: int = SCHEMA
    created_at: datetime
    aggregate: float
    low: float
    high: float
    se: float
    rows: list[ReleaseRow]
    compared_with: str | None = None
    verdict: str = ""
    drops: list[str] = Field(default_factory=list)
    exit_code: int = 0


def load_weights(path: Path) -> dict[str, tuple[float, str]]:
    """benchmark -> (weight, metric)."""
    try:
        text = path.read_text(encoding="utf-8")
        import yaml

        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the weights ({exc})", path=str(path)) from None
    if not isinstance(raw, dict) or not raw:
        raise ConfigError("expected a mapping of benchmark -> weight", path=str(path))
    out: dict[str, tuple[float, str]] = {}
    for name, spec in raw.items():
        weight, metric = (
            (spec.get("weight"), spec.get("metric", "pass_rate"))
            if isinstance(spec, dict)
            else (spec, "pass_rate")
        )
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
            raise ConfigError(f"{name}: the weight must be a positive number", path=str(path))
        out[str(name)] = (float(weight), str(metric))
    return out


def _row(card: Scorecard, weight: float, metric: str) -> ReleaseRow:
    s = card.summary
    if metric == "pass_rate":
        value, low, high = s.pass_rate, s.pass_rate_low, s.pass_rate_high
    else:
        m = s.metrics.get(metric)
        if m is None or m.kind != "proportion":
            raise ConfigError(
                f"{card.benchmark}: --weights names {metric!r}, which is no proportion metric of run {card.run_id}"
            )
        value, low, high = m.value, m.low, m.high
    if value is None or low is None or high is None:
        raise ConfigError(f"{card.run_id}: {metric} was not measured (no value and interval)")
    return ReleaseRow(
        benchmark=card.benchmark,
        metric=metric,
        weight=weight,
        value=value,
        low=low,
        high=high,
        run_id=card.run_id,
        model=card.config.model,
        commits=card.commits,
    )


def release_scorecard(cards: list[Scorecard], weights: dict[str, tuple[float, str]]) -> ReleaseScorecard:
    by = {}
    for card in cards:
        if card.benchmark in by:
            raise ConfigError(
                f"two runs of {card.benchmark} ({by[card.benchmark].run_id}, {card.run_id}): give one"
            )
        by[card.benchmark] = card
    missing = sorted(set(weights) - set(by))
    unweighted = sorted(set(by) - set(weights))
    if missing or unweighted:
        raise ConfigError(
            "--weights and the runs disagree: "
            + "; ".join(
                x
                for x in (
                    missing and f"no run of {', '.join(missing)}",
                    unweighted and f"no weight for {', '.join(unweighted)}",
                )
                if x
            )
        )
    rows = [_row(by[name], w, metric) for name, (w, metric) in weights.items()]
    total = sum(r.weight for r in rows)
    agg = sum(r.weight * r.value for r in rows) / total
    se = math.sqrt(sum((r.weight / total) ** 2 * r.se**2 for r in rows))
    return ReleaseScorecard(
        created_at=datetime.now(UTC),
        aggregate=agg,
        low=max(0.0, agg - Z * se),
        high=min(1.0, agg + Z * se),
        se=se,
        rows=rows,
    )


def load_release(path: Path) -> ReleaseScorecard:
    file = path / "release_scorecard.json" if path.is_dir() else path
    try:
        return ReleaseScorecard.model_validate(json.loads(file.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(f"--compare: not a release scorecard ({exc})", path=str(file)) from None


def compare_release(current: ReleaseScorecard, previous: ReleaseScorecard, where: str) -> ReleaseScorecard:
    """``current`` with its verdict against ``previous``."""
    current.compared_with = where
    key = [(r.benchmark, r.metric, r.weight) for r in current.rows]
    if key != [(r.benchmark, r.metric, r.weight) for r in previous.rows]:
        current.verdict, current.exit_code = "not comparable: the benchmarks, metrics or weights differ", 3
        return current
    prev_rows = {r.benchmark: r for r in previous.rows}
    for row in current.rows:
        old = prev_rows[row.benchmark]
        noise = Z * math.hypot(row.se, old.se)
        if old.value - row.value > noise:
            current.drops.append(f"{row.benchmark}: {old.value:.3f} -> {row.value:.3f} (noise ±{noise:.3f})")
    drop, noise = previous.aggregate - current.aggregate, Z * math.hypot(current.se, previous.se)
    if drop > noise:
        current.verdict = f"DROP: {previous.aggregate:.3f} -> {current.aggregate:.3f}, beyond the combined noise ±{noise:.3f}"
        current.exit_code = 2
    else:
        current.verdict = (
            f"no drop beyond noise: {previous.aggregate:.3f} -> {current.aggregate:.3f} (noise ±{noise:.3f})"
        )
    return current


def scorecard_markdown(card: ReleaseScorecard) -> str:
    lines = ["# Release scorecard", ""]
    lines.append(f"**Aggregate {card.aggregate:.3f}** (95% CI {card.low:.3f}–{card.high:.3f})")
    if card.verdict:
        lines += ["", f"**{card.verdict}** (exit {card.exit_code}) against `{card.compared_with}`"]
        lines += [f"- {d}" for d in card.drops]
    lines += [
        "",
        "| benchmark | metric | weight | value | 95% CI | model | commit | run |",
        "|---|---|---:|---:|---|---|---|---|",
    ]
    for r in card.rows:
        commit = ", ".join(c[:12] for c in r.commits) or "-"
        lines.append(
            f"| {r.benchmark} | {r.metric} | {r.weight:g} | {r.value:.3f} | {r.low:.3f}–{r.high:.3f} | "
            f"{r.model or '-'} | {commit} | {r.run_id} |"
        )
    return "\n".join(lines) + "\n"


def write_release(card: ReleaseScorecard, out: Path) -> list[Path]:
    from assay.runs.rundir import write_artifact, write_model

    out.mkdir(parents=True, exist_ok=True)
    write_model(out / "release_scorecard.json", card)
    write_artifact(out / "SCORECARD.md", scorecard_markdown(card))
    return [out / "release_scorecard.json", out / "SCORECARD.md"]
