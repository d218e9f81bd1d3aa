"""Showing a comparison, a gate and a verdict: rich terminal tables and a markdown section for the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._expect import GateResult
from .comparison import BUCKETS, CaseComparison, Comparison, MetricComparison, Side

if TYPE_CHECKING:
    from ._verdict import Verdict

_STYLE = {
    "regressed": "bold red",
    "score_regressed": "red",
    "time_regressed": "bold red",
    "slower": "yellow",
    "improved": "green",
    "flaky": "magenta",
    "flipped": "magenta",
    "skipped": "dim",
    "not_measured": "yellow",
    "only_in_baseline": "yellow",
    "only_in_current": "cyan",
    "unchanged": "dim",
}


def _num(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    text = f"{x:.4g}"
    return f"{text} {unit}".strip()


def _frac(side: Side | None) -> str:
    if side is None:
        return "-"
    return f"{side.passed}/{side.measured}" if side.measured else "unmeasured"


def _delta(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f}"


def _tolerance(m: MetricComparison) -> str:
    if m.verdict in ("not_measured", "not_compared") and m.tolerance_source == "none":
        return "-"
    text = f"{m.tolerance:.4g}"
    return text + (f" ({m.relative_tolerance:.0%})" if m.relative_tolerance is not None else "")


def _source(m: MetricComparison) -> str:
    """Where the tolerance came from: the winning rule, and what it saw."""
    if m.tolerance_source == "none":
        return m.tolerance_detail or "-"
    detail = m.tolerance_detail
    if not detail or detail.startswith(m.tolerance_source.split()[0]):
        return detail or m.tolerance_source
    return f"{m.tolerance_source}: {detail}"


def _metric_row(m: MetricComparison) -> list[str]:
    return [
        m.name + ("" if m.gated else " (not gated)"),
        m.kind or "-",
        m.direction,
        _num(m.baseline, m.unit),
        _num(m.current, m.unit),
        "-" if m.delta is None else f"{m.delta:+.4g}",
        _tolerance(m),
        _source(m),
        m.label,
    ]


def noise_line(comp: Comparison) -> str | None:
    """Whether the noise file changed any metric tolerance (None without a noise file)."""
    if comp.noise is None and not comp.noise_widened and not any(c.floor is not None for c in comp.cases):
        return None
    if comp.noise_widened:
        return "noise file widened the tolerance of: " + ", ".join(comp.noise_widened)
    return "noise file changed no metric tolerance (every metric's own rule was as wide or wider)"


def _fits(table: Table, console: Console) -> bool:
    """Whether the table fits the console with every unwrapped cell (metric and case names) whole."""
    # the table's own measure: Measurement.get clamps it to the console's width, hiding what does not fit
    return table.__rich_measure__(console, console.options).minimum <= console.width


def _case_table(changed: list[CaseComparison], console: Console) -> None:
    """The cases that changed: a table where it fits with every case id whole, else one case per line."""
    title = "cases that changed"
    table = Table(title=title, title_justify="left")
    table.add_column("bucket", no_wrap=True)
    table.add_column("case", no_wrap=True)
    for col in ("baseline", "current", "Δ pass"):
        table.add_column(col, no_wrap=True, justify="right")
    table.add_column("why", overflow="fold", min_width=16)
    for c in changed:
        cells = [
            c.bucket,
            c.case_id,
            _frac(c.baseline),
            _frac(c.current),
            _delta(c.pass_rate_delta),
            c.reason,
        ]
        table.add_row(f"[{_STYLE[c.bucket]}]{c.bucket}[/]", *(escape(x) for x in cells[1:]))
    if _fits(table, console):
        console.print(table)
        return
    console.print(title + ":", highlight=False, soft_wrap=True)
    for c in changed:
        console.print(
            f"  [{_STYLE[c.bucket]}]{c.bucket}[/] {escape(c.case_id)}: {_frac(c.baseline)} -> "
            f"{_frac(c.current)} (Δ pass {_delta(c.pass_rate_delta)}): {escape(c.reason)}",
            highlight=False,
            soft_wrap=True,
        )


def _verdict_cell(m: MetricComparison) -> str:
    text = escape(m.label)
    if m.verdict == "regressed" and m.gated:
        return f"[bold red]{text}[/]"
    return f"[yellow]{text}[/]" if m.label in ("slower", "changed") else text


def _metric_table(shown: list[MetricComparison], title: str, console: Console) -> None:
    """The metrics: a table where it fits with every name whole, else one metric per line."""
    mt = Table(title=title, title_justify="left")
    mt.add_column("metric", no_wrap=True)
    for col in ("kind", "better", "baseline", "current", "Δ", "tolerance"):
        mt.add_column(col, no_wrap=True)
    mt.add_column("tolerance from", overflow="fold", min_width=12)
    mt.add_column("verdict", no_wrap=True)
    for m in shown:
        mt.add_row(*(escape(x) for x in _metric_row(m)[:-1]), _verdict_cell(m))
    if _fits(mt, console):
        console.print(mt)
        return
    console.print(title + ":", highlight=False, soft_wrap=True)
    for m in shown:
        name, kind, better, base, cur, delta, tol, source, _ = _metric_row(m)
        console.print(
            f"  {escape(name)}: {escape(base)} -> {escape(cur)} (Δ {escape(delta)}; {escape(kind)}, "
            f"{escape(better)} is better; tolerance {escape(tol)}, {escape(source)}): {_verdict_cell(m)}",
            highlight=False,
            soft_wrap=True,
        )


def print_comparison(comp: Comparison, console: Console) -> None:
    """Print the comparison: header, changed cases, metrics, warnings and the verdict line.

    Names are never cut: a table that cannot hold every case id and metric name whole at the console's
    width (a CI log or a pipe is 80 columns) is printed one row per line instead.
    """
    console.print(
        f"[bold]compare[/bold] {escape(comp.baseline.run_id)} ({escape(comp.baseline.path)}) -> "
        f"{escape(comp.current.run_id)} ({escape(comp.current.path)})",
        highlight=False,
        soft_wrap=True,
    )
    if not comp.comparable:
        for reason in comp.not_comparable:
            console.print(
                f"[bold red]not comparable:[/bold red] {escape(reason)}", highlight=False, soft_wrap=True
            )
        return
    counts = ", ".join(f"{b} {comp.counts[b]}" for b in BUCKETS if comp.counts.get(b))
    console.print(f"cases: {counts or 'none'}", highlight=False, soft_wrap=True)
    order = {b: i for i, b in enumerate(BUCKETS)}
    changed = sorted(
        (c for c in comp.cases if c.bucket != "unchanged"),
        key=lambda c: (order[c.bucket], c.pass_rate_delta or 0.0, c.case_id),
    )
    if changed:
        _case_table(changed, console)
    # the terminal shows gated metrics and any that moved past tolerance; comparison.md has them all
    shown = [m for m in comp.metrics if m.gated or m.verdict in ("regressed", "improved")]
    if shown:
        hidden = len(comp.metrics) - len(shown)
        title = "metrics" + (f" (gated or changed; {hidden} more in comparison.md)" if hidden else "")
        _metric_table(shown, title, console)
    if (line := noise_line(comp)) is not None:
        console.print(escape(line), highlight=False, soft_wrap=True)
    for w in comp.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False, soft_wrap=True)
    style = "bold red" if comp.exit_code else "bold green"
    console.print(f"[{style}]{escape(comp.verdict)}[/]", highlight=False, soft_wrap=True)


def comparison_markdown(comp: Comparison) -> str:
    """A markdown section: verdict, bucket counts, gated metrics and every flipped case, worst first."""
    lines = ["## Compared with baseline", ""]
    lines.append(
        f"Baseline `{comp.baseline.run_id}` ({comp.baseline.iterations} iteration(s)), "
        f"current `{comp.current.run_id}` ({comp.current.iterations} iteration(s))."
    )
    if comp.noise:
        lines.append(f"Noise floors from `{comp.noise}`.")
    if (line := noise_line(comp)) is not None:
        lines.append(line[0].upper() + line[1:] + ".")
    lines.append("")
    if not comp.comparable:
        lines.append("**Not comparable.**")
        lines.extend(f"- {r}" for r in comp.not_comparable)
        return "\n".join(lines) + "\n"
    lines.append(f"**Verdict: {comp.verdict}** (exit {comp.exit_code})")
    lines.append("")
    lines.append("| bucket | cases |")
    lines.append("|---|---:|")
    lines.extend(f"| {b} | {comp.counts.get(b, 0)} |" for b in BUCKETS)
    lines.append("")
    if comp.metrics:
        lines.append(
            "| metric | kind | better | baseline | current | Δ | tolerance | tolerance from | verdict |"
        )
        lines.append("|---|---|---|---:|---:|---:|---:|---|---|")
        lines.extend("| " + " | ".join(_metric_row(m)) + " |" for m in comp.metrics)
        lines.append("")
    if comp.pass_hat_k:
        ks = sorted(comp.pass_hat_k["baseline"])
        lines.append("| pass^k (all k attempts pass) | " + " | ".join(f"k={k}" for k in ks) + " |")
        lines.append("|---|" + "---:|" * len(ks))
        for side, vals in comp.pass_hat_k.items():
            lines.append(f"| {side} | " + " | ".join(_num(vals[k]) for k in ks) + " |")
        lines.append("")
    flips = comp.flipped()
    lines.append(f"### Flipped cases ({len(flips)}), worst first")
    lines.append("")
    if flips:
        lines.append("| case | category | bucket | baseline | current | Δ pass rate | why |")
        lines.append("|---|---|---|---|---|---:|---|")
        for c in flips:
            lines.append(
                f"| {c.case_id} | {c.category} | {c.bucket} | {c.baseline.short() if c.baseline else '-'} | "
                f"{c.current.short() if c.current else '-'} | {_delta(c.pass_rate_delta)} | {c.reason} |"
            )
    else:
        lines.append("No case changed its pass rate.")
    lines.append("")
    if comp.not_selected:
        lines.append(f"Not run (not selected by this targeted run): {', '.join(comp.not_selected)}.")
        lines.append("")
    if comp.warnings:
        lines.extend(f"> warning: {w}" for w in comp.warnings)
        lines.append("")
    return "\n".join(lines)


def print_gate(result: GateResult, console: Console) -> None:
    """Print each check of a gate result and its status line."""
    if result.status == "not-gated":
        console.print(f"gate: {escape(result.reason)}", highlight=False, soft_wrap=True)
        return
    console.print(
        f"[bold]gate[/bold] {escape(result.run)} against {escape(str(result.expectations))}",
        highlight=False,
        soft_wrap=True,
    )
    for check in result.checks:
        style = {True: "green", False: "bold red", None: "yellow"}[check.ok]
        console.print(f"  [{style}]{escape(check.describe())}[/]", highlight=False, soft_wrap=True)
    if result.skipped_cases:
        console.print(
            f"  skipped (with a reason, not unmeasured): {escape(', '.join(result.skipped_cases))}",
            highlight=False,
            soft_wrap=True,
        )
    if result.unmeasured_cases:
        console.print(
            f"  [yellow]not measured:[/yellow] {escape(', '.join(result.unmeasured_cases))}",
            highlight=False,
            soft_wrap=True,
        )
    style = "bold green" if result.status == "met" else "bold red"
    suffix = (
        "" if result.enforce or result.status == "met" else " (not enforced: pass --enforce to fail on it)"
    )
    console.print(
        f"[{style}]gate {result.status}: {escape(result.reason)}[/]{suffix}", highlight=False, soft_wrap=True
    )


def print_verdict(verdict: Verdict, console: Console) -> None:
    """Print what ``gate.hold`` decided: the comparison, completeness, the expectations, the baseline."""
    if verdict.comparison is not None:
        print_comparison(verdict.comparison, console)
    elif verdict.require_complete and verdict.incomplete and verdict.stopped is None:
        shown = ", ".join(verdict.unmeasured[:10]) + (" ..." if len(verdict.unmeasured) > 10 else "")
        console.print(
            f"[red]incomplete:[/red] not measured: {escape(shown or 'attempts unfinished')} (--require-complete)",
            highlight=False,
        )
    if verdict.expectations is not None:
        print_gate(verdict.expectations, console)
    if verdict.baseline_not_saved is not None:
        head, _, rest = verdict.baseline_not_saved.partition(": not saved:")
        console.print(f"[red]{escape(head)}: not saved:[/red]{escape(rest)}", highlight=False, soft_wrap=True)
    elif verdict.baseline_saved is not None:
        console.print(f"baseline saved to {escape(verdict.baseline_saved)}", highlight=False)
