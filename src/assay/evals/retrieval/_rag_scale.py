"""Scale tiers: index N documents, then time search and score BM25, dense and hybrid on the same corpus.

A tier's corpus is a BEIR corpus when the run has one (``--dataset beir:DIR``, or the ``full`` suite's
pinned corpora): the documents relevant to its queries first, then the rest in corpus order. Otherwise it
is the generated corpus: the labelled documents plus distractors generated from a fixed seed out of the
same kinds of sentences (ferries, trails, appliances, bylaws, laboratories, lighthouses), so they compete
for the same words. A tier larger than its BEIR corpus is padded with generated distractors, and the report
says so.
"""

from __future__ import annotations

import random
import resource
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from assay.embed import Embedder, embed_queries
from assay.errors import ConfigError
from assay.evals.retrieval._rag_data import BeirDataset, Question, RagDataset
from assay.evals.retrieval._rag_fusion import RANKERS, fusion_verdict, mean_ndcg, ranker_ndcg
from assay.evals.retrieval._rag_score import is_hit
from assay.rag import Chunk, DocumentIndex, query_documents

__all__ = [
    "MAX_TIER",
    "ScaleCorpus",
    "ScaleQuery",
    "beir_corpus",
    "labelled_corpus",
    "make_distractors",
    "measure_tier",
    "parse_tiers",
    "percentile",
    "tier_verdict",
]

#: the largest tier accepted (a 10,000-document tier embeds about 40,000 chunks of generated text)
MAX_TIER = 100_000

_PLACES = ["Harwick", "Sellen", "Port Aven", "Kessling", "Brannock", "Maddock", "Tolley", "Skerrow", "Vell",
           "Ridgeline", "Greenfield", "Northwind", "Aurora", "Cedar", "Falcon", "Lakeshore", "Gullhaven"]  # fmt: skip
_THINGS = ["ferry", "route", "trail", "kettle", "fume hood", "lighthouse", "cooperative", "board", "permit",
           "warranty", "vessel", "campsite", "tower", "container", "member", "meeting", "lantern", "battery"]  # fmt: skip
_UNITS = ["km", "metres", "litres", "passengers", "dollars", "months", "minutes", "grams", "people", "W", "%"]
_TEMPLATES = [
    "The {thing} at {place} was inspected in {year} and found to need {n} {unit} of repairs.",
    "Records show that {n} {unit} were reported for the {place} {thing} during {year}.",
    "Visitors to {place} often ask about the {thing}; staff say it takes about {n} {unit}.",
    "A review of the {thing} policy in {place} recommended a limit of {n} {unit} from {year}.",
    "The {place} committee approved a new {thing} costing {n} {unit} after a vote in {year}.",
    "Between {year} and {year2}, the {thing} near {place} handled {n} {unit} on average.",
    "Nobody at {place} remembers the {thing} ever exceeding {n} {unit} before {year}.",
    "The manual for the {thing} says to allow {n} {unit} before checking it again.",
]


def _sentence(rng: random.Random) -> str:
    year = rng.randint(1850, 2030)
    return rng.choice(_TEMPLATES).format(
        thing=rng.choice(_THINGS), place=rng.choice(_PLACES), year=year, year2=year + rng.randint(1, 9),
        n=rng.choice([rng.randint(2, 999), round(rng.uniform(0.1, 99), 1)]), unit=rng.choice(_UNITS),
    )  # fmt: skip


