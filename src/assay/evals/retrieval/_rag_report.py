"""The rag benchmark's per-tag breakdown and its section of the run report."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from assay.evals.retrieval._rag_fusion import FusionVerdict, fusion_verdict
from assay.evals.retrieval._rag_scale import render_scale
from assay.runs import MEASURED_STATUSES, Attempt, MetricValue, Scorecard

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = [
    "TAG_METRICS",
    "beir_fusion",
    "failure_reason",
    "recall_curve_plot",
    "render_section",
    "tag_metrics",
    "tag_recall_plot",
]

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
            out[f"tag:{tag}/{m}"] = MetricValue(
                value=statistics.fmean(vals), n=len(vals), kind="proportion", gated=False
            )
    return out


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def beir_fusion(scorecard: Scorecard) -> FusionVerdict:
    """The fusion verdict of a run's BEIR queries, from their run means and per-query values."""
    m = scorecard.summary.metrics
    names = {"hybrid": "ndcg@10", "dense": "dense_ndcg@10", "bm25": "bm25_ndcg@10"}
    means = {r: float(m[n].value or 0.0) for r, n in names.items()}
    cases = [
        c for c in scorecard.cases if c.category == "beir" and all(n in c.metrics for n in names.values())
    ]
    per_query = {r: [c.metrics[n] for c in cases] for r, n in names.items()}
    return fusion_verdict(means, per_query)


def render_section(
    scorecard: Scorecard,
    notes: dict[str, str],
    failed: dict[str, str],
    degraded: dict[str, str] | None = None,
) -> str:
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
    lines += render_scale({k: mv.value for k, mv in m.items()}, notes)
    if "ndcg@10" in m:
        lines += ["### BEIR metrics", "", "| ranker | nDCG@10 | recall@100 | MRR@10 |", "|---|---|---|---|"]
        for label, p in (("bm25 only", "bm25_"), ("dense only", "dense_"), ("hybrid", "")):
            lines.append(f"| {label} | {v(p + 'ndcg@10')} | {v(p + 'recall@100')} | {v(p + 'mrr@10')} |")
        lines += ["", f"Fusion: {beir_fusion(scorecard).text()}.", ""]
    if failed:
        lines += ["### Documents that failed to index", ""]
        lines += [f"- `{doc}`: {msg}" for doc, msg in sorted(failed.items())]
        lines.append("")
    if degraded:
        lines += ["### Documents indexed degraded (part of their content is missing)", ""]
        lines += [f"- `{doc}`: {msg}" for doc, msg in sorted(degraded.items())]
        lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ why a case failed, plots

#: a question passes when its evidence is in the first PASS_RANK hybrid results (see ``_question``)
PASS_RANK = 5


def _evidence_text(ev: dict[str, Any]) -> str:
    where = ev.get("doc", "?") + (f" p{ev['page']}" if ev.get("page") is not None else "")
    quote = ev.get("quote")
    return f'{where} "{quote}"' if quote else where


def _question_reason(d: dict[str, Any], metrics: dict[str, float]) -> str:
    parts = []
    if d.get("question"):
        parts.append(f'question "{d["question"]}"')
    if d.get("evidence"):
        parts.append("evidence " + "; ".join(_evidence_text(e) for e in d["evidence"]))
    rank = d.get("sdk_rank")
    depth = d.get("depth", 20)
    parts.append(
        f"first hit at rank {rank} of the hybrid search (a pass needs the top {PASS_RANK})"
        if rank is not None
        else f"no hit in the hybrid search's top {depth}"
    )
    alone = [f"{m} {'hit' if metrics[f'{m}_recall@5'] else 'miss'}" for m in ("dense", "bm25")
             if f"{m}_recall@5" in metrics]  # fmt: skip
    if alone:
        parts.append("top 5 alone: " + ", ".join(alone))
    if d.get("agent_rank") is not None or "agent_returned" in d:
        agent = d.get("agent_rank")
        parts.append(
            f"query_documents returned {d.get('agent_returned')} chunks, evidence "
            + (f"at {agent}" if agent is not None else "not among them")
        )
    if d.get("top5"):
        parts.append("retrieved instead: " + ", ".join(d["top5"]))
    if d.get("verdict") and d.get("verdict") != "correct":
        parts.append(f"answer: {d['verdict']}")
    return "; ".join(parts)


