"""The verdict of one run (``verdict.json``) and the one rule that turns its findings into an exit code.

Exit codes (DESIGN.md): 0 ok, 1 a usage error (a baseline that could not be saved), 2 a regression, a missed
expectation under ``--enforce`` or (with ``--require-complete``) an unmeasured case, 3 not comparable or a
run stopped by an outage. Each part (the comparison, the expectations, completeness, a stop, cases that
measured nothing under CI outputs) gives one :class:`Finding`; :func:`decide` takes the worst.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from assay.errors import ExitCode
from assay.runs import Scorecard

from ._complete import require_complete_code, unmeasured_cases
from ._expect import GateResult
from .comparison import Comparison

VERDICT_SCHEMA_VERSION = 1
VERDICT = "verdict.json"

__all__ = ["VERDICT", "Finding", "GateOptions", "Verdict", "decide", "load_verdict", "verdict_of"]


@dataclass(frozen=True)
class GateOptions:
    """What a run is held to: the eval command's --compare (with --allow-subject-change), --noise,
    --save-baseline, --force, --require-complete, --expect and --enforce, whether CI outputs
    (--junit/--summary) were asked for, and the change --detect asks the report about."""

    compare: Path | None = None
    noise: Path | None = None
    save_baseline: Path | None = None
    require_complete: bool = False
    force: bool = False
    expect: Path | None = None
    enforce: bool = False
    #: CI outputs were asked for: a case that measured nothing then fails the run whatever --enforce says
    fail_unspent: bool = False
    #: --allow-subject-change: --compare holds a run of another subject model or subject case by case
    allow_subject_change: bool = False
    #: --detect: a change of a proportion the user wants to see; the report says how many items it needs
    detect: float | None = None

    @property
    def gated(self) -> bool:
        """Whether a comparison, a baseline or expectations were asked for (only then is an expectations
        file looked up by the run's key)."""
        return any((self.compare, self.save_baseline, self.expect, self.enforce))


@dataclass(frozen=True)
class Finding:
    """One part of a verdict: its exit code and why, in words."""

    code: int
    reason: str


def decide(findings: Sequence[Finding]) -> Finding:
    """The one exit-code rule: the worst finding wins; its reason names every finding with that code or a
    lesser nonzero one, worst first. No failing finding: exit 0, with the findings' own words."""
    failing = sorted((f for f in findings if f.code), key=lambda f: -f.code)
    if failing:
        return Finding(failing[0].code, "; ".join(f.reason for f in failing))
    said = [f.reason for f in findings if f.reason]
    return Finding(int(ExitCode.OK), "; ".join(said) if said else "ok: nothing compared or gated")


class Verdict(BaseModel):
    """``verdict.json``: what :func:`assay.gate.hold` decided about one run, and why."""

    schema_version: int = VERDICT_SCHEMA_VERSION
    run_id: str
    exit_code: int
    #: the exit code's reason, in words
    reason: str
    comparison: Comparison | None = None
    expectations: GateResult | None = None
    require_complete: bool = False
    #: every attempt reached a final status
    complete: bool = True
    #: cases without a measured attempt (a case skipped with a reason is not one)
    unmeasured: list[str] = Field(default_factory=list)
    #: cases that measured nothing (errored before a model call, or NOT_RUN after a stop): fail under CI outputs
    unspent: list[str] = Field(default_factory=list)
    #: why the run stopped early (an outage or a configuration error), when it did
    stopped: str | None = None
    baseline_saved: str | None = None
    #: why --save-baseline did not save this run
    baseline_not_saved: str | None = None
    #: --detect: the change of a proportion the report says the items it needs for
    detect: float | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def ok(self) -> bool:
        return self.exit_code == ExitCode.OK

    @property
    def incomplete(self) -> bool:
        """Unmeasured cases or unfinished attempts (what --require-complete fails on without --compare)."""
        return bool(self.unmeasured) or not self.complete


def _completeness(card: Scorecard, require_complete: bool) -> Finding | None:
    missing = unmeasured_cases(card)
    code = require_complete_code(missing, require_complete, unfinished=not card.complete)
    if not code:
        return None
    shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
    return Finding(code, f"incomplete: not measured: {shown or 'attempts unfinished'} (--require-complete)")


def verdict_of(
    card: Scorecard,
    options: GateOptions,
    *,
    comparison: Comparison | None = None,
    expectations: GateResult | None = None,
    unspent: Sequence[str] = (),
    stopped: str | None = None,
    stopped_code: int = int(ExitCode.NOT_COMPARABLE),
    refused: Finding | None = None,
) -> Verdict:
    """The verdict of ``card`` from its parts; the exit code is :func:`decide` over their findings.

    A comparison carries its own ``--require-complete`` finding (baseline items missing or unmeasured); without
    one, completeness is the run's unmeasured cases and unfinished attempts. ``refused``: a baseline that
    could not be saved after the run (exit 1).
    """
    findings: list[Finding] = []
    if stopped is not None:
        findings.append(Finding(stopped_code, f"run stopped: {stopped}"))
    if comparison is not None:
        findings.append(Finding(comparison.exit_code, comparison.verdict))
    elif stopped is None and (f := _completeness(card, options.require_complete)) is not None:
        findings.append(f)
    if expectations is not None:
        findings.append(Finding(expectations.exit_code, f"gate {expectations.status}: {expectations.reason}"))
    if unspent:
        code = int(ExitCode.NOT_COMPARABLE if stopped is not None else ExitCode.REGRESSION)
        findings.append(Finding(code, f"{len(unspent)} case(s) measured nothing: {', '.join(unspent)}"))
    if refused is not None:
        findings.append(refused)
    final = decide(findings)
    return Verdict(
        run_id=card.run_id,
        exit_code=final.code,
        reason=final.reason,
        comparison=comparison,
        expectations=expectations,
        require_complete=options.require_complete,
        complete=card.complete,
        unmeasured=unmeasured_cases(card),
        unspent=list(unspent),
        stopped=stopped,
        detect=options.detect,
    )


def load_verdict(path: Path) -> Verdict:
    """Read a ``verdict.json`` (a run directory or the file)."""
    path = Path(path)
    if path.is_dir():
        path = path / VERDICT
    return Verdict.model_validate_json(path.read_text(encoding="utf-8"))
