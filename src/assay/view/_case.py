"""A case page: its attempts side by side, each drawn by the view of its benchmark.

A benchmark names its view in the registry (``Benchmark.case_view``, ``module:function``); one without a view
gets its details as JSON. The views of the coding benchmarks (tasks, code) and of sessions live in ``_case_tasks`` and
``_case_sessions``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from assay.runs import Attempt

from ._html import details, duration, e, href, num, page, pass_hat_k_text, pre, status_badge, table
from ._serving import latencies
from ._store import Run
from ._svg import cdf_chart

CaseView = Callable[[Run, Attempt], str]


def _json(x: Any) -> str:
    return pre(json.dumps(x, indent=2, ensure_ascii=False, default=str))


def agent_view(run: Run, att: Attempt) -> str:
    """The conversation with each tool call, the code checks, and the judge's dimensions and reasons."""
    d = att.details
    out = ['<section class="conversation"><h3>Conversation</h3>']
    for turn in d.get("turns") or []:
        out.append(f'<div class="turn"><h4>turn {e(turn.get("index"))}: {e(turn.get("objective"))}</h4>')
        for msg in turn.get("messages") or []:
            role = str(msg.get("role", ""))
            out.append(f'<div class="msg {e(role)}"><b>{e(role)}</b>{pre(msg.get("text", ""))}')
            for call in msg.get("tool_calls") or []:
                head = f"tool <code>{e(call.get('name'))}</code> ({e(call.get('status'))})"
                body = (
                    "<b>arguments</b>"
                    + _json(call.get("arguments"))
                    + "<b>result</b>"
                    + pre(call.get("result_summary", ""))
                )
                if call.get("command"):
                    body += f"<b>command</b>{pre(call['command'])} exit {e(call.get('exit_code'))}"
                out.append(f'<div class="tool">{details(head, body, open_=True)}</div>')
            out.append("</div>")
        if turn.get("cut_off") or turn.get("agent_error"):
            out.append(f'<p class="fail">cut off: {e(turn.get("cut_off"))} {e(turn.get("agent_error"))}</p>')
        out.append("</div>")
    out.append(f"<p>ended by: {e(d.get('ended_by'))}</p></section>")
    checks, unmeasured = d.get("checks") or [], d.get("not_measured") or []
    if checks or unmeasured:
        rows = [
            [
                e(c.get("name")),
                "✔ passed" if c.get("passed") else '<b class="fail">✘ failed</b>',
                e(c.get("turn")),
                e(c.get("detail")),
            ]
            for c in checks
        ]
        rows += [[e(n.get("name")), "— not measured", "", e(n.get("detail"))] for n in unmeasured]
        out.append(
            '<section class="checks"><h3>Code checks</h3>'
            + table(["check", "result", "turn", "detail"], rows)
            + "</section>"
        )
    j = d.get("judgement") or {}
    if j:
        out.append('<section class="judge"><h3>Judge</h3>')
        out.append(
            f"<p>verdict <b>{'PASS' if j.get('passed') else 'FAIL'}</b> (judge said {e(j.get('judge_said'))}"
            f"{', overruled in code' if j.get('overruled') else ''}) · score {num(j.get('score'))} · {e(j.get('reason'))}</p>"
        )
        if j.get("judge_reason"):
            out.append(f"<p>judge's reason: {e(j.get('judge_reason'))}</p>")
        dims = sorted({k for t in j.get("turns") or [] for k in (t.get("scores") or {})})
        rows = []
        for t in j.get("turns") or []:
            sc = t.get("scores") or {}
            rows.append(
                [
                    e(t.get("turn")),
                    num(t.get("score")),
                    "pass" if t.get("passed") else "fail",
                    *[num(sc.get(k)) for k in dims],
                    e("; ".join(map(str, t.get("reasons") or [])) or t.get("went_wrong")),
                ]
            )
        out.append(table(["turn", "score", "verdict", *dims, "reasons"], rows, "dimensions"))
        for failed in j.get("checks_failed") or []:
            out.append(f'<p class="fail">check failed: {e(failed)}</p>')
        out.append("</section>")
    return "".join(out)


def _hits(title: str, hits: Sequence[str], gold: set[str], key: Callable[[str], str]) -> str:
    rows = [[str(i), e(h), "✔ labelled" if key(h) in gold else ""] for i, h in enumerate(hits, 1)]
    return f"<h4>{e(title)}</h4>" + table(
        ["rank", "hit", "evidence"],
        rows,
        "hits",
        [f'class="{"hit-gold" if key(h) in gold else ""}"' for h in hits],
    )


def retrieval_view(run: Run, att: Attempt) -> str:
    """The ranked hits against the labelled evidence (documents for rag, changed files for code)."""
    d = att.details
    out = []
    if "evidence" in d or "top5" in d:
        out.append(f"<p><b>question</b> {e(d.get('question'))}</p>")
        ev = d.get("evidence") or []
        rows = [[e(x.get("doc")), e(x.get("page")), e(x.get("quote"))] for x in ev]
        out.append("<h4>Labelled evidence</h4>" + table(["document", "page", "quote"], rows))
        docs = {str(x.get("doc")) for x in ev}
        out.append(_hits("SDK top 5", d.get("top5") or [], docs, lambda h: h.split("#", 1)[0]))
        out.append(
            f"<p>first rank with the evidence: SDK {e(d.get('sdk_rank'))} · agent {e(d.get('agent_rank'))} (returned {e(d.get('agent_returned'))})</p>"
        )
    if "gold_files" in d:
        out.append(
            f"<p><b>query</b> {e(d.get('query'))}</p><p>rule: {e(d.get('pass_rule'))} · first gold rank {e(d.get('first_gold_rank'))}</p>"
        )
        gold = set(d.get("gold_files") or [])
        out.append("<h4>Files the fix changed</h4>" + pre("\n".join(sorted(gold))))
        for name in ("semantic_top10", "grep_top10"):
            if name in d:
                out.append(_hits(name.replace("_", " "), d[name], gold, lambda h: h))
        if "semantic_symbols_top10" in d:
            syms = set(d.get("gold_symbols") or [])
            out.append(_hits("semantic symbols top 10", d["semantic_symbols_top10"], syms, lambda h: h))
    rest = {
        k: v
        for k, v in d.items()
        if k not in ("top5", "evidence", "semantic_top10", "grep_top10", "semantic_symbols_top10")
    }
    return "".join(out) + details("all details", _json(rest))


