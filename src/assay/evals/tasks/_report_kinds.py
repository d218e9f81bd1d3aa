"""The report sections of the swebench and realfix suites of ``eval tasks`` (a toybox run has neither).

Each kind folds its attempts into rows (:func:`swebench_rows`, :func:`realfix_rows`) that the scorecard keeps
in ``extra["swebench"]`` / ``extra["realfix"]``, and renders them (:func:`swebench_section`,
:func:`realfix_section`). Nothing is decided here: the resolved rate is the scorecard's pass rate (a swebench
attempt passes exactly when its instance is resolved) with the same Wilson interval, a realfix grade is the
judge step's (the summary's rule, :func:`~assay.evals.tasks._report._judged_grade`), web use is what
:func:`~assay.evals.tasks._compliance.web_use` recorded, and diff sizes are :func:`patch_stat`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from assay.runs import Attempt, Scorecard

if TYPE_CHECKING:
    from assay.evals.tasks._judge import TasksJudgement

__all__ = [
    "PatchStat",
    "RealfixRow",
    "SwebenchRow",
    "SwebenchValidation",
    "patch_stat",
    "realfix_rows",
    "realfix_section",
    "swebench_rows",
    "swebench_section",
    "swebench_validation",
]

#: what the report says of the two graders (the grader is part of the suite version: compare refuses a mix)
GRADERS = {
    "local": "grader: local (a venv built from the swebench package's install and test specs)",
    "official": "grader: official (the SWE-bench harness, one Docker image per instance)",
    "ungraded": "grader: none yet (--no-evaluate): `assay eval tasks swebench RUN_DIR` grades the run",
}
NEVER_COMPARED = (
    "Local and official verdicts are never compared: the grader is part of the suite version, so "
    "`assay compare` refuses a pair of runs graded differently."
)


class PatchStat(BaseModel):
    """The size of a unified diff: files touched, lines added and removed."""

    files: int = 0
    added: int = 0
    removed: int = 0

    def text(self) -> str:
        return f"+{self.added}/-{self.removed} in {self.files} file{'s' * (self.files != 1)}"


def patch_stat(diff: str) -> PatchStat:
    """Files, added and removed lines of ``diff`` (``git diff`` output; a binary file counts as a file)."""
    stat = PatchStat()
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            stat.files += 1
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            stat.added += 1
        elif in_hunk and line.startswith("-"):
            stat.removed += 1
    return stat


def _findings(details: dict[str, Any]) -> list[str]:
    return [str(f.get("why", "")) for f in details.get("compliance") or [] if isinstance(f, dict)]


def _cell(text: str, width: int = 120) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def _web(findings: list[str]) -> str:
    return "none" if not findings else f"{len(findings)}: " + "; ".join(findings)


# ---------------------------------------------------------------------------------------------- swebench
class SwebenchRow(BaseModel):
    """One swebench attempt as the report shows it."""

    instance_id: str
    iteration: int = 0
    status: str
    resolved: bool | None = None
    patch_applied: bool | None = None
    fail_to_pass: list[int] | None = None
    pass_to_pass: list[int] | None = None
    #: why it was not graded (NOT_RUN, or ungraded), or why it failed before a grader ran
    reason: str = ""
    web_use: list[str] = []
    #: whether the grader was validated on the instance (gold resolves, empty does not); None: not asked
    validated: bool | None = None


class SwebenchValidation(BaseModel):
    """How many of a run's instances its grader was validated on (only those count)."""

    instances: int = 0
    validated: int = 0
    #: per instance not validated: why (not buildable here, or the grader is wrong on it)
    not_validated: dict[str, str] = {}
    #: instances never asked (ungraded, or stopped before the grader ran)
    not_asked: int = 0


def swebench_validation(attempts: Sequence[Attempt]) -> SwebenchValidation:
    """The validation count over ``attempts``' instances (an instance is validated when its attempts say so)."""
    seen: dict[str, bool | None] = {}
    why: dict[str, str] = {}
    for att in attempts:
        check = att.details.get("validation")
        state = check.get("validated") if isinstance(check, dict) else None
        if state is not None or att.case_id not in seen:
            seen[att.case_id] = state if state is not None else seen.get(att.case_id)
        if state is False:
            why[att.case_id] = str(check.get("reason") or att.details.get("reason") or "")  # type: ignore[union-attr]
    return SwebenchValidation(
        instances=len(seen),
        validated=sum(v is True for v in seen.values()),
        not_validated={k: why.get(k, "") for k, v in sorted(seen.items()) if v is False},
        not_asked=sum(v is None for v in seen.values()),
    )


def swebench_rows(attempts: Sequence[Attempt]) -> list[SwebenchRow]:
    from assay.evals.tasks._swebench_grade import Verdict

    rows = []
    for att in sorted(attempts, key=lambda a: (a.case_id, a.iteration)):
        d = att.details
        grade = d.get("grade") if isinstance(d.get("grade"), dict) else None
        verdict = None if grade is None else Verdict(**grade)
        ran = verdict is not None and verdict.status != "not_run"  # NOT_RUN: no test counts to show
        rows.append(
            SwebenchRow(
                instance_id=att.case_id,
                iteration=att.iteration,
                status=att.status.value,
                resolved=verdict.resolved if ran else None,  # type: ignore[union-attr]
                patch_applied=None if verdict is None else verdict.patch_applied,
                fail_to_pass=verdict.fail_to_pass if ran else None,  # type: ignore[union-attr]
                pass_to_pass=verdict.pass_to_pass if ran else None,  # type: ignore[union-attr]
                reason="" if att.status.value == "PASS" else str(d.get("reason") or att.skip_reason or ""),
                web_use=_findings(d),
                validated=(d.get("validation") or {}).get("validated"),
            )
        )
    return rows


