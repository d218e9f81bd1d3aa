"""The runs list, a run (scorecard, metrics, case table) and trends across runs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlencode

from assay.runs import CaseSummary, MetricValue, Scorecard

from ._html import duration, e, href, interval, num, page, pass_hat_k_text, pct, status_badge, table
from ._safety import SERVED_FILES
from ._serving import run_latency_plots
from ._store import Run, case_slug
from ._svg import Point, line_chart

#: rows of the case table per page
PAGE_SIZE = 200
_RECALL_AT = re.compile(r"^(.*)recall@(\d+)$")


def run_link(run: Run, root: str) -> str:
    return f'<a href="{root}{href("runs", run.key, "index.html")}">{e(run.key)}</a>'


def _counts(counts: dict[str, int]) -> str:
    return " ".join(f"{status_badge(k)}&nbsp;{v}" for k, v in counts.items() if v)


def _run_state(run: Run) -> str:
    if run.problem or run.card_problem:
        return "unreadable"
    if run.in_progress:
        return "in progress"
    card = run.head
    return "complete" if card is not None and card.complete else "incomplete"


def _progress(run: Run) -> str:
    done, planned = run.progress()
    share = done / planned if planned else 0.0
    return f'<progress max="{planned}" value="{done}"></progress> {done}/{planned} attempts ({pct(share)})'


def _select(name: str, values: Sequence[str], chosen: str | None = None) -> str:
    """A filter: rows whose ``data-NAME`` equals the chosen value stay shown (see static/view.js)."""
    opts = "".join(f"<option{' selected' if v == chosen else ''}>{e(v)}</option>" for v in values)
    return f'<label>{name} <select data-filter="{name}"><option value="">all</option>{opts}</select></label> '


def runs_page(runs: Sequence[Run]) -> str:
    """Every run, newest first, with filters by benchmark, suite, model, commit and state."""
    rows, attrs, facets = [], [], []
    for run in runs:
        card, meta = run.head, run.meta
        model = (card.config.model if card else meta.config.model if meta else None) or ""
        commit = (meta.git_commit if meta else None) or (card.commits[0] if card and card.commits else "")
        state = _run_state(run)
        if card is not None:
            s = card.summary
            rate = pct(s.pass_rate) + (
                f" <small>[{pct(s.pass_rate_low)}, {pct(s.pass_rate_high)}]</small>"
                if s.pass_rate_low is not None
                else ""
            )
            counts, cost = (
                _counts(s.counts),
                "—" if card.cost.cost_usd is None else f"${card.cost.cost_usd:.4f}",
            )
        elif run.in_progress:
            rate, counts, cost = "—", _progress(run), "—"
        else:
            rate, counts, cost = "—", e(run.problem or run.card_problem or "no scorecard"), "—"
        took = duration(meta.elapsed_s) if meta else "—"
        rows.append(
            [
                run_link(run, ""),
                e(run.benchmark),
                e(run.suite),
                e(model),
                e(commit[:10]),
                e(run.started[:19]),
                took,
                counts,
                rate,
                cost,
                e(state),
            ]
        )
        facet = {
            "benchmark": run.benchmark,
            "suite": run.suite,
            "model": model,
            "commit": commit[:10],
            "state": state,
        }
        facets.append(facet)
        attrs.append(" ".join(f'data-{k}="{e(v)}"' for k, v in facet.items()))
    filters = "".join(
        _select(name, sorted({f[name] for f in facets}))
        for name in ("benchmark", "suite", "model", "commit", "state")
    )
    head = [
        "run",
        "benchmark",
        "suite",
        "model",
        "commit",
        "started (UTC)",
        "took",
        "statuses",
        "pass rate",
        "cost",
        "state",
    ]
    body = (
        f'<div class="filters" data-for="runs">{filters}</div>'
        if runs
        else '<p class="muted">no run directories found</p>'
    )
    body += table(head, rows, "runs filterable", attrs)
    return page("Runs", body, "", [("runs", "")])


def metrics_table(card: Scorecard) -> str:
    rows = []
    for name, mv in card.summary.metrics.items():
        rows.append(
            [
                e(name),
                num(mv.value),
                interval(mv),
                str(mv.n),
                e(mv.kind or "—"),
                e(mv.direction),
                "yes" if mv.gated else "no",
                num(mv.tolerance),
                e(mv.unit),
            ]
        )
    head = ["metric", "value", "interval", "n", "kind", "better", "gated", "tolerance", "unit"]
    return table(head, rows, "metrics")


def recall_curves(metrics: dict[str, MetricValue]) -> str:
    """recall@k against k for every family of ``<prefix>recall@<k>`` metrics with three or more k."""
    families: dict[str, list[tuple[int, MetricValue]]] = {}
    for name, mv in metrics.items():
        if (m := _RECALL_AT.match(name)) and not name.startswith("tag:"):
            families.setdefault(m.group(1), []).append((int(m.group(2)), mv))
    out = []
    for prefix, pts in sorted(families.items()):
        if len(pts) < 3:
            continue
        pts.sort(key=lambda p: p[0])
        points = [Point(f"k={k}", mv.value, mv.low, mv.high) for k, mv in pts]
        out.append(
            f"<figure>{line_chart(points, f'{prefix}recall@k', zero_one=True)}<figcaption>{e(prefix)}recall@k</figcaption></figure>"
        )
    return "".join(out)


#: what the case table filters on, and how each is read from a case
CASE_FILTERS = ("status", "stability", "category")


def worst_status(c: CaseSummary) -> str:
    """The status a case is filtered by: its worst attempt's."""
    order = ("ERROR", "INFRA_ERROR", "TIMEOUT", "FAIL", "NOT_RUN", "SKIPPED", "PASS")
    return next((s for s in order if c.counts.get(s)), "")


