"""``assay trend``: a backlog metric week after week, carried forward in ``trend.json``.

Each run is one point: its scorecard's run-level value of ``--metric`` (``pass_rate``, or any metric of the
summary) and each case's pass rate. A previous ``trend.json`` (last week's artifact) brings its points along;
a run already in it is not counted twice. A trend follows one benchmark and suite (runs of another are
refused). A case whose pass rate met ``--target`` in each of the last
``window`` points passes reliably: moving it out of the backlog is suggested, never applied.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from assay.errors import ConfigError
from assay.runs import Scorecard

__all__ = ["Trend", "TrendPoint", "build_trend", "trend_plot"]

TREND_SCHEMA = 1
#: points a case must have met the target in, in a row, before a move is suggested
WINDOW = 3


class TrendPoint(BaseModel):
    run_id: str
    at: datetime
    commits: list[str] = Field(default_factory=list)
    model: str | None = None
    value: float | None
    cases: dict[str, float | None] = Field(default_factory=dict)


class Trend(BaseModel):
    schema_version: int = TREND_SCHEMA
    #: ``benchmark · suite`` of every point: a trend follows one of them
    series: str = ""
    metric: str
    target: float
    window: int = WINDOW
    points: list[TrendPoint] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)


def _value(card: Scorecard, metric: str) -> float | None:
    if metric == "pass_rate":
        return card.summary.pass_rate
    if metric not in card.summary.metrics:
        known = ", ".join(["pass_rate", *card.summary.metrics])
        raise ConfigError(f"--metric {metric!r}: not in run {card.run_id} (it has {known})")
    return card.summary.metrics[metric].value


def _point(card: Scorecard, metric: str) -> TrendPoint:
    return TrendPoint(
        run_id=card.run_id,
        at=card.created_at,
        commits=card.commits,
        model=card.config.model,
        value=_value(card, metric),
        cases={c.case_id: c.pass_rate for c in card.cases},
    )


def load_previous(path: Path, metric: str) -> Trend:
    try:
        trend = Trend.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(f"not a trend.json written by `assay trend` ({exc})", path=str(path)) from None
    if trend.metric != metric:
        raise ConfigError(f"tracks --metric {trend.metric}, not {metric}", path=str(path))
    return trend


def _suggestions(
    points: list[TrendPoint], target: float, window: int, imported_from: str | None = None
) -> list[str]:
    """Items that met the target in each of the last ``window`` runs; an imported run's items live in the
    other tool's task (``imported_from``), not in assay's tiers file."""
    where = f"{imported_from}'s task" if imported_from else "eval/ci_tiers.json"
    recent = points[-window:]
    if len(recent) < window:
        return []
    out = []
    for case in sorted(recent[-1].cases):
        rates = [p.cases.get(case) for p in recent]
        if all(r is not None and r >= target for r in rates):
            shown = ", ".join(f"{r:.0%}" for r in rates if r is not None)
            out.append(
                f"{case}: met the target {target:.0%} in each of the last {window} runs ({shown}); "
                f"move it out of the backlog (edit {where})"
            )
    return out


def build_trend(
    cards: list[Scorecard], metric: str, target: float, previous: Trend | None = None, window: int = WINDOW
) -> Trend:
    """Earlier points (``previous``) plus one per scorecard, oldest first, with the move suggestions."""
    if not 0 <= target <= 1 and metric == "pass_rate":
        raise ConfigError(f"--target {target}: a pass rate target is between 0 and 1")
    series = {f"{c.benchmark} · {c.suite}" for c in cards} | (
        {previous.series} if previous and previous.series else set()
    )
    if len(series) > 1:
        raise ConfigError(
            f"a trend follows one benchmark and suite; these runs are of {', '.join(sorted(series))}"
        )
    points = {p.run_id: p for p in (previous.points if previous else [])}
    for card in cards:
        points[card.run_id] = _point(card, metric)
    ordered = sorted(points.values(), key=lambda p: p.at)
    imported = next((str(t) for c in cards if (t := c.config.extra.get("imported_from"))), None)
    return Trend(
        series=next(iter(series), ""),
        metric=metric,
        target=target,
        window=window,
        points=ordered,
        suggestions=_suggestions(ordered, target, window, imported),
    )


def trend_plot(trend: Trend) -> bytes:
    """The metric per run against the target line, as PNG bytes."""
    from assay.report.plotting import finish, subplots

    fig, ax = subplots()
    xs = [p.at for p in trend.points]
    ys = [p.value if p.value is not None else float("nan") for p in trend.points]
    ax.plot(xs, ys, marker="o", label=trend.metric)
    ax.axhline(trend.target, linestyle="--", color="grey", label=f"target {trend.target:g}")
    ax.set_ylabel(trend.metric)
    ax.legend(loc="best")
    fig.autofmt_xdate()
    return finish(fig, "trend.png", f"{trend.metric} per run").png


def write_trend(trend: Trend, out: Path) -> list[Path]:
    from assay.runs.rundir import write_model

    out.mkdir(parents=True, exist_ok=True)
    write_model(out / "trend.json", trend)
    (out / "trend.png").write_bytes(trend_plot(trend))
    return [out / "trend.json", out / "trend.png"]