def _yes(x: bool | None) -> str:
    return "-" if x is None else ("yes" if x else "no")


def _counts(x: list[int] | None) -> str:
    return "-" if not x else f"{x[0]}/{x[1]}"


def swebench_section(card: Scorecard) -> str:
    from assay.report.markdown import pct

    rows = [SwebenchRow.model_validate(r) for r in card.extra.get("swebench") or []]
    grader = str(card.config.extra.get("grader") or "ungraded")
    s = card.summary
    lines = ["## SWE-bench", "", f"- {GRADERS.get(grader, f'grader: {grader}')}", f"- {NEVER_COMPARED}"]
    if s.measured:
        lines.append(
            f"- resolved: **{pct(s.pass_rate)}** of {s.measured} measured attempts (95% Wilson interval "
            f"{pct(s.pass_rate_low)} – {pct(s.pass_rate_high)}); an empty diff, a broken agent or a timeout "
            "is unresolved"
        )
    else:
        lines.append("- resolved: nothing graded yet")
    check = SwebenchValidation.model_validate(card.extra.get("swebench_validation") or {})
    if check.instances:
        lines.append(
            f"- grader validated on **{check.validated} of {check.instances}** instances (gold resolves, empty "
            "does not, here; only those count)"
            + (f"; {check.not_asked} not asked (ungraded)" if check.not_asked else "")
        )
        lines += [f"  - not validated: {iid}: {_cell(why, 200)}" for iid, why in check.not_validated.items()]
    not_run = s.counts.get("NOT_RUN", 0)
    ungraded = s.counts.get("SKIPPED", 0)
    if not_run or ungraded:
        lines.append(
            f"- not counted: {not_run} NOT_RUN (not validated, or not buildable here), {ungraded} ungraded"
        )
    lines += [
        "",
        "| instance | pass | status | resolved | patch applied | FAIL_TO_PASS | PASS_TO_PASS | web use | reason |",
        "|---|---:|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.instance_id} | {r.iteration} | {r.status} | {_yes(r.resolved)} | {_yes(r.patch_applied)} | "
            f"{_counts(r.fail_to_pass)} | {_counts(r.pass_to_pass)} | {_cell(_web(r.web_use))} | "
            f"{_cell(r.reason) or '-'} |"
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- realfix
class RealfixRow(BaseModel):
    """One realfix attempt as the report shows it."""

    pin: str
    iteration: int = 0
    status: str
    #: the judge's grade (None: not judged yet, or failed before the judge)
    quality: float | None = None
    quality_ok: bool | None = None
    forbid_internet: bool = False
    web_use: list[str] = []
    diff: PatchStat | None = None
    upstream: PatchStat | None = None
    reason: str = ""


def realfix_rows(
    attempts: Sequence[Attempt], judgement: TasksJudgement | None, forbid: dict[str, bool]
) -> list[RealfixRow]:
    """The rows of ``attempts``; ``forbid`` says which pins forbid the internet."""
    from assay.evals.tasks._report import _judged_grade

    rows = []
    for att in sorted(attempts, key=lambda a: (a.case_id, a.iteration)):
        d = att.details
        grade = _judged_grade(att, judgement)
        judged = grade is not None and grade.judged
        diff = d.get("diff_stat") or (patch_stat(d["diff"]).model_dump() if d.get("diff") else None)
        rows.append(
            RealfixRow(
                pin=att.case_id,
                iteration=att.iteration,
                status=att.status.value,
                quality=grade.quality if judged else None,  # type: ignore[union-attr]
                quality_ok=grade.quality_ok if judged else None,  # type: ignore[union-attr]
                forbid_internet=forbid.get(att.case_id, False),
                web_use=_findings(d),
                diff=diff,
                upstream=d.get("reference_stat"),
                reason="" if att.status.value == "PASS" else str(d.get("reason") or att.skip_reason or ""),
            )
        )
    return rows


def realfix_section(card: Scorecard) -> str:
    rows = [RealfixRow.model_validate(r) for r in card.extra.get("realfix") or []]
    lines = [
        "## Real fixes",
        "",
        "- the judge grades each diff against the upstream fix (one correct answer, not the only one); "
        "a pin passes when its grade passes the quality checks and, where the pin forbids the internet, "
        "it used no web",
        "",
        "| pin | pass | status | quality (1-5) | quality ok | web use | diff | upstream diff | reason |",
        "|---|---:|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        quality = "-" if r.quality is None else f"{r.quality:.2f}"
        web = _web(r.web_use).replace(":", " (forbidden):", 1) if r.forbid_internet else _web(r.web_use)
        lines.append(
            f"| {r.pin} | {r.iteration} | {r.status} | {quality} | {_yes(r.quality_ok)} | {_cell(web)} | "
            f"{r.diff.text() if r.diff else '-'} | "
            f"{r.upstream.text() if r.upstream else '- (not judged yet)'} | {_cell(r.reason) or '-'} |"
        )
    return "\n".join(lines) + "\n"
