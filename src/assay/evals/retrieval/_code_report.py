"""Code search in the report: the semantic-vs-baselines tables, why a case failed, and plots."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay.runs import MEASURED_STATUSES, Attempt, MetricValue, Scorecard, Status

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = ["BASELINES", "baseline_deltas", "failure_reason", "file_recall_plot", "query_wins", "report_lines"]

#: the baselines every query is also searched with: metric prefix -> label
BASELINES = {"grep": "git grep", "bm25": "BM25 (whole files)"}

#: how many changed files a reason names before counting the rest
MAX_FILES = 5


def _rank(ranked: list[str], path: str) -> str:
    return str(ranked.index(path) + 1) if path in ranked else f">{len(ranked)}"


def baseline_deltas(metrics: dict[str, float | None], names: Sequence[str]) -> dict[str, tuple[str, float]]:
    """Per metric: (the best baseline's label, semantic minus that baseline), where both were measured."""
    out: dict[str, tuple[str, float]] = {}
    for name in names:
        sem = metrics.get(name)
        scored = [(v, b) for b in BASELINES if (v := metrics.get(f"{b}_{name}")) is not None]
        if sem is None or not scored:
            continue
        best, b = max(scored, key=lambda t: (t[0], t[1]))
        out[name] = (BASELINES[b], sem - best)
    return out


def query_wins(attempts: list[Attempt]) -> dict[str, MetricValue]:
    """Queries on which semantic beats grep, grep beats semantic, and BM25 beats semantic (file recall@5)."""
    queries = [a for a in attempts if a.category == "query" and a.status in (Status.PASS, Status.FAIL)]
    if not queries:
        return {}
    # per query (its mean over iterations), so the count does not grow with --iterations
    per_query: dict[str, list[dict[str, float]]] = {}
    for a in queries:
        per_query.setdefault(a.case_id, []).append(a.metrics)

    def mean(runs: list[dict[str, float]], key: str) -> float:
        return sum(r.get(key, 0.0) for r in runs) / len(runs)

    sem = {q: mean(r, "file_recall@5") for q, r in per_query.items()}
    grep = {q: mean(r, "grep_file_recall@5") for q, r in per_query.items()}
    n = len(per_query)
    out = {
        "semantic_wins@5": MetricValue(
            value=float(sum(sem[q] > grep[q] for q in sem)), n=n, kind="count", gated=False
        ),
        "grep_wins@5": MetricValue(
            value=float(sum(sem[q] < grep[q] for q in sem)),
            n=n,
            kind="count",
            gated=False,
            direction="lower",
        ),
    }
    # results from before the BM25 baseline have no bm25_ metrics: counted only where every run has them
    with_bm25 = [q for q, runs in per_query.items() if all("bm25_file_recall@5" in r for r in runs)]
    if with_bm25:
        better = sum(mean(per_query[q], "bm25_file_recall@5") > sem[q] for q in with_bm25)
        out["bm25_wins@5"] = MetricValue(
            value=float(better), n=len(with_bm25), kind="count", gated=False, direction="lower"
        )
    return out


def report_lines(scorecard: Scorecard, quality: Sequence[str], details: dict[str, dict[str, Any]]) -> str:
    """The code-search section: semantic beside each baseline and minus the best, per query, robustness."""
    m = scorecard.summary.metrics
    heads = " | ".join(BASELINES.values())
    lines = [
        "## Code search",
        "",
        f"| metric | semantic (hybrid) | {heads} | semantic − best baseline |",
        "|---|---|" + "---|" * len(BASELINES) + "---|",
    ]
    values = {k: v.value for k, v in m.items()}
    deltas = baseline_deltas(values, quality)
    for name in quality:
        sem = m.get(name)
        if sem is None or sem.value is None:
            continue
        cells = []
        for b in BASELINES:
            v = m.get(f"{b}_{name}")
            cells.append(f"{v.value:.3f}" if v is not None and v.value is not None else "-")
        cell = f"{sem.value:.3f}" + (f" [{sem.low:.3f}, {sem.high:.3f}]" if sem.low is not None else "")
        delta = f"{deltas[name][1]:+.3f} (vs {deltas[name][0]})" if name in deltas else "-"
        lines.append(f"| {name} | {cell} | " + " | ".join(cells) + f" | {delta} |")
    if "semantic_wins@5" in m:
        lines += [
            "",
            f"Per query on file recall@5: semantic better than grep on {m['semantic_wins@5'].value:.0f}, "
            f"grep better on {m['grep_wins@5'].value:.0f}"
            + (f", BM25 better than semantic on {m['bm25_wins@5'].value:.0f}" if "bm25_wins@5" in m else "")
            + f", of {m['semantic_wins@5'].n}.",
        ]
    queries = [c for c in scorecard.cases if c.category == "query" and "file_recall@5" in c.metrics]
    if queries:
        cols = [("file R@5", "file_recall@5"), ("MRR", "mrr"), ("fn R@10", "function_recall@10")]
        who = ["semantic", *BASELINES]
        lines += [
            "",
            "| query | " + " | ".join(f"{c} {w}" for c, _ in cols for w in who) + " |",
            "|---|" + "---|" * (len(cols) * len(who)),
        ]
        for c in queries:
            cm = c.metrics
            cells = []
            for _, key in cols:
                for w in who:
                    k = key if w == "semantic" else f"{w}_{key}"
                    cells.append(f"{cm[k]:.2f}" if k in cm else "-")
            lines.append(f"| {c.case_id[2:]} | " + " | ".join(cells) + " |")
    rob = [(cid, d) for cid, d in details.items() if cid.startswith("robust:")]
    if rob:
        lines += ["", "| robustness case | expected | outcome |", "|---|---|---|"]
        for cid, d in sorted(rob):
            lines.append(f"| {cid} | {d.get('expected', '')} | {d.get('outcome', d.get('skip', ''))} |")
    for cid, d in details.items():
        if cid.startswith("replay:"):
            lines += [
                "",
                f"Incremental replay of {len(d.get('commits', []))} commits ({cid}): "
                f"stale {d.get('stale_chunks')}, missing {d.get('missing_chunks')}, "
                f"min cosine {d.get('min_cosine')}, fresh index {d.get('fresh_s')} s, steps "
                + ", ".join(f"{s['update_s']} s/{s['chunks_embedded']} chunks" for s in d.get("steps", [])),
            ]
    return "\n".join(lines) + "\n"


def _query_reason(d: dict[str, Any]) -> str:
    sem, grep, bm25 = d.get("semantic_top10") or [], d.get("grep_top10") or [], d.get("bm25_top10")
    unindexed = set(d.get("unindexed_gold_files") or [])
    gold = d.get("gold_files") or []
    files = [
        f"{f} (not indexed)"
        if f in unindexed
        else f"{f} (semantic rank {_rank(sem, f)}, grep {_rank(grep, f)}"
        + (f", BM25 {_rank(bm25, f)})" if bm25 is not None else ")")
        for f in gold[:MAX_FILES]
    ]
    if len(gold) > MAX_FILES:
        files.append(f"{len(gold) - MAX_FILES} more")
    parts = []
    if d.get("query"):
        parts.append(f'query "{d["query"]}"')
    parts.append("changed files: " + (", ".join(files) or "none"))
    rank = d.get("first_gold_rank")
    parts.append(
        f"first changed file at semantic rank {rank}" if rank else "no changed file in the semantic results"
    )
    if d.get("pass_rule"):
        parts.append(f"rule: {d['pass_rule']}")
    if sem:
        parts.append("semantic top 5: " + ", ".join(sem[:5]))
    return "; ".join(parts)


def failure_reason(attempt: Attempt) -> str | None:
    """The code-search reason, or None when the details say nothing (the caller falls back)."""
    d = attempt.details
    if "gold_files" in d:
        return _query_reason(d)
    if "expected" in d and "outcome" in d:  # a robustness case
        extra = ", ".join(f"{k}={v}" for k, v in d.items() if k not in ("expected", "outcome", "mode"))
        return f"expected {d['expected']}, got {d['outcome']}" + (f" ({extra})" if extra else "")
    if "stale_chunks" in d:  # incremental replay
        return (
            f"after {len(d.get('commits') or [])} commits the incremental index differs from a fresh one: "
            f"{d['stale_chunks']} stale and {d.get('missing_chunks')} missing chunks, min cosine "
            f"{d.get('min_cosine')}, reloaded index equals memory: {d.get('stored_equals_memory')}"
            + (f"; e.g. {d['examples'][0]}" if d.get("examples") else "")
        )
    return None


def file_recall_plot(attempts: list[Attempt]) -> Plot | None:
    """Mean file recall@k, k = 1..10, of semantic search and of each baseline over the queries."""
    from assay.report.plotting import finish, subplots

    queries = [a.details for a in attempts if a.status in MEASURED_STATUSES and a.details.get("gold_files")]
    if not queries:
        return None
    ks = list(range(1, 11))
    fig, ax = subplots()
    for key, label, style in (
        ("semantic_top10", "semantic (hybrid)", "o-"),
        ("grep_top10", "git grep", "s--"),
        ("bm25_top10", "BM25 (whole files)", "^:"),
    ):
        if not all(key in d for d in queries):
            continue  # results from before that baseline
        curve = [
            sum(len(set(d.get(key, [])[:k]) & set(d["gold_files"])) / len(d["gold_files"]) for d in queries)
            / len(queries)
            for k in ks
        ]
        ax.plot(ks, curve, style, ms=3, label=label)
    ax.set_xlabel("k (files read)")
    ax.set_ylabel("file recall@k")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(ks)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    title = f"file recall@k over {len(queries)} queries: share of the files the fix changed in the first k"
    ax.set_title(title, fontsize=8)
    return finish(fig, "code_file_recall_at_k.png", title)
