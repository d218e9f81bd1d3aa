"""Compare two runs: the verdict and exit code are :func:`assay.gate.compare`'s, the same as ``assay compare``."""

from __future__ import annotations

from collections.abc import Sequence

from assay.gate import BUCKETS, CaseComparison, Comparison, compare

from ._html import e, href, num, page, table
from ._serving import compare_latency_plots
from ._store import Run, case_slug


def comparison_of(base: Run, cur: Run) -> Comparison:
    """The gate's comparison of two runs: nothing here decides a bucket, a metric verdict or the exit code."""
    return compare(base.loaded(), cur.loaded())


def _side(side: object) -> str:
    return "—" if side is None else e(side.short())  # type: ignore[attr-defined]


def _case_row(c: CaseComparison, base: Run, cur: Run, root: str) -> list[str]:
    slug = case_slug(c.case_id) + ".html"
    links = []
    if c.current is not None:
        links.append(f'<a class="to-case" href="{root}{href("runs", cur.key, "case", slug)}">current</a>')
    if c.baseline is not None and c.case_id in base.index.by_case:
        links.append(f'<a href="{root}{href("runs", base.key, "case", slug)}">baseline</a>')
    delta = "—" if c.pass_rate_delta is None else f"{c.pass_rate_delta:+.2f}"
    return [
        e(c.case_id),
        f'<span class="bucket {e(c.bucket)}">{e(c.bucket)}</span>',
        _side(c.baseline),
        _side(c.current),
        delta,
        e(c.reason),
        " · ".join(links),
    ]


def compare_page(base: Run, cur: Run) -> str:
    root = "../../"
    comp = comparison_of(base, cur)
    ok = comp.exit_code == 0
    parts = [
        f'<p class="verdict {"pass" if ok else "fail"}" data-exit-code="{comp.exit_code}">'
        f"<b>{e(comp.verdict)}</b> · exit code <b>{comp.exit_code}</b></p>",
        f'<p>baseline <a href="{root}{href("runs", base.key, "index.html")}">{e(base.key)}</a> → current '
        f'<a href="{root}{href("runs", cur.key, "index.html")}">{e(cur.key)}</a></p>',
    ]
    for reason in comp.not_comparable:
        parts.append(f'<p class="fail">not comparable: {e(reason)}</p>')
    for w in comp.warnings:
        parts.append(f'<p class="warning">warning: {e(w)}</p>')
    if comp.comparable:
        counts = " · ".join(f"{b} {n}" for b, n in comp.counts.items() if n)
        parts.append(f"<p>{e(counts)}</p>")
        head = ["case", "bucket", "baseline", "current", "Δ pass rate", "why", "attempts"]
        flipped = comp.flipped()
        first_ids = {c.case_id for c in flipped}
        regressed = [c for c in comp.bucket("regressed") if c.case_id not in first_ids]
        first = regressed + flipped
        parts.append(f"<h2>Flipped and regressed ({len(first)})</h2>")
        parts.append(
            table(head, [_case_row(c, base, cur, root) for c in first], "flipped")
            if first
            else '<p class="muted">none</p>'
        )
        rows = [
            [
                e(m.name),
                e(m.kind or "—"),
                e(m.direction),
                num(m.baseline),
                num(m.current),
                num(m.delta),
                f"{num(m.tolerance)} ({e(m.tolerance_source)})",
                "yes" if m.gated else "no",
                f'<span class="mverdict {e(m.verdict if m.gated else "not-gated")}">{e(m.label)}</span>',
            ]
            for m in comp.metrics
        ]
        parts.append(
            "<h2>Metrics</h2>"
            + table(
                ["metric", "kind", "better", "baseline", "current", "Δ", "tolerance", "gated", "verdict"],
                rows,
                "metrics",
            )
        )
        if cur.benchmark == "benchmark":
            parts.append(compare_latency_plots(base, cur))
        order = {b: i for i, b in enumerate(BUCKETS)}
        rest = sorted((c for c in comp.cases if c not in first), key=lambda c: (order[c.bucket], c.case_id))
        parts.append(
            f"<h2>All other cases ({len(rest)})</h2>"
            + table(head, [_case_row(c, base, cur, root) for c in rest], "cases")
        )
    return page(
        f"Compare {base.key} → {cur.key}",
        "".join(parts),
        root,
        [("compare", "compare.html"), (f"{base.key} → {cur.key}", "")],
    )


def previous_pairs(runs: Sequence[Run]) -> list[tuple[Run, Run]]:
    """(previous, run) for each finished run that has an older finished run of its benchmark and suite."""
    done = sorted((r for r in runs if r.finished), key=lambda r: r.started)
    pairs, last = [], {}
    for run in done:
        group = (run.benchmark, run.suite)
        if group in last:
            pairs.append((last[group], run))
        last[group] = run
    return pairs[::-1]


def compare_index(runs: Sequence[Run], pairs: Sequence[tuple[Run, Run]] | None) -> str:
    """Pick two runs (served), or the comparisons a bundle holds."""
    done = [r for r in runs if r.finished]
    parts = []
    if pairs is None:
        opts = "".join(
            f'<option value="{e(r.key)}">{e(r.key)} ({e(r.benchmark)} · {e(r.suite)})</option>' for r in done
        )
        parts.append(
            '<form id="compare-form" action="compare.html" method="get">'
            f'<label>baseline <select name="base">{opts}</select></label> '
            f'<label>current <select name="cur">{opts}</select></label> <button type="submit">compare</button></form>'
        )
        pairs = previous_pairs(done)
    rows = [
        [
            f'<a href="{href("compare", b.key, c.key + ".html")}">{e(b.key)} → {e(c.key)}</a>',
            e(c.benchmark),
            e(c.suite),
        ]
        for b, c in pairs
    ]
    parts.append(
        "<h2>Each run against the previous run of its suite</h2>"
        + table(["comparison", "benchmark", "suite"], rows)
    )
    return page("Compare", "".join(parts), "", [("compare", "")])
