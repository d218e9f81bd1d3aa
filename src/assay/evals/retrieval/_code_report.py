"""Code search in the report: why a case failed (the query, the changed files and their ranks) and plots."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.runs._records import MEASURED_STATUSES, Attempt

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = ["failure_reason", "file_recall_plot"]

#: how many changed files a reason names before counting the rest
MAX_FILES = 5


def _rank(ranked: list[str], path: str) -> str:
    return str(ranked.index(path) + 1) if path in ranked else f">{len(ranked)}"


def _query_reason(d: dict[str, Any]) -> str:
    sem, grep = d.get("semantic_top10") or [], d.get("grep_top10") or []
    unindexed = set(d.get("unindexed_gold_files") or [])
    gold = d.get("gold_files") or []
    files = [
        f"{f} (not indexed)"
        if f in unindexed
        else f"{f} (semantic rank {_rank(sem, f)}, grep {_rank(grep, f)})"
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
    """Mean file recall@k, k = 1..10, of semantic search and of the git-grep baseline over the queries."""
    from assay.report._plots import finish, subplots

    queries = [a.details for a in attempts if a.status in MEASURED_STATUSES and a.details.get("gold_files")]
    if not queries:
        return None
    ks = list(range(1, 11))
    fig, ax = subplots()
    for key, label, style in (
        ("semantic_top10", "semantic (hybrid)", "o-"),
        ("grep_top10", "git grep", "s--"),
    ):
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
