"""Why cases failed: each failing case with its benchmark's own reason, and what was not measured and why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from assay.runs import Attempt, CaseSummary, Scorecard, Status

__all__ = ["FailedCase", "Failures", "NotMeasured", "collect_failures", "failures_markdown", "md_text"]

#: statuses that mean the subject was measured and did not pass
BAD = (Status.FAIL, Status.ERROR, Status.TIMEOUT)
#: statuses that mean nothing was measured (each with its reason)
UNMEASURED = (Status.INFRA_ERROR, Status.NOT_RUN, Status.SKIPPED)
#: distinct reasons shown per case (iterations that failed the same way share one line)
MAX_REASONS = 3
MAX_REASON_CHARS = 700
#: cases named in one "not measured" line before the rest are counted
MAX_NAMED = 8

Reason = Callable[[Attempt], str]


@dataclass
class FailedCase:
    case_id: str
    category: str
    stability: str
    counts: dict[str, int]
    #: distinct reasons, each with the iterations that gave it
    reasons: list[tuple[list[int], str]] = field(default_factory=list)


@dataclass
class NotMeasured:
    status: str
    reason: str
    cases: list[str]


@dataclass
class Failures:
    failed: list[FailedCase]
    not_measured: list[NotMeasured]


def md_text(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """One line of plain text safe inside a markdown list item (no code spans, links or emphasis)."""
    flat = " ".join(text.split()).replace("`", "'").replace("**", "*").replace("](", "] (")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _reason(reason: Reason, attempt: Attempt) -> str:
    try:
        return reason(attempt)
    except Exception as exc:  # a broken hook must not cost the run its report; the text says what broke
        return f"(failure_reason raised {type(exc).__name__}: {exc})"


def collect_failures(card: Scorecard, attempts: list[Attempt], reason: Reason) -> Failures:
    """``attempts``: the latest attempt of each (case, iteration). Cases come in the scorecard's order."""
    by_case: dict[str, list[Attempt]] = {}
    for a in sorted(attempts, key=lambda a: (a.case_id, a.iteration)):
        by_case.setdefault(a.case_id, []).append(a)
    summaries: dict[str, CaseSummary] = {c.case_id: c for c in card.cases}
    failed: list[FailedCase] = []
    groups: dict[tuple[str, str], list[str]] = {}
    for case_id, atts in by_case.items():
        summary = summaries.get(case_id)
        bad = [a for a in atts if a.status in BAD]
        if bad:
            fc = FailedCase(
                case_id=case_id,
                category=atts[0].category,
                stability=summary.stability if summary else "",
                counts=summary.counts if summary else {a.status.value: len(bad) for a in bad},
            )
            seen: dict[str, list[int]] = {}
            for a in bad:
                seen.setdefault(_reason(reason, a) or a.status.value, []).append(a.iteration)
            fc.reasons = [(its, text) for text, its in seen.items()]
            failed.append(fc)
        for a in atts:
            if a.status in UNMEASURED:
                key = (a.status.value, _reason(reason, a) or a.status.value)
                if case_id not in groups.setdefault(key, []):
                    groups[key].append(case_id)
    order = {c.case_id: i for i, c in enumerate(card.cases)}
    failed.sort(key=lambda f: order.get(f.case_id, len(order)))
    not_measured = [NotMeasured(status=s, reason=r, cases=cs) for (s, r), cs in groups.items()]
    rank = {s.value: i for i, s in enumerate(UNMEASURED)}
    not_measured.sort(key=lambda n: (rank[n.status], -len(n.cases)))
    return Failures(failed=failed, not_measured=not_measured)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items()) if v)


def failures_markdown(f: Failures, iterations: int) -> list[str]:
    """The report's "Why cases failed" and "Not measured" sections (empty when every case passed)."""
    lines: list[str] = []
    if f.failed:
        lines += ["", f"## Why cases failed ({len(f.failed)})", ""]
        for c in f.failed:
            head = f"- **{md_text(c.case_id, 200)}** ({md_text(c.category, 80)}; {_counts(c.counts)}"
            head += f"; {c.stability})" if c.stability else ")"
            shown = c.reasons[:MAX_REASONS]
            if len(shown) == 1 and (iterations == 1 or len(shown[0][0]) == iterations):
                lines.append(f"{head}: {md_text(shown[0][1])}")
                continue
            parts = [
                f"iteration{'s' if len(its) > 1 else ''} {', '.join(map(str, its))}: {md_text(text)}"
                for its, text in shown
            ]
            if len(c.reasons) > MAX_REASONS:
                parts.append(f"{len(c.reasons) - MAX_REASONS} more distinct reasons in results.jsonl")
            lines.append(f"{head}: " + " · ".join(parts))
    if f.not_measured:
        lines += ["", "## Not measured", ""]
        for n in f.not_measured:
            named = ", ".join(md_text(c, 120) for c in n.cases[:MAX_NAMED])
            more = f" and {len(n.cases) - MAX_NAMED} more" if len(n.cases) > MAX_NAMED else ""
            lines.append(f"- {n.status} ({len(n.cases)} case{'s' if len(n.cases) != 1 else ''}: {named}{more}): "
                         f"{md_text(n.reason)}")  # fmt: skip
    return lines
