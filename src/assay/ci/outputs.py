"""The CI outputs of ``assay eval``, ``compare`` and ``gate``: ``--junit FILE`` and ``--summary FILE``.

``--summary`` defaults to ``$GITHUB_STEP_SUMMARY``, so under GitHub Actions every eval adds its job summary.
Each output renders the scorecard and the :class:`~assay.gate.Verdict` the run already holds (whose exit code
``gate.hold`` decided, a case that measured nothing failing it under CI outputs); nothing is read back.
"""

from __future__ import annotations

from pathlib import Path

import click

from assay.ci._junit import REGRESSED_BUCKETS, gate_junit, run_junit, write_junit
from assay.ci._summary import append_summary, job_summary, rerun_command
from assay.gate import Comparison, Verdict
from assay.runs import RunMeta, Scorecard

__all__ = ["JUNIT_OPTION", "SUMMARY_OPTION", "comparison_outputs", "eval_outputs", "gate_outputs"]

JUNIT_OPTION = click.Option(
    ["--junit"],
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write JUnit XML here: one testcase per case (regressions fail, INFRA_ERROR errors, skipped say why).",
)
SUMMARY_OPTION = click.Option(
    ["--summary"],
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    envvar="GITHUB_STEP_SUMMARY",
    help="Append a markdown job summary here (default $GITHUB_STEP_SUMMARY); a case that measured "
    "nothing then fails the run whatever --enforce says.",
)


def regressions_of(comp: Comparison | None) -> dict[str, str] | None:
    """Each regressed case and why, from a comparable comparison (None: judge cases by their own attempts)."""
    if comp is None or not comp.comparable:
        return None
    return {c.case_id: c.reason or c.bucket for c in comp.cases if c.bucket in REGRESSED_BUCKETS}


def notes_of(comp: Comparison | None) -> dict[str, str]:
    """Each case whose time grew with no measured noise floor saying so, and its times (shown, not a failure)."""
    if comp is None or not comp.comparable:
        return {}
    return {c.case_id: c.reason for c in comp.cases if c.bucket == "slower"}


def eval_outputs(
    card: Scorecard,
    verdict: Verdict,
    meta: RunMeta | None,
    *,
    has_case_filter: bool,
    junit: Path | None,
    summary: Path | None,
) -> None:
    """Write the JUnit file and job summary of a finished eval; say which cases measured nothing."""
    if junit is None and summary is None:
        return
    rerun = rerun_command(meta, verdict.unspent, has_case_filter) if verdict.unspent and meta else None
    if junit is not None:
        comp = verdict.comparison
        write_junit(junit, run_junit(card, regressions_of(comp), notes_of(comp)))
    targeted = bool((card.extra.get("selection") or {}).get("by"))
    if summary is not None:
        append_summary(summary, job_summary(card, verdict, rerun=rerun, targeted=targeted))
    if verdict.unspent:
        click.echo(
            f"error: {len(verdict.unspent)} case(s) measured nothing (errored before the model spent a "
            f"token, or an outage stopped the run): {', '.join(verdict.unspent)}",
            err=True,
        )
        click.echo(f"re-run exactly those cases: {rerun}", err=True)


def comparison_outputs(
    verdict: Verdict, current: Scorecard, junit: Path | None, summary: Path | None
) -> None:
    """``assay compare``'s JUnit (a regression fails) and summary."""
    if junit is not None:
        comp = verdict.comparison
        write_junit(junit, run_junit(current, regressions_of(comp), notes_of(comp)))
    if summary is not None:
        append_summary(summary, job_summary(current, verdict))


def gate_outputs(verdict: Verdict, junit: Path | None, summary: Path | None) -> None:
    """``assay gate``'s JUnit: one testcase per limit (a miss fails), unmeasured cases skipped."""
    result = verdict.expectations
    assert result is not None, "gate_outputs needs a verdict with expectations"
    checks = []
    for c in result.checks:
        if c.ok is None:
            outcome = "failure" if result.enforce else "skipped"
        else:
            outcome = "passed" if c.ok else "failure"
        checks.append((c.name, outcome, "" if c.ok else c.describe()))
    if junit is not None:
        write_junit(junit, gate_junit(Path(result.run).name, checks, result.unmeasured_cases))  # type: ignore[arg-type]
    if summary is not None:
        state = "PASS" if verdict.exit_code == 0 else "FAIL"
        lines = [
            f"### assay gate {Path(result.run).name}",
            "",
            f"**{state}** (exit {verdict.exit_code}) · {result.status}",
        ]
        lines += ["", *(f"- {c.describe()}" for c in result.checks)]
        append_summary(summary, "\n".join(lines) + "\n")
