"""The serving section of the report: a table per load level, accuracy, plots, and why a level failed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.evals.serving._results import LEVELS_DIR, RESULTS_FILE, LevelResult, read_results
from assay.runs import Attempt, Scorecard

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = ["failure_reason", "render_section", "serving_plots"]

LATENCY_PLOT = "serving_latency_vs_throughput.png"
TTFT_PLOT = "serving_ttft_distribution.png"
E2E_PLOT = "serving_e2e_distribution.png"


def _f(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def _levels(run_dir: Path | None) -> list[LevelResult]:
    if run_dir is None:
        return []
    results = read_results(run_dir)
    return results.levels if results is not None else []


def serving_plots(run_dir: Path) -> list[Plot]:
    """Latency percentiles vs throughput, and the TTFT and E2E latency CDFs per load level."""
    from assay.report.plotting import ecdf_plot, finish, subplots

    levels = _levels(run_dir)
    measured = [lv for lv in levels if lv.figures.get("completed")]
    if not measured:
        return []
    plots: list[Plot] = []
    # latency percentiles vs achieved throughput, one point per level (iterations pooled by mean)
    by_case: dict[str, list[LevelResult]] = {}
    for lv in measured:
        by_case.setdefault(lv.case_id, []).append(lv)
    points = []
    for case_id, runs in by_case.items():

        def mean(fam: str, stat: str, runs: list[LevelResult] = runs) -> float | None:
            vals = [
                r.figures["latency_ms"][fam][stat]
                for r in runs
                if r.figures["latency_ms"][fam][stat] is not None
            ]
            return sum(vals) / len(vals) if vals else None

        tput = [r.figures["request_throughput"] for r in runs if r.figures.get("request_throughput")]
        if not tput:
            continue
        points.append(
            (
                sum(tput) / len(tput),
                case_id,
                {
                    (fam, stat): mean(fam, stat)
                    for fam in ("ttft", "tpot", "e2e")
                    for stat in ("median", "p90", "p99")
                },
            )
        )
    points.sort()
    if points:
        fig, axes = subplots(size=(13, 3.8), ncols=3)
        xs = [p[0] for p in points]
        for ax, fam in zip(axes, ("ttft", "tpot", "e2e"), strict=True):
            for stat, style in (("median", "o-"), ("p90", "s--"), ("p99", "^:")):
                ys = [p[2][(fam, stat)] for p in points]
                pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
                if pairs:
                    ax.plot([x for x, _ in pairs], [y for _, y in pairs], style, label=stat)
            ax.set_title(f"{fam.upper()} (ms)")
            ax.set_xlabel("achieved throughput (req/s)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        for x, case_id, _ in points:
            axes[0].annotate(
                case_id,
                (x, 0),
                xycoords=("data", "axes fraction"),
                fontsize=7,
                rotation=90,
                va="bottom",
                alpha=0.6,
            )
        plots.append(finish(fig, LATENCY_PLOT, "latency percentiles vs achieved throughput"))
    # empirical CDFs per level of the measured, successful requests
    for key, file, label in (("ttft_s", TTFT_PLOT, "TTFT"), ("e2e_s", E2E_PLOT, "E2E latency")):
        series = {
            case_id: [
                r[key] * 1000
                for lv in runs
                for r in lv.requests
                if r["ok"] and not r["warmup"] and r.get(key) is not None
            ]
            for case_id, runs in by_case.items()
        }
        plot = ecdf_plot(file, f"{label} distribution per load level (CDF)", series, f"{label} (ms)")
        if plot is not None:
            plots.append(plot)
    return plots


def failure_reason(attempt: Attempt) -> str | None:
    """Why a level failed: the pass rule it broke and the requests that failed (HTTP status and message)."""
    d = attempt.details
    failed = d.get("failed_requests") or []
    if not failed and not d.get("failure"):
        return None
    level = d.get("level") or {}
    load = ", ".join(f"{k}={level[k]}" for k in ("concurrency", "rate") if level.get(k) is not None)
    parts = [str(d["failure"])] if d.get("failure") else []
    if failed:
        parts.append(
            f"{d.get('requests_failed', len(failed))} of {d.get('requests_measured', '?')} measured requests "
            f"failed{f' ({load})' if load else ''}"
        )
        parts += [
            f"request #{r.get('index')}: {r.get('error') or ('timed out' if r.get('timed_out') else 'failed')}"
            for r in failed
        ]
    return "; ".join(parts)


def _cell(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split()).replace("|", "/").replace("`", "'")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _spread_rows(levels: list[LevelResult]) -> list[str]:
    by_case: dict[str, list[LevelResult]] = {}
    for lv in levels:
        if lv.figures.get("completed"):
            by_case.setdefault(lv.case_id, []).append(lv)
    rows = []
    for case_id, runs in by_case.items():
        if len(runs) < 2:
            continue
        cells = []
        for getter, digits in (
            (lambda f: f.get("request_throughput"), 2),
            (lambda f: f.get("output_throughput"), 1),
            (lambda f: f["latency_ms"]["ttft"]["median"], 1),
            (lambda f: f["latency_ms"]["tpot"]["median"], 2),
            (lambda f: f["latency_ms"]["e2e"]["median"], 1),
        ):
            vals = [v for r in runs if (v := getter(r.figures)) is not None]
            cells.append(f"{_f(min(vals), digits)}–{_f(max(vals), digits)}" if vals else "–")
        rows.append(f"| {case_id} | " + " | ".join(cells) + " |")
    return rows


def render_section(
    card: Scorecard,
    run_dir: Path | None,
    slo: dict[str, float],
    reasons: dict[str, str] | None = None,
) -> str:
    """``reasons``: why each level without figures has none (its error, skip or not-run reason)."""
    levels = _levels(run_dir)
    lines = ["## Serving speed", ""]
    target: dict[str, Any] = next((lv.target for lv in levels if lv.target), {})
    if target:
        ctx = target.get("ctx_size")
        if target.get("model"):
            lines.append(f"- target: `{target['model']}` ({target.get('server_kind') or 'unknown server'})")
        source = f" (source: {target['ctx_source']})" if target.get("ctx_source") else ""
        lines.append(f"- context size: {ctx if ctx is not None else 'unknown'}{source}")
    sources: dict[str, int] = {}
    for lv in levels:
        for k, v in (lv.figures.get("token_sources") or {}).items():
            sources[k] = sources.get(k, 0) + v
    if sources:
        lines.append("- token counts from: " + ", ".join(f"{k} ({v} requests)" for k, v in sources.items()))
    if slo:
        lines.append("- SLO for goodput: " + ", ".join(f"{k} ≤ {v * 1000:g} ms" for k, v in slo.items()))
    lines.append(
        f"- iterations: {card.iterations}; figures are means over iterations; warm-up requests excluded"
    )
    lines += [
        "",
        "| level | load | done/sent | err | t/o | req/s | out tok/s | TTFT p50 | TTFT p99 | TPOT p50 "
        "| ITL p50 | E2E p50 | E2E p99 | goodput |",
        "|" + "---|" * 14,
    ]
    load_of = {lv.case_id: lv.level for lv in levels}
    for case in card.cases:
        m = case.metrics
        if not m:
            status = ", ".join(k for k, v in case.counts.items() if v)
            reason = (reasons or {}).get(case.case_id)
            why = f"{status}: {_cell(reason)}" if reason else status
            lines.append(f"| {case.case_id} | – | – | – | – | – | – | – | – | – | – | – | – | {why} |")
            continue
        level = load_of.get(case.case_id, {})
        load = []
        if level.get("rate") is not None:
            rate = m.get("offered_rate")
            load.append("rate max" if level["rate"] == "inf" else f"rate {_f(rate, 2)}/s")
        if level.get("concurrency"):
            load.append(f"c={level['concurrency']}")
        lines.append(
            f"| {case.case_id} | {' '.join(load)} | {_f(m.get('completed'), 0)}/{_f(m.get('requests'), 0)} "
            f"| {_f(m.get('errors'), 0)} | {_f(m.get('timeouts'), 0)} | {_f(m.get('request_throughput'), 2)} "
            f"| {_f(m.get('output_throughput'))} | {_f(m.get('ttft_median_ms'))} | {_f(m.get('ttft_p99_ms'))} "
            f"| {_f(m.get('tpot_median_ms'), 2)} | {_f(m.get('itl_median_ms'), 2)} | {_f(m.get('e2e_median_ms'))} "
            f"| {_f(m.get('e2e_p99_ms'))} | {_f(m.get('goodput'), 2)} |"
        )
    lines.append("")
    lines.append(
        "Latencies in ms. TPOT = (E2E − TTFT) / (output tokens − 1); ITL pools every gap between streamed "
        "tokens."
    )
    spread = _spread_rows(levels)
    if spread:
        lines += [
            "",
            f"Spread across {card.iterations} iterations (min–max):",
            "",
            "| level | req/s | out tok/s | TTFT p50 | TPOT p50 | E2E p50 |",
            "|---|---|---|---|---|---|",
        ]
        lines += spread
    acc_cases = [c for c in card.cases if "accuracy_category" in c.metrics]
    if acc_cases:
        work: dict[str, Any] = next((lv.workload for lv in levels if lv.workload), {})
        lines += ["", "### Email-triage accuracy", ""]
        if work:
            how = (
                "answers constrained by a JSON-schema response_format (`--structured`)"
                if work.get("structured")
                else "free-text answers (no response_format)"
            )
            lines.append(f"- {how}; output cap {work.get('max_tokens')} tokens")
            major = work.get("majority_labels") or {}
            if major:
                shown = ", ".join(
                    f"{k} = {v if isinstance(v, str) else ('yes' if v else 'no')}" for k, v in major.items()
                )
                lines.append(f"- majority-class baseline answers {shown} (the mailbox's most common labels)")
        lines += [
            "- accuracy counts an unparsed field as wrong; parsed = the answer named a valid value",
            "",
            "| level | row | category | urgent | personal | all three |",
            "|---|---|---|---|---|---|",
        ]
        for c in acc_cases:
            m = c.metrics
            rows = (
                ("accuracy", "accuracy_{}"),
                ("parsed", "parse_rate_{}"),
                ("majority baseline", "baseline_{}"),
            )
            for label, key in rows:
                if key.format("category") not in m:
                    continue
                alls = "answer_parse_rate" if label == "parsed" else key.format("all")
                lines.append(
                    f"| {c.case_id} | {label} | {_f(m.get(key.format('category')), 3)} "
                    f"| {_f(m.get(key.format('urgent')), 3)} | {_f(m.get(key.format('personal')), 3)} "
                    f"| {_f(m.get(alls), 3)} |"
                )
        modes = [
            (c.case_id, c.metrics["answer_mode_share"]) for c in acc_cases if "answer_mode_share" in c.metrics
        ]
        if modes:
            lines += [
                "",
                "Share of complete answers that are the level's most common answer (1.0: the same answer "
                "for every email, no skill whatever the accuracy): "
                + ", ".join(f"{cid} {share:.3f}" for cid, share in modes),
            ]
        pooled: dict[str, list[float]] = {}
        for lv in levels:
            for cat, row in lv.per_category.items():
                acc = pooled.setdefault(cat, [0.0, 0.0, 0.0, 0.0])
                n = row["n"]
                acc[0] += row["category"] * n
                acc[1] += row["urgent"] * n
                acc[2] += row["personal"] * n
                acc[3] += n
        if pooled:
            lines += [
                "",
                "Per labelled category (all levels pooled):",
                "",
                "| category | n | category right | urgent right | personal right |",
                "|---|---|---|---|---|",
            ]
            for cat, (c_ok, u_ok, p_ok, n) in pooled.items():
                lines.append(f"| {cat} | {n:.0f} | {c_ok / n:.3f} | {u_ok / n:.3f} | {p_ok / n:.3f} |")
    lines.append("")
    if run_dir is not None and (run_dir / RESULTS_FILE).is_file():
        lines.append(
            f"Every request's timings: [{RESULTS_FILE}]({RESULTS_FILE}) (one file per level in `{LEVELS_DIR}/`)."
        )
    else:
        lines.append(f"No level finished, so there is no `{RESULTS_FILE}`: no request timings were kept.")
    return "\n".join(lines)
