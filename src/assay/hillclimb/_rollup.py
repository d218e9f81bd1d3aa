"""Root causes of what still fails: every failing attempt's failing dimensions, grouped by category.

A failing dimension is one of: a judged dimension scored below the rubric's ``MIN_CORE`` on some turn
(``correctness``, ``tool_use``, ...), a zero rule the judge found (``zero:fabricated_number``), a code check
that failed (``check:expected_tool``), or, for an attempt that never reached a verdict, its status
(``status:ERROR``, ``status:TIMEOUT``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from assay.evals.agent import MIN_CORE
from assay.runs import Attempt, Status, latest_attempts, read_journal

__all__ = ["FAILING", "failing_attempts", "failing_dimensions", "rollup"]

#: statuses that count as a failure of the agent (INFRA_ERROR / NOT_RUN / SKIPPED are not the agent's)
FAILING = (Status.FAIL, Status.ERROR, Status.TIMEOUT)


def failing_dimensions(attempt: Attempt) -> list[str]:
    d = attempt.details
    dims: list[str] = []
    for t in (d.get("judgement") or {}).get("turns") or []:
        if t.get("passed"):
            continue
        dims += [f"zero:{z}" for z in t.get("zero_rules") or []]
        dims += [k for k, v in (t.get("scores") or {}).items() if v is not None and v < MIN_CORE]
    dims += [f"check:{c.get('name')}" for c in d.get("checks") or [] if not c.get("passed")]
    if not dims and attempt.status != Status.FAIL:
        dims.append(f"status:{attempt.status.value}")
    if not dims:
        dims.append("judged score below the pass threshold")
    return sorted(set(dims))


def failing_attempts(run_dir: Path | str) -> list[Attempt]:
    """The latest attempt of each (case, iteration) of a run that failed, in case order."""
    attempts = latest_attempts(read_journal(Path(run_dir) / "results.jsonl")).values()
    return sorted((a for a in attempts if a.status in FAILING), key=lambda a: (a.case_id, a.iteration))


def rollup(run_dirs: Iterable[Path | str]) -> dict[str, dict[str, list[str]]]:
    """category -> failing dimension -> the scenario ids failing on it (each id once), most common first."""
    groups: dict[str, dict[str, set[str]]] = {}
    for run_dir in run_dirs:
        for a in failing_attempts(run_dir):
            for dim in failing_dimensions(a):
                groups.setdefault(a.category, {}).setdefault(dim, set()).add(a.case_id)
    out: dict[str, dict[str, list[str]]] = {}
    for cat in sorted(groups):
        dims = groups[cat]
        out[cat] = {k: sorted(dims[k]) for k in sorted(dims, key=lambda k: (-len(dims[k]), k))}
    return out