def _facet(c: CaseSummary, name: str) -> str:
    return worst_status(c) if name == "status" else c.stability if name == "stability" else c.category


def _case_rows(run: Run, card: Scorecard, cases: Sequence) -> tuple[list[list[str]], list[str]]:
    rows, attrs = [], []
    for c in cases:
        link = f'<a href="{href("case", case_slug(c.case_id) + ".html")}">{e(c.case_id)}</a>'
        spread = "—" if c.score_mean is None else f"{num(c.score_mean, 3)} ± {num(c.score_std or 0.0, 2)}"
        cost = "—" if c.usage is None or c.usage.cost_usd is None else f"${c.usage.cost_usd:.4f}"
        worst = worst_status(c)
        rows.append(
            [
                link,
                e(c.category),
                _counts(c.counts),
                e(c.stability),
                pct(c.pass_rate),
                *([pass_hat_k_text(c.pass_hat_k)] if card.summary.pass_hat_k else []),
                spread,
                duration(c.mean_elapsed_s),
                cost,
            ]
        )
        attrs.append(
            f'data-status="{worst}" data-stability="{e(c.stability)}" data-category="{e(c.category)}"'
        )
    return rows, attrs


def compared_baseline(run: Run, others: Sequence[Run]) -> Run | None:
    """The run's baseline when the run was made with ``--compare`` and the baseline is under --dir too."""
    saved = run.sidecar("comparison.json")
    path = (saved or {}).get("baseline", {}).get("path") if isinstance(saved, dict) else None
    if not isinstance(path, str):
        return None
    try:
        target = Path(path).resolve()
    except OSError:
        return None
    return next(
        (o for o in others if o.key != run.key and o.finished and o.path.resolve() == target),
        None,
    )