def memory_view(run: Run, att: Attempt) -> str:
    """The probe, what the agent was shown, and what failed."""
    d = att.details
    if "scenario" in d:
        out = [
            f"<p>scenario <b>{e(d.get('scenario'))}</b> · probe {e(d.get('probe'))} ({e(d.get('kind'))}) at {e(d.get('at'))}</p>"
        ]
    else:  # an imported question (LoCoMo, LongMemEval)
        kind = d.get("category") or d.get("question_type")
        out = [f"<p><b>question</b> {e(d.get('question'))} ({e(kind)})</p>"]
        out += [
            f"<p><b>{k}</b> {e(d[k])}</p>" for k in ("gold", "answer", "judge_reason", "pass_rule") if k in d
        ]
    if d.get("query"):
        out.append(f"<p><b>query</b> {e(d.get('query'))}</p>")
    if "shown" in d:
        out.append("<h4>Shown to the agent</h4>" + pre(d.get("shown")))
    for f in d.get("failures") or []:
        out.append(f'<p class="fail">{e(f)}</p>')
    return "".join(out) + details("all details", _json(d))


def serving_view(run: Run, att: Attempt) -> str:
    """Latency distributions of the level's measured requests (``results.json``), and its figures."""
    ms = latencies(run).get((att.case_id, att.iteration))
    out = []
    if ms is None:
        out.append('<p class="muted">no per-request timings in results.json for this level</p>')
    else:
        out.append(f"<p>{len(ms['E2E'])} measured requests</p>")
        out.append(cdf_chart({"TTFT": ms["TTFT"], "E2E": ms["E2E"]}, "latency CDF", "ms"))
        out.append(cdf_chart({"TPOT": ms["TPOT"], "ITL": ms["ITL"]}, "per-token latency CDF", "ms"))
    rows = [[e(k), num(v)] for k, v in att.metrics.items()]
    return "".join(out) + "<h4>Figures</h4>" + table(["metric", "value"], rows)


def case_view(benchmark: str) -> CaseView | None:
    """The view of a run's ``benchmark`` (``retrieval-rag`` is the ``retrieval`` benchmark's), as its class
    declares it in the registry (``Benchmark.case_view``); None: the attempt's details as JSON."""
    from assay.errors import ConfigError
    from assay.evals import available, get_benchmark

    names = [n for n in available() if benchmark == n or benchmark.startswith(f"{n}-")]
    if not names:
        return None
    try:
        spec = get_benchmark(max(names, key=len)).case_view
    except (ImportError, AttributeError, ConfigError):
        return None
    if spec is None:
        return None
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


def _attempt(run: Run, att: Attempt) -> str:
    head = (
        f"<h3>iteration {att.iteration} {status_badge(att.status.value)}</h3>"
        f"<p>score {num(att.score)} · {duration(att.elapsed_s)} · started {e(att.started_at.isoformat()[:19])}"
        + (f" · commit {e(att.commit[:10])}" if att.commit else "")
        + (f" · cost ${att.usage.cost_usd:.4f}" if att.usage and att.usage.cost_usd is not None else "")
        + "</p>"
    )
    if att.error:
        head += f'<p class="fail">{e(att.error.type)}: {e(att.error.message)}</p>'
    if att.skip_reason:
        head += f"<p>skipped: {e(att.skip_reason)}</p>"
    view = case_view(run.benchmark)
    body = view(run, att) if view is not None else _json(att.details)
    if att.metrics and run.benchmark != "benchmark":
        body += details(
            "metrics", table(["metric", "value"], [[e(k), num(v)] for k, v in att.metrics.items()])
        )
    return f'<div class="attempt">{head}{body}</div>'


def case_page(run: Run, case_id: str) -> str:
    root = "../../../"
    attempts, replaced = run.attempts(case_id)
    card = run.scorecard
    summary = card.case(case_id) if card is not None else None
    parts = []
    if summary is not None:
        parts.append(
            f"<p>category {e(summary.category)} · {e(summary.stability)} · passed {summary.passed}/{summary.measured}"
            + (f" · pass^k {pass_hat_k_text(summary.pass_hat_k)}" if summary.pass_hat_k else "")
            + (f" · skipped: {e(summary.skip_reason)}" if summary.skip_reason else "")
            + "</p>"
        )
    if replaced:
        parts.append(f'<p class="muted">{replaced} earlier record(s) replaced by a resume are not shown</p>')
    if not attempts:
        parts.append('<p class="muted">no attempt recorded for this case in results.jsonl</p>')
    parts.append('<div class="attempts">' + "".join(_attempt(run, a) for a in attempts) + "</div>")
    crumbs = [("runs", "index.html"), (run.key, href("runs", run.key, "index.html")), (case_id, "")]
    return page(f"Case {case_id}", "".join(parts), root, crumbs)
