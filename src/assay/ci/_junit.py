"""JUnit XML of a run, a comparison or a gate, for CI test reporters (``--junit FILE``).

One ``<testcase>`` per case. A case never measured is an ``<error>`` when the backend was out (INFRA_ERROR)
and ``<skipped>`` with its reason when it was skipped or not run. A measured case is a ``<failure>`` when it
regressed against the baseline (with a comparison) or, with none, when any of its attempts did not pass.
A gate's limits are one testcase each (a miss fails; unmeasured fails only under ``--enforce``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assay.runs import CaseSummary, Scorecard, Status

__all__ = ["CaseVerdict", "case_verdicts", "gate_junit", "run_junit", "write_junit"]

#: comparison buckets that are regressions (a failure in JUnit)
REGRESSED_BUCKETS = frozenset({"regressed", "score_regressed", "time_regressed"})

Outcome = Literal["passed", "failure", "error", "skipped"]


@dataclass(frozen=True)
class CaseVerdict:
    case_id: str
    category: str
    outcome: Outcome
    message: str
    time_s: float
    #: shown, never a failure: a case's time beside the baseline's when it grew with no measured noise saying so
    note: str = ""


def _unmeasured(case: CaseSummary, imported_from: str | None = None) -> tuple[Outcome, str]:
    if case.counts.get(Status.INFRA_ERROR.value):
        return "error", "INFRA_ERROR: the backend or judge was unreachable; not counted against the subject"
    if case.stability == "skipped":
        return "skipped", f"SKIPPED: {case.skip_reason or 'no reason recorded'}"
    if imported_from:  # `assay import`: the tool's result has no outcome for it (not submitted, unfinished)
        return "skipped", f"NOT_RUN: the {imported_from} result holds no outcome for it"
    return "skipped", "NOT_RUN: never attempted (the run stopped or was cut short)"


def case_verdicts(
    card: Scorecard, regressions: dict[str, str] | None = None, notes: dict[str, str] | None = None
) -> list[CaseVerdict]:
    """Each case's JUnit outcome; ``regressions`` (case id -> why) and ``notes`` (shown in the case's output,
    never a failure) come from a comparison."""
    out: list[CaseVerdict] = []
    for case in card.cases:
        time_s = (case.mean_elapsed_s or 0.0) * max(case.measured, 1)
        if case.measured == 0:
            outcome, message = _unmeasured(case, card.config.extra.get("imported_from"))
        elif regressions is not None:
            why = regressions.get(case.case_id)
            outcome, message = ("failure", why or "regressed") if why is not None else ("passed", "")
        elif case.passed < case.measured:
            counts = ", ".join(f"{n} {s}" for s, n in case.counts.items() if n)
            outcome, message = "failure", f"{case.passed}/{case.measured} passed ({case.stability}; {counts})"
        else:
            outcome, message = "passed", ""
        note = (notes or {}).get(case.case_id, "")
        out.append(CaseVerdict(case.case_id, case.category, outcome, message, time_s, note))
    return out


def _suite(name: str, cases: list[CaseVerdict]) -> ET.Element:
    counts = {k: sum(c.outcome == k for c in cases) for k in ("failure", "error", "skipped")}
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(counts["failure"]),
        errors=str(counts["error"]),
        skipped=str(counts["skipped"]),
        time=f"{sum(c.time_s for c in cases):.3f}",
    )
    for c in cases:
        tc = ET.SubElement(suite, "testcase", classname=f"{name}.{c.category}", name=c.case_id)
        tc.set("time", f"{c.time_s:.3f}")
        if c.outcome != "passed":
            ET.SubElement(tc, c.outcome, message=c.message).text = c.message
        if c.note:
            ET.SubElement(tc, "system-out").text = c.note
    return suite


def run_junit(
    card: Scorecard, regressions: dict[str, str] | None = None, notes: dict[str, str] | None = None
) -> str:
    """The JUnit XML of one run (``regressions`` and ``notes`` from its comparison, when it was compared)."""
    root = ET.Element("testsuites", name=f"assay {card.benchmark}")
    root.append(_suite(f"{card.benchmark}.{card.suite}", case_verdicts(card, regressions, notes)))
    return _text(root)


def gate_junit(name: str, checks: list[tuple[str, Outcome, str]], unmeasured: list[str]) -> str:
    """The JUnit XML of a gate: one testcase per limit, and the cases it found unmeasured (skipped)."""
    cases = [CaseVerdict(check, "limits", outcome, message, 0.0) for check, outcome, message in checks]
    cases += [CaseVerdict(cid, "cases", "skipped", "not measured", 0.0) for cid in unmeasured]
    root = ET.Element("testsuites", name=f"assay gate {name}")
    root.append(_suite(f"gate.{name}", cases))
    return _text(root)


def _text(root: ET.Element) -> str:
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, xml: str) -> Path:
    """Write through assay's one artifact writer (scrubbed, atomic), making the folder."""
    from assay.runs.rundir import write_artifact

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_artifact(path, xml)
