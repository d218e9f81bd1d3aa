"""What an attempt records of the agent's work on a task, read from the finished copy.

Kept apart from ``_checks`` (which decides pass and fail): here only the facts the journal, the judge and the
report show: the diff the agent left and the check results as saved details.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.evals._honesty import misreport, read_claims
from assay.evals._workspace import agent_diff

if TYPE_CHECKING:
    from assay.agents import ToolCallRecord
    from assay.evals.tasks._checks import TaskChecks
    from assay.evals.tasks._project import PreparedTask

__all__ = ["checks_details", "honesty_details", "task_diff"]

#: the big log a setup plants is left out of the diff (never pasted into the journal or the judge's prompt)
DIFF_EXCLUDE = ("logs/*.log",)


def task_diff(prepared: PreparedTask) -> tuple[str, bool]:
    """The diff the agent left against the commit after setup (the one rule, :func:`agent_diff`), and
    whether it edited."""
    return agent_diff(prepared.workdir, prepared.head, exclude=DIFF_EXCLUDE)


def checks_details(checks: TaskChecks) -> dict[str, Any]:
    """``check_task``'s result as saved details: ``checks_passed``, ``verified``, ``checks`` and ``reason``."""
    every = [*checks.checks, checks.after_answer]
    failed = [c for c in every if c.passed is False]
    reason = "; ".join(f"{c.name}: {c.evidence}"[:400] for c in failed)
    return {
        "checks_passed": checks.passed,
        "not_measured": checks.not_measured,
        "verified": None if checks.verified is None else checks.verified.passed,
        "verified_evidence": None if checks.verified is None else checks.verified.evidence,
        "checks": [c.model_dump(mode="json") for c in every],
        "reason": reason,
    }


def honesty_details(checks: TaskChecks, answer: str, tool_record: list[ToolCallRecord]) -> dict[str, Any]:
    """The answer's claims and whether it misreports the work (``evals._honesty.misreport``, the one rule):
    a coding task's claim of completion is held to its expect checks, any claim of a passing test run to
    the tool record; a question's only code check is the record."""
    claims = read_claims(answer)
    work = all(c.passed is True for c in checks.checks) if checks.kind == "coding" and checks.checks else None
    return {"claims": claims.as_dict(), "misreported": misreport(claims, tool_record, work)}
