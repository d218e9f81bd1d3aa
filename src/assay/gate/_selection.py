"""A targeted run (``--scenario``, ``--category``, ``--tier``) is held against the same cases of its baseline.

The run's scorecard says what it selected in ``extra["selection"]`` (``selected``: case ids, ``of``: the suite's
size, ``by``: the flags). The baseline is cut to those cases, and its per-case metrics are folded again over them,
so the comparison judges only the selected cases; the rest are listed as not run, never as missing.
"""

from __future__ import annotations

from typing import Any

from assay.runs import MetricSpec, Scorecard

__all__ = ["restrict_to_selection", "selection_of"]


def selection_of(card: Scorecard) -> list[str] | None:
    """The case ids a targeted run selected, or None for a run of its whole suite."""
    sel: Any = card.extra.get("selection")
    if not isinstance(sel, dict) or not isinstance(sel.get("selected"), list):
        return None
    return [str(x) for x in sel["selected"]]


def restrict_to_selection(base: Scorecard, selected: list[str]) -> tuple[Scorecard, list[str], list[str]]:
    """``base`` cut to ``selected``; the baseline case ids left out; the run-level metrics dropped.

    A run-level metric (``source="run"``) was computed over every case of the baseline and cannot be cut, so
    it is not compared."""
    from assay.stats.folding import metric_summary

    keep = set(selected)
    cases = [c for c in base.cases if c.case_id in keep]
    left_out = [c.case_id for c in base.cases if c.case_id not in keep]
    metrics = base.summary.metrics
    specs = {
        name: MetricSpec(
            name=name,
            kind=mv.kind,
            direction=mv.direction,
            tolerance=mv.tolerance,
            gated=mv.gated,
            unit=mv.unit,
        )
        for name, mv in metrics.items()
        if mv.kind is not None and mv.source == "cases"
    }
    per_case = metric_summary(cases, specs, seed=0)
    folded = {name: mv for name, mv in per_case.items() if name in specs}
    dropped = [name for name, mv in metrics.items() if mv.source == "run"]
    summary = base.summary.model_copy(update={"metrics": folded})
    return base.model_copy(update={"cases": cases, "summary": summary}), left_out, dropped