def failure_reason(attempt: Attempt) -> str | None:
    """The rag benchmark's reason, or None when its details say nothing (the caller falls back)."""
    d = attempt.details
    if "sdk_rank" in d:
        return _question_reason(d, attempt.metrics)
    if "relevant" in d and "top10" in d:  # a BEIR query
        rel = set(d["relevant"])
        ranks = [f"{doc} at {d['top10'].index(doc) + 1}" if doc in d["top10"] else f"{doc} not in the top 10"
                 for doc in d["relevant"][:5]]  # fmt: skip
        shown = [doc for doc in d["top10"][:5] if doc not in rel]
        return "relevant: " + ", ".join(ranks) + (f"; retrieved instead: {', '.join(shown)}" if shown else "")
    if attempt.case_id.startswith("hard/") and d:
        return "measured: " + ", ".join(f"{k}={v}" for k, v in d.items())
    return None


def _ranks(attempts: list[Attempt], key: str) -> list[int | None]:
    return [a.details.get(key) for a in attempts if a.status in MEASURED_STATUSES and "sdk_rank" in a.details]


def recall_curve_plot(attempts: list[Attempt]) -> Plot | None:
    """Recall@k for k = 1..20 of the hybrid search (with a 95% Wilson band) and of ``query_documents``."""
    from assay.intervals import wilson_interval
    from assay.report.plotting import finish, subplots

    sdk = _ranks(attempts, "sdk_rank")
    if not sdk:
        return None
    ks = list(range(1, 21))
    n = len(sdk)
    hits = [sum(1 for r in sdk if r is not None and r <= k) for k in ks]
    band = [wilson_interval(h, n) for h in hits]
    fig, ax = subplots()
    ax.fill_between(ks, [b[0] for b in band], [b[1] for b in band], color="#4c72b0", alpha=0.2, step=None)
    ax.plot(ks, [h / n for h in hits], "o-", color="#4c72b0", ms=3, label=f"sdk hybrid (n={n})")
    agent = _ranks(attempts, "agent_rank")
    returned = max(
        (a.details.get("agent_returned") or 0 for a in attempts if "sdk_rank" in a.details), default=0
    )
    if agent and returned:
        ak = list(range(1, int(returned) + 1))
        ax.plot(ak, [sum(1 for r in agent if r is not None and r <= k) / len(agent) for k in ak], "s--",
                color="#dd8452", ms=3, label="query_documents (agent)")  # fmt: skip
    for mode, marker in (("dense", "^"), ("bm25", "v")):
        vals = [a.metrics[f"{mode}_recall@5"] for a in attempts
                if a.status in MEASURED_STATUSES and f"{mode}_recall@5" in a.metrics]  # fmt: skip
        if vals:
            ax.plot([5], [statistics.fmean(vals)], marker, ms=7, label=f"{mode} only @5")
    ax.axvline(PASS_RANK, color="#999", lw=0.8, ls=":")
    ax.set_xlabel("k (results read)")
    ax.set_ylabel("recall@k (evidence found)")
    ax.set_xticks([1, 3, 5, 10, 15, 20])
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    title = "recall@k: questions whose evidence is in the first k results"
    ax.set_title(title, fontsize=9)
    return finish(fig, "rag_recall_at_k.png", title)


def tag_recall_plot(attempts: list[Attempt]) -> Plot | None:
    """Hybrid recall@5 per question tag with 95% Wilson intervals (the ``tag:*`` rows, drawn)."""
    from assay.intervals import wilson_interval
    from assay.report.plotting import finish, subplots

    per: dict[str, list[float]] = defaultdict(list)
    for a in attempts:
        if a.status in MEASURED_STATUSES and "sdk_recall@5" in a.metrics:
            for tag in a.details.get("tags") or []:
                per[tag].append(a.metrics["sdk_recall@5"])
    if len(per) < 2:
        return None
    tags = sorted(per)
    rates = [statistics.fmean(per[t]) for t in tags]
    iv = [wilson_interval(round(sum(per[t])), len(per[t])) for t in tags]
    fig, ax = subplots(size=(max(5.0, 0.45 * len(tags) + 2), 3.6))
    ax.bar(tags, rates, yerr=[[max(0.0, r - lo) for r, (lo, _) in zip(rates, iv, strict=True)],
                              [max(0.0, hi - r) for r, (_, hi) in zip(rates, iv, strict=True)]],
           capsize=3, color="#55a868")  # fmt: skip
    for i, t in enumerate(tags):
        ax.annotate(f"{len(per[t])}", (i, 0.02), ha="center", fontsize=6, color="w")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("sdk recall@5")
    ax.tick_params(axis="x", labelrotation=60, labelsize=7)
    title = "hybrid recall@5 by question tag (95% Wilson interval; n in the bar)"
    ax.set_title(title, fontsize=9)
    return finish(fig, "rag_recall_by_tag.png", title)