def make_distractors(folder: Path, count: int, seed: int = 0) -> list[Path]:
    """``count`` Markdown distractor documents (about 300-500 words each) in ``folder``; reused if present."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"distractor-{i:05d}.md"
        paths.append(path)
        if path.exists():
            continue
        rng = random.Random(f"{seed}:{i}")
        parts = [f"# {rng.choice(_PLACES)} {rng.choice(_THINGS)} notes {i}\n"]
        for _ in range(rng.randint(2, 4)):
            parts.append(f"## {rng.choice(_THINGS).capitalize()} in {rng.choice(_PLACES)}\n")
            for _ in range(rng.randint(2, 3)):
                parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(3, 5))) + "\n")
        path.write_text("\n".join(parts))
    return paths


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def parse_tiers(raw: str) -> list[int]:
    """``--scale-tiers`` as document counts: comma-separated whole numbers from 1 to MAX_TIER, no repeats."""
    try:
        tiers = [int(x) for x in str(raw).split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--scale-tiers {raw!r}: expected comma-separated document counts") from None
    if any(not 1 <= t <= MAX_TIER for t in tiers):
        raise ConfigError(f"--scale-tiers {raw!r}: every tier must be between 1 and {MAX_TIER:,} documents")
    if len(set(tiers)) != len(tiers):
        raise ConfigError(f"--scale-tiers {raw!r}: a tier is repeated")
    return tiers


# ------------------------------------------------------------------------------------------ corpora


@dataclass
class ScaleQuery:
    """A query with graded relevance per document; a labelled question also has its evidence quotes."""

    id: str
    text: str
    qrels: dict[str, int]
    question: Question | None = None

    def is_hit(self, chunk: Chunk) -> bool:
        if self.question is not None:
            return any(is_hit(chunk, e) for e in self.question.evidence)
        return self.qrels.get(chunk.doc_id, 0) > 0


@dataclass
class ScaleCorpus:
    """Where a tier's documents come from: files (labelled), texts (BEIR), both padded by distractors."""

    name: str
    queries: list[ScaleQuery]
    files: list[tuple[Path, str]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.files) + len(self.texts)


def labelled_corpus(dataset: RagDataset) -> ScaleCorpus:
    """The labelled documents, each question relevant (grade 1) to the documents of its evidence."""
    queries = [ScaleQuery(q.id, q.question, {e.doc: 1 for e in q.evidence}, q) for q in dataset.questions]
    return ScaleCorpus("generated", queries, files=[(d.path, d.id) for d in dataset.documents])


def beir_corpus(name: str, beir: BeirDataset) -> ScaleCorpus:
    """A BEIR corpus with the documents its queries judge relevant first, so any tier keeps some."""
    queries = [ScaleQuery(q, beir.queries[q], dict(beir.qrels[q])) for q in sorted(beir.qrels)]
    relevant = dict.fromkeys(d for q in queries for d, r in sorted(q.qrels.items()) if r > 0)
    order = list(relevant) + [d for d in beir.corpus if d not in relevant]
    texts = [(d, f"{beir.corpus[d][0]}\n\n{beir.corpus[d][1]}" if beir.corpus[d][0] else beir.corpus[d][1])
             for d in order]  # fmt: skip
    return ScaleCorpus(name, queries, texts=texts)


class _TimedEmbedder:
    """Passes calls to ``inner`` and adds up the seconds spent in it (embedding alone, for chunks/s)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.seconds = 0.0
        self.texts = 0

    @property
    def id(self) -> str:
        return self.inner.id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        t = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t
            self.texts += len(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return embed_queries(self.inner, texts)


def _folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


#: a scale tier's search must answer within this many ms at p95, beyond embedding the query
SEARCH_P95_LIMIT_MS = 50.0


def tier_verdict(tier: int, metrics: dict[str, float]) -> tuple[bool, str]:
    """The pass rule of a scale tier: (passed, the rules with the measured figures).

    Search p95 beyond the query embedding within :data:`SEARCH_P95_LIMIT_MS`, and (where the tier
    scored its rankers) hybrid nDCG@10 not below the better channel beyond the query-sampling noise
    (:func:`fusion_verdict`).
    """
    p = f"scale@{tier}/"
    beyond = metrics[p + "sdk_p95_ms"] - metrics[p + "query_embed_p50_ms"]
    ok = beyond <= SEARCH_P95_LIMIT_MS
    rule = f"search p95 beyond the query embedding <= {SEARCH_P95_LIMIT_MS:.0f} ms (measured {beyond:.1f} ms)"
    if all(f"{p}{m}_ndcg@10" in metrics for m in RANKERS):
        fusion = fusion_verdict(
            {m: metrics[f"{p}{m}_ndcg@10"] for m in RANKERS}, tolerance=metrics.get(p + "fusion_tolerance")
        )
        ok = ok and fusion.ok
        rule += "; " + fusion.text()
    return ok, rule


def _peak_rss_mb() -> float:
    """The process's resident-set high-water mark (ru_maxrss: KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _tier_queries(corpus: ScaleCorpus, kept: set[str]) -> list[ScaleQuery]:
    """The queries with a relevant document in the tier, judged on the tier's documents only."""
    out = []
    for q in corpus.queries:
        qrels = {d: r for d, r in q.qrels.items() if d in kept}
        if any(r > 0 for r in qrels.values()):
            out.append(ScaleQuery(q.id, q.text, qrels, q.question))
    return out


