"""Why a memory probe failed, in the probe's terms: what it expected and what the agent was shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.runs import Attempt, Scorecard

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = ["failure_reason", "scenario_plot"]

#: characters of the shown context (or answer) quoted in a reason
SHOWN_CHARS = 240


def _quote(text: str, limit: int = SHOWN_CHARS) -> str:
    flat = " ".join(text.split())
    return f'"{flat if len(flat) <= limit else flat[: limit - 1] + "…"}"'


def failure_reason(attempt: Attempt) -> str | None:
    """The probe (or LongMemEval question) that failed and how; None when the details hold neither."""
    d = attempt.details
    if "probe" in d:
        parts = [f"probe {d['probe']} ({d.get('kind', '?')})" + (f": {d['note']}" if d.get("note") else "")]
        if d.get("query"):
            parts.append(f"query {_quote(d['query'], 160)}")
        parts.append("; ".join(d.get("failures") or ["no check failed (see results.jsonl)"]))
        if "answer" in d:
            parts.append(f"answered {_quote(d['answer'])}")
        if "shown" in d:
            parts.append(f"shown {_quote(d['shown'])}" if d["shown"].strip() else "shown nothing")
        if d.get("extraction_errors"):
            parts.append(f"extraction errors: {'; '.join(d['extraction_errors'][:2])}")
        return " · ".join(parts)
    if "pass_rule" in d and "evidence" in d:  # a LoCoMo question
        parts = [
            f"question {_quote(d['question'], 200)} ({d.get('category', '?')})",
            f"rule: {d['pass_rule']}",
        ]
        if d.get("judge_label"):
            parts.append(f"judge: {d['judge_label']}, {_quote(d.get('judge_reason') or '', 200)}")
        if "answer" in d:
            parts.append(f"expected {_quote(str(d['gold']), 160)}, answered {_quote(str(d['answer']))}")
        ranked = {e for r in d.get("ranked_evidence", [])[:10] for e in r}
        missed = [e for e in d["evidence"] if e not in ranked]
        if missed:
            parts.append(f"evidence not recalled in the top 10: {', '.join(missed)}")
        return " · ".join(parts)
    if "gold" in d:
        head = f"question {_quote(d['question'], 200)} " if d.get("question") else ""
        kind = f"({d['question_type']}) " if d.get("question_type") else ""
        graded = {"answer": " (graded on the model's answer)", "shown": " (graded on the context shown)"}.get(
            d.get("graded_on", ""), ""
        )
        return f"{head}{kind}expected {_quote(str(d['gold']), 160)}, got {_quote(str(d.get('answer', '')))}{graded}"
    return None


def scenario_plot(card: Scorecard) -> Plot | None:
    """Pass rate of each scenario's checks (95% Wilson intervals); the per-kind plot is the shared one."""
    from assay.report.plotting import pass_rate_bars

    groups: dict[str, tuple[int, int]] = {}
    for c in card.cases:
        sid = c.case_id.partition("/")[0]
        passed, measured = groups.get(sid, (0, 0))
        groups[sid] = (passed + c.passed, measured + c.measured)
    return pass_rate_bars(
        "memory_pass_rate_by_scenario.png", "pass rate by scenario (95% Wilson interval)", groups
    )