def run_page(
    run: Run,
    page_no: int,
    others: Sequence[Run],
    filters: Mapping[str, str] | None = None,
    served: bool = False,
) -> str:
    """A run: provenance, summary, metrics, plots and one page of the case table."""
    root = "../../"
    card, meta = run.scorecard, run.meta
    parts = []
    if meta is not None:
        cfg = meta.config
        parts.append(
            '<dl class="meta">'
            + "".join(
                f"<dt>{e(k)}</dt><dd>{e(v)}</dd>"
                for k, v in (
                    ("benchmark", f"{meta.benchmark} · suite {meta.suite} ({meta.suite_version})"),
                    ("subject", cfg.subject),
                    ("model", cfg.model),
                    ("judge model", cfg.judge_model),
                    ("embedder", cfg.embedder),
                    ("commit", (meta.git_commit or "—") + (" (dirty)" if meta.git_dirty else "")),
                    ("started", meta.started_at.isoformat()),
                    ("took", duration(meta.elapsed_s)),
                    ("iterations", meta.iterations),
                    ("machine", f"{meta.hostname} · {meta.os} · {meta.cpu_count} cpus"),
                    ("command", " ".join(meta.command_line)),
                )
            )
            + "</dl>"
        )
    files = [
        p.name
        for p in sorted(run.path.glob("*"))
        if SERVED_FILES.match(p.name) and p.is_file() and not p.is_symlink()
    ]
    if files:
        parts.append(
            "<p>files: " + " · ".join(f'<a href="{href("files", f)}">{e(f)}</a>' for f in files) + "</p>"
        )
    same = [
        o
        for o in others
        if o.key != run.key and o.finished and o.benchmark == run.benchmark and o.suite == run.suite
    ]
    if card is not None:
        s = card.summary
        parts.append(
            f'<p class="summary">pass rate <b>{pct(s.pass_rate)}</b> [{pct(s.pass_rate_low)}, {pct(s.pass_rate_high)}]'
            f" · measured {s.measured}/{s.total} · {_counts(s.counts)}"
            + (f" · judged pass rate {pct(s.judged_pass_rate)}" if s.judged_pass_rate is not None else "")
            + (f" · pass^k {pass_hat_k_text(s.pass_hat_k)}" if s.pass_hat_k else "")
            + (f" · cost ${card.cost.cost_usd:.4f}" if card.cost.cost_usd is not None else " · cost unknown")
            + ("" if card.complete else ' · <b class="fail">incomplete</b>')
            + "</p>"
        )
        links = []
        older = [o for o in same if (o.started, o.key) < (run.started, run.key)]
        if older:
            prev = older[0]
            links.append(
                f'compare with <a href="{root}{href("compare", prev.key, run.key + ".html")}">{e(prev.key)}</a> '
                "(the previous run of this suite)"
            )
        base = compared_baseline(run, others)
        if base is not None:
            links.append(
                f'<a href="{root}{href("compare", base.key, run.key + ".html")}">compare with its baseline '
                f"{e(base.key)}</a>"
            )
        links.append(
            f'<a href="{root}{href("trends", run.benchmark, case_slug(run.suite) + ".html")}">trends</a>'
        )
        parts.append("<p>" + " · ".join(links) + "</p>")
        parts.append("<h2>Metrics</h2>" + metrics_table(card) + recall_curves(s.metrics))
        if run.benchmark == "benchmark":
            parts.append(run_latency_plots(run))
        chosen = {k: v for k, v in (filters or {}).items() if k in CASE_FILTERS and v}
        opts = {k: sorted({_facet(c, k) for c in card.cases}) for k in CASE_FILTERS}
        cases = [c for c in card.cases if all(_facet(c, k) == v for k, v in chosen.items())]
        pages = max(1, -(-len(cases) // PAGE_SIZE))
        page_no = min(max(page_no, 1), pages)
        chunk = cases[(page_no - 1) * PAGE_SIZE : page_no * PAGE_SIZE]
        rows, attrs = _case_rows(run, card, chunk)
        qs = ("?" + urlencode(chosen)) if chosen else ""
        pager = " ".join(
            f"<b>{i}</b>"
            if i == page_no
            else f'<a href="{"index.html" if i == 1 else f"page-{i}.html"}{qs}">{i}</a>'
            for i in range(1, pages + 1)
        )
        filters_html = "".join(_select(k, vs, chosen.get(k)) for k, vs in opts.items())
        # served: a filter reloads the page with the filter applied to every case; in a bundle it hides rows
        where = ' data-query="1"' if served else ""
        shown = f"{len(cases)} of {len(card.cases)}" if chosen else str(len(card.cases))
        parts.append(
            f'<h2>Cases ({shown})</h2><div class="filters"{where}>{filters_html}</div>'
            + (f'<p class="pager">page {pager}</p>' if pages > 1 else "")
            + table(
                [
                    *("case", "category", "statuses", "stability", "pass rate"),
                    *(["pass^k"] if s.pass_hat_k else []),
                    *("score ± sd", "mean time", "cost"),
                ],
                rows,
                "cases filterable",
                attrs,
            )
        )
    elif run.in_progress:
        parts.append(f'<p class="summary">in progress: {_progress(run)}</p>')
        statuses = run.index.latest_status()
        rows = [
            [
                f'<a href="{href("case", case_slug(cid) + ".html")}">{e(cid)}</a>',
                " ".join(status_badge(s) for s in st),
            ]
            for cid, st in statuses.items()
        ]
        parts.append("<h2>Attempts so far</h2>" + table(["case", "statuses"], rows, "cases"))
    else:
        parts.append(f'<p class="fail">{e(run.problem or run.card_problem or "no scorecard")}</p>')
    return page(f"Run {run.key}", "".join(parts), root, [("runs", "index.html"), (run.key, "")])


def backlog_rate(card: Scorecard, backlog: Sequence[str]) -> float | None:
    """Pass rate pooled over the run's measured attempts of the backlog scenarios."""
    ids = set(backlog)
    measured = sum(c.measured for c in card.cases if c.case_id in ids)
    return sum(c.passed for c in card.cases if c.case_id in ids) / measured if measured else None


def trends_page(
    benchmark: str, suite: str, runs: Sequence[Run], backlog: Sequence[str] | None, target: float | None
) -> str:
    """Pass rate and every metric across runs of one benchmark and suite, oldest first, with intervals."""
    root = "../../"
    runs = sorted((r for r in runs if r.scorecard is not None), key=lambda r: r.started)
    cards = [(r, r.scorecard) for r in runs]

    def label(r: Run, card: Scorecard) -> str:
        commit = (r.meta.git_commit if r.meta else None) or (card.commits[0] if card.commits else "")
        return f"{r.started[5:16].replace('T', ' ')} {commit[:7]}".strip()

    parts = [
        f"<p>{len(runs)} runs, oldest first; each point is a run (hover for its id), bars are intervals.</p>"
    ]
    pts = [
        Point(label(r, c), c.summary.pass_rate, c.summary.pass_rate_low, c.summary.pass_rate_high, r.key)
        for r, c in cards
    ]
    parts.append(f"<h2>pass rate</h2>{line_chart(pts, 'pass rate', zero_one=True)}")
    if backlog is not None:
        bpts = [Point(label(r, c), backlog_rate(c, backlog), title=r.key) for r, c in cards]
        note = f"target {target:g}" if target is not None else "no target set (assay view --backlog-target)"
        parts.append(
            f"<h2>backlog pass rate</h2><p>{len(backlog)} backlog scenarios · {note}</p>{line_chart(bpts, 'backlog pass rate', target=target, zero_one=True)}"
        )
    names: list[str] = []
    for _, c in cards:
        names += [n for n in c.summary.metrics if n not in names]
    for name in names:
        mpts = []
        gated, unit = False, ""
        for r, c in cards:
            mv = c.summary.metrics.get(name)
            mpts.append(
                Point(
                    label(r, c),
                    mv.value if mv else None,
                    mv.low if mv else None,
                    mv.high if mv else None,
                    r.key,
                )
            )
            if mv is not None:
                gated, unit = gated or mv.gated, mv.unit
        chart = line_chart(mpts, name, unit)
        parts.append(
            f"<details{' open' if gated else ''}><summary>{e(name)}{' (gated)' if gated else ''}</summary>{chart}</details>"
        )
    rows = [[run_link(r, root), e(label(r, c)), pct(c.summary.pass_rate)] for r, c in cards]
    parts.append("<h2>Runs</h2>" + table(["run", "when · commit", "pass rate"], rows))
    return page(
        f"Trends: {benchmark} · {suite}",
        "".join(parts),
        root,
        [("trends", "trends.html"), (f"{benchmark} · {suite}", "")],
    )


def trends_index(groups: dict[tuple[str, str], list[Run]]) -> str:
    rows = [
        [f'<a href="{href("trends", b, case_slug(s) + ".html")}">{e(b)} · {e(s)}</a>', str(len(rs))]
        for (b, s), rs in sorted(groups.items())
    ]
    return page("Trends", table(["benchmark · suite", "runs"], rows), "", [("trends", "")])