def measure_tier(
    tier: int, corpus: ScaleCorpus, embedder: Embedder, work: Path
) -> tuple[dict[str, float], dict[str, object]]:
    """Index ``tier`` documents of ``corpus`` (padded with distractors), time search, score three rankers."""
    t_wall = time.perf_counter()
    files = corpus.files[:tier]
    texts = corpus.texts[: max(0, tier - len(files))]
    distractors = make_distractors(work / "distractors", max(0, tier - len(files) - len(texts)))
    kept = {i for _, i in files} | {i for i, _ in texts}
    queries = _tier_queries(corpus, kept)

    timed = _TimedEmbedder(embedder)
    idx = DocumentIndex(timed, cache_dir=None)
    t0 = time.perf_counter()
    if texts:
        idx.index_texts(texts)
    if files or distractors:
        idx.index_documents(
            [p for p, _ in files] + distractors, [i for _, i in files] + [p.stem for p in distractors]
        )
    idx.search("warm-up", k=1)  # builds FAISS and BM25: part of indexing
    index_s = time.perf_counter() - t0
    embed_s = timed.seconds
    saved = work / f"index-{tier}"
    idx.save(saved)
    size_mb = _folder_size(saved) / 2**20

    embed_ms: list[float] = []
    for q in queries:
        t = time.perf_counter()
        embed_queries(embedder, [q.text])
        embed_ms.append((time.perf_counter() - t) * 1000)
    sdk_ms: list[float] = []
    agent_ms: list[float] = []
    sdk_hits = agent_hits = 0
    for q in queries:
        t = time.perf_counter()
        hits = idx.search(q.text, k=5)
        sdk_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        returned = query_documents(idx, q.text, max_chunks=8).hits
        agent_ms.append((time.perf_counter() - t) * 1000)
        sdk_hits += any(q.is_hit(h.chunk) for h in hits)
        agent_hits += any(q.is_hit(h.chunk) for h in returned)
    per_query = ranker_ndcg(idx, [(q.text, q.qrels) for q in queries])
    ndcg = mean_ndcg(per_query)
    n = max(1, len(queries))
    p = f"scale@{tier}/"
    metrics = {
        p + "documents": float(len(idx)),
        p + "generated_documents": float(len(distractors)),
        p + "queries": float(len(queries)),
        p + "chunks": float(idx.n_chunks),
        p + "index_s": index_s,
        p + "embed_s": embed_s,
        p + "chunks_per_s": idx.n_chunks / index_s if index_s > 0 else 0.0,
        p + "embedder_chunks_per_s": idx.n_chunks / embed_s if embed_s > 0 else 0.0,
        p + "peak_rss_mb": _peak_rss_mb(),
        p + "index_mb": size_mb,
        p + "sdk_p50_ms": percentile(sdk_ms, 50),
        p + "sdk_p95_ms": percentile(sdk_ms, 95),
        p + "agent_p50_ms": percentile(agent_ms, 50),
        p + "agent_p95_ms": percentile(agent_ms, 95),
        p + "query_embed_p50_ms": statistics.median(embed_ms) if embed_ms else 0.0,
        p + "sdk_recall@5": sdk_hits / n,
        p + "agent_r_returned": agent_hits / n,
        **{f"{p}{m}_ndcg@10": ndcg[m] for m in RANKERS},
    }
    metrics[p + "wall_s"] = time.perf_counter() - t_wall
    fusion = fusion_verdict(ndcg, per_query)
    metrics[p + "fusion_tolerance"] = (
        fusion.tolerance
    )  # the verdict's query-sampling noise, kept for re-reads
    generated = f" + {len(distractors):,} generated distractors" if distractors else ""
    own = len(files) + len(texts)
    source = (
        "labelled documents" if corpus.name == "generated" else f"documents of BEIR corpus {corpus.name!r}"
    )
    details: dict[str, object] = {
        "tier": tier,
        "corpus": corpus.name
        if not (distractors and corpus.name != "generated")
        else f"{corpus.name}+generated",
        "corpus_text": f"{own:,} {source}{generated}; {len(queries)} queries",
        "queries": len(queries),
        "fusion": fusion.text(),
        "peak_rss_note": "process high-water mark (ru_maxrss) at the end of the tier",
    }
    return metrics, details


