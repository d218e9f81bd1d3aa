"""The CI outputs of ``assay eval``, ``compare`` and ``gate``: ``--junit FILE`` and ``--summary FILE``.

``--summary`` defaults to ``$GITHUB_STEP_SUMMARY``, so under GitHub Actions every eval adds its job summary
and takes the CI verdict (a case that measured nothing fails the step: :func:`assay.ci._summary.ci_verdict`).
"""

from __future__ import annotations

from pathlib import Path

import click

from assay.ci._junit import REGRESSED_BUCKETS, gate_junit, run_junit, write_junit
from assay.ci._summary import append_summary, ci_verdict, job_summary
from assay.gate._compare import Comparison
from assay.runs._records import Scorecard

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


def regressions_of(comp: Comparison) -> dict[str, str]:
    return {c.case_id: c.reason or c.bucket for c in comp.cases if c.bucket in REGRESSED_BUCKETS}


def eval_outputs(
    run_dir: Path,
    card: Scorecard,
    code: int,
    *,
    stopped: bool,
    has_case_filter: bool,
    junit: Path | None,
    summary: Path | None,
) -> int:
    """Write the JUnit file and job summary of a finished eval; return the CI exit code."""
    if junit is None and summary is None:
        return code
    from assay.gate._compare import load_comparison
    from assay.runs._journal import latest_attempts, read_journal
    from assay.runs._rundir import JOURNAL, load_meta

    comp_path = run_dir / "comparison.json"
    comp = load_comparison(comp_path) if comp_path.is_file() else None
    attempts = list(latest_attempts(read_journal(run_dir / JOURNAL)).values())
    verdict = ci_verdict(code, load_meta(run_dir), attempts, stopped, has_case_filter)
    if junit is not None:
        regressions = regressions_of(comp) if comp is not None and comp.comparable else None
        write_junit(junit, run_junit(card, regressions))
    targeted = bool((card.extra.get("selection") or {}).get("by"))
    if summary is not None:
        append_summary(summary, job_summary(card, verdict, comp, targeted=targeted))
    if verdict.measured_nothing:
        click.echo(
            f"error: {len(verdict.unspent)} case(s) measured nothing (errored before the model spent a "
            f"token, or an outage stopped the run): {', '.join(verdict.unspent)}",
            err=True,
        )
        click.echo(f"re-run exactly those cases: {verdict.rerun}", err=True)
    return verdict.exit_code


def comparison_outputs(
    comp: Comparison, current: Scorecard, junit: Path | None, summary: Path | None
) -> None:
    """``assay compare``'s JUnit (a regression fails) and summary."""
    from assay.ci._summary import CiVerdict

    if junit is not None:
        regressions = regressions_of(comp) if comp.comparable else None
        write_junit(junit, run_junit(current, regressions))
    if summary is not None:
        append_summary(summary, job_summary(current, CiVerdict(comp.exit_code), comp))


def gate_outputs(result: object, junit: Path | None, summary: Path | None) -> None:
    """``assay gate``'s JUnit: one testcase per limit (a miss fails), unmeasured cases skipped."""
    from assay.gate._expect import GateResult

    assert isinstance(result, GateResult)
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
        state = "PASS" if result.exit_code == 0 else "FAIL"
        lines = [
            f"### assay gate {Path(result.run).name}",
            "",
            f"**{state}** (exit {result.exit_code}) · {result.status}",
        ]
        lines += ["", *(f"- {c.describe()}" for c in result.checks)]
        append_summary(summary, "\n".join(lines) + "\n")
