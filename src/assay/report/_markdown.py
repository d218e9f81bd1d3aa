"""The shared markdown report of a scorecard; benchmarks append their own section."""

from __future__ import annotations

from assay.runs._records import CaseSummary, MetricValue, Scorecard

_STABILITY_ORDER = {"stable-fail": 0, "flaky": 1, "not-measured": 2, "stable-pass": 3}


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def metric_row(name: str, m: MetricValue) -> str:
    interval = f"[{_fmt(m.low)}, {_fmt(m.high)}]" if m.low is not None and m.high is not None else ""
    arrow = "↑" if m.direction == "higher" else "↓"
    return (
        f"| {name} | {_fmt(m.value)} {m.unit} | {interval} | {arrow} | {m.n} | {'yes' if m.gated else 'no'} |"
    )


def _case_row(c: CaseSummary) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(c.counts.items()))
    return (
        f"| {c.case_id} | {c.category} | {c.stability} | {_pct(c.pass_rate)} | {_fmt(c.score_mean)} | "
        f"{counts} |"
    )


def render_markdown(card: Scorecard, section: str = "") -> str:
    s = card.summary
    cfg = card.config
    lines = [
        f"# {card.benchmark} · {card.suite} · {card.run_id}",
        "",
        f"- suite version: `{card.suite_version}` · iterations: {card.iterations} · "
        f"complete: {'yes' if card.complete else 'NO'}",
        f"- subject: `{cfg.subject}` · model: `{cfg.model}` · judge: `{cfg.judge_model}` · "
        f"embedder: `{cfg.embedder}`",
        f"- commits: {', '.join(c[:12] for c in card.commits) or '—'}",
    ]
    if card.mixed_commits:
        lines.append(
            "- **warning: results come from more than one commit** (the run was resumed after a change)"
        )
    lines += ["", "## Summary", "", "| status | count |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in s.counts.items() if v]
    lines += [
        "",
        f"Pass rate: **{_pct(s.pass_rate)}** of {s.measured} measured attempts "
        f"(95% Wilson interval {_pct(s.pass_rate_low)} – {_pct(s.pass_rate_high)}). "
        "INFRA_ERROR, SKIPPED and NOT_RUN are not counted.",
    ]
    if s.judged_pass_rate is not None:
        lines.append(f"Judged pass rate: {_pct(s.judged_pass_rate)}.")
    if s.metrics:
        lines += [
            "",
            "## Metrics",
            "",
            "| metric | value | 95% interval | better | n | gated |",
            "|---|---|---|---|---|---|",
        ]
        lines += [metric_row(name, m) for name, m in s.metrics.items()]
    if len(s.by_category) > 1:
        lines += ["", "## By category", "", "| category | cases | pass rate |", "|---|---|---|"]
        lines += [
            f"| {cat} | {int(v['cases'] or 0)} | {_pct(v['pass_rate'])} |" for cat, v in s.by_category.items()
        ]
    cases = sorted(card.cases, key=lambda c: (_STABILITY_ORDER[c.stability], c.pass_rate or 0.0, c.case_id))
    lines += [
        "",
        "## Cases (worst first)",
        "",
        "| case | category | stability | pass rate | score | attempts |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_case_row(c) for c in cases]
    cost = card.cost
    lines += [
        "",
        "## Cost",
        "",
        f"{cost.calls} model calls, {cost.input_tokens} input / {cost.output_tokens} output tokens "
        f"({cost.cache_read_tokens} cache read, {cost.cache_write_tokens} cache write); "
        f"cost: {'unknown' if cost.cost_usd is None else f'${cost.cost_usd:.4f}'}"
        f"{f' ({cost.cost_source})' if cost.cost_source else ''}"
        f"{f'; {cost.unpriced_calls} calls without a price' if cost.unpriced_calls else ''}.",
    ]
    if section.strip():
        lines += ["", section.strip()]
    return "\n".join(lines) + "\n"
