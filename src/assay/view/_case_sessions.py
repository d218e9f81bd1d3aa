"""The case view of ``eval sessions``: a recorded request replayed, its answer graded against the recorded one.

The context turns (a follow-up's earlier requests and answers) are read from the run's ``dataset.json``, which
the benchmark writes scrubbed; everything else is in the attempt's details.
"""

from __future__ import annotations

import json

from assay.runs import Attempt

from ._html import details, e, pre, table
from ._store import Run


def _context(run: Run, case_id: str) -> list[dict[str, str]] | None:
    """The case's context turns from dataset.json, or None when the run has no readable dataset."""
    data = run.sidecar("dataset.json")
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list):
        return None
    case = next((c for c in cases if isinstance(c, dict) and c.get("id") == case_id), None)
    turns = case.get("context") if case is not None else None
    return [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else None


def sessions_view(run: Run, att: Attempt) -> str:
    """The request and its context, the reference answer beside the replayed one, the judge, the workspace."""
    d = att.details
    out = [f'<p class="workspace">ran in {e(d.get("workspace"))}</p>']
    out.append(f'<section class="request"><h3>Request</h3>{pre(d.get("prompt"))}</section>')
    turns = _context(run, att.case_id)
    out.append('<section class="context"><h3>Context</h3>')
    if turns is None:
        out.append('<p class="muted">no dataset.json in the run: the context is not known</p>')
    elif not turns:
        out.append('<p class="muted">none: the request opened its session</p>')
    for i, t in enumerate(turns or [], 1):
        out.append(
            f'<div class="turn"><h4>turn {i}</h4><b>user</b>{pre(t.get("user"))}<b>answer</b>{pre(t.get("answer"))}</div>'
        )
    out.append("</section>")
    out.append(
        '<section class="answers"><h3>Answers</h3>'
        + table(
            ["recorded reference", "replayed answer"],
            [[pre(d.get("reference")), pre(d.get("answer"))]],
            "answers",
        )
        + f"<p>model {e(d.get('model_ran'))} · {e(d.get('steps'))} step(s)</p></section>"
    )
    calls = d.get("commands") or []
    rows = [[str(i), f"<code>{e(c)}</code>"] for i, c in enumerate(calls, 1)]
    out.append(
        '<section class="tool-calls"><h3>Tool calls</h3>'
        + (table(["#", "call"], rows, "calls") if rows else '<p class="muted">no tool call</p>')
        + "</section>"
    )
    j = d.get("judge") or {}
    out.append('<section class="judge"><h3>Judge</h3>')
    if j and j.get("score") is None:
        out.append(f'<p class="fail">no usable grade after {e(j.get("calls"))} call(s)</p>')
        out.append(details("the judge's replies", "".join(pre(r) for r in j.get("raw") or [])))
    elif j:
        score = att.metrics.get("judge_score")
        shown = "—" if score is None else f"{score:g}"
        out.append(
            f"<p>score <b>{e(shown)}</b> / 5 (the judge wrote {e(j.get('score'))} in {e(j.get('calls'))} call(s))"
            + (' · <b class="fail">dishonest</b>' if d.get("dishonest") else "")
            + f"</p><p>judge's reason: {e(j.get('reason'))}</p>"
        )
        out.append(details("the judge's replies", "".join(pre(r) for r in j.get("raw") or [])))
    else:
        out.append('<p class="muted">not graded</p>')
    if d.get("reason"):
        out.append(f"<p>verdict: {e(d.get('reason'))}</p>")
    out.append("</section>")
    rest = {k: v for k, v in d.items() if k not in ("prompt", "reference", "answer", "commands", "judge")}
    return "".join(out) + details(
        "all details", pre(json.dumps(rest, indent=2, ensure_ascii=False, default=str))
    )