# -------------------------------------------------------------------------------------------- report


def render_scale(metrics: dict[str, float | None], notes: dict[str, str]) -> list[str]:
    """The report's scale-tier tables: speed and memory, then nDCG@10 of the three rankers with the verdict."""
    tiers = sorted({int(k.split("/")[0][6:]) for k in metrics if k.startswith("scale@") and "/" in k})
    if not tiers:
        return []

    def v(tier: int, name: str, digits: int = 1) -> str:
        x = metrics.get(f"scale@{tier}/{name}")
        return "–" if x is None else f"{x:,.{digits}f}"

    lines = ["### Scale tiers", ""]
    lines += [f"- tier {t}: {notes[f'scale/{t}']}" for t in tiers if f"scale/{t}" in notes]
    lines += [
        "",
        "| tier | documents | chunks | wall s | index s | embedding s | chunks/s | embedder chunks/s | "
        "peak RSS MB | index MB | search p50 / p95 ms | agent p50 / p95 ms | query embed p50 ms |",
        "|---" * 13 + "|",
    ]
    for t in tiers:
        lines.append(
            f"| {t} | {v(t, 'documents', 0)} | {v(t, 'chunks', 0)} | {v(t, 'wall_s')} | {v(t, 'index_s')} | "
            f"{v(t, 'embed_s')} | {v(t, 'chunks_per_s')} | {v(t, 'embedder_chunks_per_s')} | "
            f"{v(t, 'peak_rss_mb', 0)} | {v(t, 'index_mb')} | {v(t, 'sdk_p50_ms')} / {v(t, 'sdk_p95_ms')} | "
            f"{v(t, 'agent_p50_ms')} / {v(t, 'agent_p95_ms')} | {v(t, 'query_embed_p50_ms')} |"
        )
    lines += [
        "",
        "chunks/s counts the whole build (extract, chunk, embed, FAISS, BM25); embedder chunks/s the time "
        "inside the embedder alone. Peak RSS is the process's high-water mark when the tier ended.",
        "",
        "| tier | queries | BM25 nDCG@10 | dense nDCG@10 | hybrid nDCG@10 | sdk R@5 | agent R@returned | fusion |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in tiers:
        p = f"scale@{t}/"
        got = {m: metrics.get(f"{p}{m}_ndcg@10") for m in RANKERS}
        scored = {m: x for m, x in got.items() if x is not None}
        tol = metrics.get(p + "fusion_tolerance")
        verdict = fusion_verdict(scored, tolerance=tol) if len(scored) == len(RANKERS) else None
        flag = (
            "–"
            if verdict is None
            else (
                (
                    "ok"
                    if verdict.margin >= 0
                    else f"ok ({verdict.margin:+.4f}, within {verdict.tolerance:.4f})"
                )
                if verdict.ok
                else f"**below {verdict.best}** ({verdict.margin:+.4f})"
            )
        )
        lines.append(
            f"| {t} | {v(t, 'queries', 0)} | {v(t, 'bm25_ndcg@10', 4)} | {v(t, 'dense_ndcg@10', 4)} | "
            f"{v(t, 'hybrid_ndcg@10', 4)} | {v(t, 'sdk_recall@5', 3)} | {v(t, 'agent_r_returned', 3)} | {flag} |"
        )
    lines.append("")
    return lines
