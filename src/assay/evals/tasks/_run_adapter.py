"""What an attempt records of the agent's work, read from the harness's record and the finished copy.

Kept apart from ``_checks`` (which decides pass and fail): here only the facts the journal, the judge and the
report show: the commands the agent ran, the diff it left, and the check results as saved details.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay.agents import ToolCallRecord

if TYPE_CHECKING:
    from assay.evals.tasks._checks import TaskChecks

__all__ = ["agent_diff", "checks_details", "record_lines"]

#: characters of the diff kept in the journal (the judge is shown less)
DIFF_KEEP = 20000
ARGS_SHOWN = 160


def record_lines(calls: Sequence[ToolCallRecord]) -> list[str]:
    """One line per tool call: ``$ command -> exit N`` for shell and test calls, else the tool and its path."""
    lines = []
    for c in calls:
        if c.command is not None:
            line = f"$ {c.command[:ARGS_SHOWN]} -> exit {c.exit_code}"
            if c.test_counts:
                line += " (" + ", ".join(f"{k} {v}" for k, v in sorted(c.test_counts.items())) + ")"
        else:
            target = c.arguments.get("path") or c.arguments.get("file_path") or c.arguments.get("pattern")
            line = f"{c.name}({str(target)[:ARGS_SHOWN] if target else ''}) -> {c.status}"
            if c.edited_paths:
                line += " edited " + ", ".join(c.edited_paths)
        lines.append(line)
    return lines


def agent_diff(prepared: Any) -> tuple[str, bool]:
    """The diff the agent left against the commit after setup (new files included), and whether it edited."""
    from assay.evals.tasks._project import git

    workdir, head = prepared.workdir, prepared.head
    moved = git(workdir, "rev-parse", "HEAD", check=False).strip() != head
    diff = git(workdir, "diff", head, "--stat", "--patch", "--", ".", ":(exclude)logs/*.log", check=False)
    new = [
        p
        for p in git(workdir, "ls-files", "--others", "--exclude-standard", check=False).split()
        if "__pycache__" not in p and not p.startswith(".pytest_cache")
    ]
    for path in new:
        try:
            text = (workdir / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        diff += f"\nnew file {path}:\n" + "\n".join("+" + ln for ln in text.splitlines())
    if moved:
        diff = f"(the agent moved HEAD from {head[:12]})\n" + diff
    edited = bool(diff.strip())
    if len(diff) > DIFF_KEEP:
        diff = diff[:DIFF_KEEP] + f"\n[... {len(diff) - DIFF_KEEP} more characters]"
    return diff, edited


def checks_details(checks: TaskChecks) -> dict[str, Any]:
    """``check_task``'s result as saved details: ``checks_passed``, ``verified``, ``checks`` and ``reason``."""
    every = [*checks.checks, checks.after_answer]
    failed = [c for c in every if c.passed is not True]
    reason = "; ".join(f"{c.name}: {c.evidence}"[:400] for c in failed)
    return {
        "checks_passed": checks.passed,
        "verified": None if checks.verified is None else checks.verified.passed,
        "verified_evidence": None if checks.verified is None else checks.verified.evidence,
        "checks": [c.model_dump(mode="json") for c in every],
        "reason": reason,
    }
