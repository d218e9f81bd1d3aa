"""The rag benchmark's per-tag breakdown and its section of the run report."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

from assay.runs._records import MEASURED_STATUSES, Attempt, MetricValue, Scorecard

__all__ = ["TAG_METRICS", "render_section", "tag_metrics"]

TAG_METRICS = ("sdk_recall@5", "sdk_mrr", "agent_r_returned")


def tag_metrics(attempts: list[Attempt]) -> dict[str, MetricValue]:
    """``tag:<tag>/<metric>`` means over the questions carrying each tag (not gated)."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for a in attempts:
        if a.status not in MEASURED_STATUSES:
            continue
        for tag in a.details.get("tags") or []:
            for m in TAG_METRICS:
                if m in a.metrics:
                    values[tag][m].append(a.metrics[m])
    out: dict[str, MetricValue] = {}
    for tag in sorted(values):
        for m, vals in values[tag].items():
            out[f"tag:{tag}/{m}"] = MetricValue(value=statistics.fmean(vals), n=len(vals), gated=False)
    return out


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render_section(scorecard: Scorecard, notes: dict[str, str], failed: dict[str, str]) -> str:
    m = scorecard.summary.metrics

    def v(name: str, digits: int = 3) -> str:
        mv = m.get(name)
        return _fmt(mv.value if mv else None, digits)

    lines = ["## Document retrieval", ""]
    if "sdk_mrr" in m:
        lines += [
            "| pipeline | R@1 | R@3 | R@5 | R@10 | R@20 | MRR | doc R@5 |",
            "|---|---|---|---|---|---|---|---|",
            f"| sdk (hybrid) | {v('sdk_recall@1')} | {v('sdk_recall@3')} | {v('sdk_recall@5')} | "
            f"{v('sdk_recall@10')} | {v('sdk_recall@20')} | {v('sdk_mrr')} | {v('sdk_doc_recall@5')} |",
            f"| dense only | | | {v('dense_recall@5')} | | | | |",
            f"| bm25 only | | | {v('bm25_recall@5')} | | | | |",
            "",
            f"agent pipeline (`query_documents`): R@returned {v('agent_r_returned')}, "
            f"{v('agent_returned', 1)} chunks returned on average, document recall {v('agent_doc_recall')}.",
            "",
        ]
    if "answer_accuracy" in m:
        lines += [f"Answer accuracy (numeric and exact questions): {v('answer_accuracy')}.", ""]
    tags = sorted({k.split("/")[0][4:] for k in m if k.startswith("tag:")})
    if tags:
        lines += [
            "### By question tag",
            "",
            "| tag | n | sdk R@5 | sdk MRR | agent R@returned |",
            "|---|---|---|---|---|",
        ]
        for t in tags:
            n = m[f"tag:{t}/sdk_recall@5"].n if f"tag:{t}/sdk_recall@5" in m else 0
            lines.append(
                f"| {t} | {n} | {v(f'tag:{t}/sdk_recall@5')} | {v(f'tag:{t}/sdk_mrr')} | "
                f"{v(f'tag:{t}/agent_r_returned')} |"
            )
        lines.append("")
    hard = [c for c in scorecard.cases if c.category == "hard"]
    if hard:
        lines += ["### Hard cases", "", "| case | result | detail |", "|---|---|---|"]
        for c in hard:
            result = (
                next(iter(c.counts))
                if len(c.counts) == 1
                else ", ".join(f"{k}×{n}" for k, n in c.counts.items())
            )
            note = notes.get(c.case_id, "").replace("|", "/")
            lines.append(f"| {c.case_id.removeprefix('hard/')} | {result} | {note} |")
        lines.append("")
    tiers = sorted({int(t) for t in re.findall(r"^scale@(\d+)/", "\n".join(m), re.MULTILINE)})
    if tiers:
        cols = ["documents", "chunks", "index_s", "chunks_per_s", "peak_rss_mb", "index_mb", "sdk_p50_ms",
                "sdk_p95_ms", "agent_p50_ms", "agent_p95_ms", "query_embed_p50_ms", "sdk_recall@5",
                "agent_r_returned"]  # fmt: skip
        lines += [
            "### Scale tiers",
            "",
            "| tier | " + " | ".join(cols) + " |",
            "|---" * (len(cols) + 1) + "|",
        ]
        for tier in tiers:
            cells = [v(f"scale@{tier}/{c}", 0 if c in ("documents", "chunks") else 2) for c in cols]
            lines.append(f"| {tier} | " + " | ".join(cells) + " |")
        lines.append("")
    if "ndcg@10" in m:
        lines += ["### BEIR metrics", "", "| ranker | nDCG@10 | recall@100 | MRR@10 |", "|---|---|---|---|"]
        for label, p in (("hybrid (RRF)", ""), ("dense only", "dense_"), ("bm25 only", "bm25_")):
            lines.append(f"| {label} | {v(p + 'ndcg@10')} | {v(p + 'recall@100')} | {v(p + 'mrr@10')} |")
        lines.append("")
    if failed:
        lines += ["### Documents that failed to index", ""]
        lines += [f"- `{doc}`: {msg}" for doc, msg in sorted(failed.items())]
        lines.append("")
    return "\n".join(lines)
