"""The shared markdown report of a scorecard; benchmarks append their own section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from assay.gate import detect_lines
from assay.models.weak import WEAK_MODEL_NOTE, weak_roles
from assay.report.failure_reasons import Failures, failures_markdown
from assay.report.plotting import Plot
from assay.runs import CaseSummary, MetricValue, Scorecard, SubjectConfig

if TYPE_CHECKING:
    from assay.gate import Verdict

_STABILITY_ORDER = {
    "stable-fail": 0,
    "single-fail": 0,
    "flaky": 1,
    "not-measured": 2,
    "skipped": 2,
    "single-pass": 3,
    "stable-pass": 3,
}


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def metric_row(name: str, m: MetricValue) -> str:
    interval = f"[{_fmt(m.low)}, {_fmt(m.high)}]" if m.low is not None and m.high is not None else ""
    arrow = "↑" if m.direction == "higher" else "↓"
    return (
        f"| {name} | {_fmt(m.value)}{f' {m.unit}' if m.unit else ''} | {interval} | {arrow} | {m.n} | "
        f"{'yes' if m.gated else 'no'} |"
    )


def is_breakdown(name: str) -> bool:
    """A per-tag, per-tier or per-type row (``tag:pdf/sdk_mrr``, ``scale@1000/chunks``, ``acc[type]``)."""
    return any(ch in name for ch in ":/[")


def _metric_table(title: str, rows: Sequence[tuple[str, MetricValue]]) -> list[str]:
    return [
        "",
        title,
        "",
        "| metric | value | 95% interval | better | n | gated |",
        "|---|---|---|---|---|---|",
        *(metric_row(name, m) for name, m in rows),
    ]


def metrics_markdown(metrics: dict[str, MetricValue]) -> tuple[list[str], list[str]]:
    """The gated metrics table, and the rest: other headline metrics, then breakdowns (folded in HTML)."""
    gated = [(n, m) for n, m in metrics.items() if m.gated]
    rest = [(n, m) for n, m in metrics.items() if not m.gated]
    other = [(n, m) for n, m in rest if not is_breakdown(n)]
    breakdown = [(n, m) for n, m in rest if is_breakdown(n)]
    head = _metric_table("## Gated metrics", gated) if gated else []
    lines: list[str] = []
    if other:
        lines += _metric_table("## Other metrics" if gated else "## Metrics", other)
    if breakdown:
        lines += ["", f"<details><summary>Breakdown: {len(breakdown)} more metrics (per tag, tier or type)"
                  "</summary>"]  # fmt: skip
        lines += _metric_table("### Breakdown", breakdown)
        lines += ["", "</details>"]
    return head, lines


def _config_line(cfg: SubjectConfig) -> str | None:
    """Only what is set: a run without a model says nothing about one."""
    parts = [
        f"{label}: `{value}`"
        for label, value in (
            ("subject", cfg.subject),
            ("model", cfg.model),
            ("judge", cfg.judge_model),
            ("embedder", cfg.embedder),
        )
        if value not in (None, "")
    ]
    parts += [
        f"{k}: `{v}`" for k, v in cfg.extra.items() if v not in (None, "", [], {}) and not isinstance(v, dict)
    ]
    return "- " + " · ".join(parts) if parts else None


def _case_row(c: CaseSummary, hat_k: bool = False) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(c.counts.items()))
    hat = f" {pass_hat_k_text(c.pass_hat_k)} |" if hat_k else ""
    return (
        f"| {c.case_id} | {c.category} | {c.stability} | {pct(c.pass_rate)} |{hat} {_fmt(c.score_mean)} | "
        f"{counts} |"
    )


def pass_hat_k_text(values: Mapping[int, float]) -> str:
    """pass^k for k = 1, 2, ... as ``k=1 67% · k=2 58%`` (``-`` when there is none)."""
    return " · ".join(f"k={k} {pct(v)}" for k, v in sorted(values.items())) or "-"


def render_markdown(
    card: Scorecard,
    section: str = "",
    failures: Failures | None = None,
    plots: Sequence[Plot] = (),
    verdict: Verdict | None = None,
) -> str:
    """The report: summary, gated metrics, why cases failed, other metrics, plots, the benchmark's section,
    categories, cases, cost and, when the run was compared, the comparison with its baseline."""
    s = card.summary
    lines = [
        f"# {card.benchmark} · {card.suite} · {card.run_id}",
        "",
        f"- suite version: `{card.suite_version}` · iterations: {card.iterations} · "
        f"complete: {'yes' if card.complete else 'NO'}",
    ]
    if config := _config_line(card.config):
        lines.append(config)
    if weak := weak_roles(card.config):
        who = ", ".join(f"{role} `{spec}`" for role, spec in weak.items())
        lines += ["", f"> **Weak model** ({who}): {WEAK_MODEL_NOTE}", ""]
    if card.commits:
        lines.append(f"- commits: {', '.join(c[:12] for c in card.commits)}")
    if card.mixed_commits:
        lines.append(
            "- **warning: results come from more than one commit** (the run was resumed after a change)"
        )
    lines += ["", "## Summary", "", "| status | count |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in s.counts.items() if v]
    if s.measured:
        lines += [
            "",
            f"Pass rate: **{pct(s.pass_rate)}** of {s.measured} measured attempts "
            f"(95% Wilson interval {pct(s.pass_rate_low)} – {pct(s.pass_rate_high)}). "
            "INFRA_ERROR, SKIPPED and NOT_RUN are not counted.",
        ]
    else:
        lines += ["", "Nothing was measured (no attempt passed, failed, errored or timed out)."]
    if s.judged_pass_rate is not None:
        lines.append(f"Judged pass rate: {pct(s.judged_pass_rate)}.")
    if s.pass_hat_k:
        lines.append(
            f"pass^k (all k attempts of a case pass; C(passed, k) / C(measured, k), mean over cases): "
            f"{pass_hat_k_text(s.pass_hat_k)}."
        )
    if can_show := detect_lines(card, verdict.detect if verdict is not None else None):
        lines += [
            "",
            "What it can show, at the gate's false-alarm rate (cases are the items; repeats of one are not "
            "independent):",
            "",
            *(f"- {line}" for line in can_show),
        ]
    gated, other = metrics_markdown(s.metrics)
    lines += gated
    if failures is not None:
        lines += failures_markdown(failures, card.iterations)
    lines += other
    if plots:
        lines += ["", "## Plots", ""]
        for p in plots:
            lines += [f"![{p.title}]({p.file})", ""]
        lines.pop()
    if section.strip():
        lines += ["", section.strip()]
    if len(s.by_category) > 1:
        lines += ["", "## By category", "", "| category | cases | pass rate |", "|---|---|---|"]
        lines += [
            f"| {cat} | {int(v['cases'] or 0)} | {pct(v['pass_rate'])} |" for cat, v in s.by_category.items()
        ]
    cases = sorted(card.cases, key=lambda c: (_STABILITY_ORDER[c.stability], c.pass_rate or 0.0, c.case_id))
    hat_k = bool(s.pass_hat_k)
    lines += [
        "",
        "## Cases (worst first)",
        "",
        "| case | category | stability | pass rate |"
        + (" pass^k |" if hat_k else "")
        + " score | attempts |",
        "|---|---|---|---|" + ("---|" if hat_k else "") + "---|---|",
    ]
    lines += [_case_row(c, hat_k) for c in cases]
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
    text = "\n".join(lines) + "\n"
    if verdict is not None and verdict.comparison is not None:
        from assay.gate import comparison_markdown

        text += "\n" + comparison_markdown(verdict.comparison)
    return text
