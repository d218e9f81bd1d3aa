"""Scale tiers: the labelled documents plus generated distractors, measured at 10, 100, 1000... documents.

Distractors are generated from a fixed seed out of the same kinds of sentences as the labelled documents
(ferries, trails, appliances, bylaws, laboratories, lighthouses), so they compete for the same words.
"""

from __future__ import annotations

import random
import resource
import statistics
import time
from pathlib import Path

from assay.embed import Embedder
from assay.evals.retrieval._rag_data import Question, RagDataset
from assay.evals.retrieval._rag_score import first_hit_rank
from assay.rag import DocumentIndex, query_documents

__all__ = ["make_distractors", "measure_tier", "percentile"]

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


def _folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


#: a scale tier passes when search answers within this many ms at p95, beyond embedding the query
SEARCH_P95_LIMIT_MS = 50.0


def tier_verdict(tier: int, metrics: dict[str, float]) -> tuple[bool, str]:
    """The pass rule of a scale tier: (passed, the rule with the measured figure)."""
    p = f"scale@{tier}/"
    beyond = metrics[p + "sdk_p95_ms"] - metrics[p + "query_embed_p50_ms"]
    rule = f"search p95 beyond the query embedding <= {SEARCH_P95_LIMIT_MS:.0f} ms (measured {beyond:.1f} ms)"
    return beyond <= SEARCH_P95_LIMIT_MS, rule


def measure_tier(
    tier: int, dataset: RagDataset, embedder: Embedder, work: Path, questions: list[Question]
) -> tuple[dict[str, float], dict[str, object]]:
    """Index ``tier`` documents (labelled first, then distractors) and time both query pipelines."""
    labelled = [(d.path, d.id) for d in dataset.documents][:tier]
    distractors = make_distractors(work / "distractors", max(0, tier - len(labelled)))
    paths = [p for p, _ in labelled] + distractors
    ids = [i for _, i in labelled] + [p.stem for p in distractors]

    idx = DocumentIndex(embedder, cache_dir=None)
    t0 = time.perf_counter()
    idx.index_documents(paths, ids)
    idx.search("warm-up", k=1)  # builds FAISS and BM25: part of indexing
    index_s = time.perf_counter() - t0
    saved = work / f"index-{tier}"
    idx.save(saved)
    size_mb = _folder_size(saved) / 2**20

    qtexts = [q.question for q in questions]
    embed_ms: list[float] = []
    for text in qtexts:
        t = time.perf_counter()
        embedder.embed([text])
        embed_ms.append((time.perf_counter() - t) * 1000)
    sdk_ms: list[float] = []
    agent_ms: list[float] = []
    sdk_hits = agent_hits = 0
    for q in questions:
        t = time.perf_counter()
        hits = idx.search(q.question, k=5)
        sdk_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        returned = query_documents(idx, q.question, max_chunks=8).hits
        agent_ms.append((time.perf_counter() - t) * 1000)
        sdk_hits += first_hit_rank([h.chunk for h in hits], q) is not None
        agent_hits += first_hit_rank([h.chunk for h in returned], q) is not None
    n = max(1, len(questions))
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    p = f"scale@{tier}/"
    metrics = {
        p + "documents": float(len(idx)),
        p + "chunks": float(idx.n_chunks),
        p + "index_s": index_s,
        p + "chunks_per_s": idx.n_chunks / index_s if index_s > 0 else 0.0,
        p + "peak_rss_mb": peak_rss_mb,
        p + "index_mb": size_mb,
        p + "sdk_p50_ms": percentile(sdk_ms, 50),
        p + "sdk_p95_ms": percentile(sdk_ms, 95),
        p + "agent_p50_ms": percentile(agent_ms, 50),
        p + "agent_p95_ms": percentile(agent_ms, 95),
        p + "query_embed_p50_ms": statistics.median(embed_ms) if embed_ms else 0.0,
        p + "sdk_recall@5": sdk_hits / n,
        p + "agent_r_returned": agent_hits / n,
    }
    return metrics, {"tier": tier, "questions": len(questions), "peak_rss_note": "process high-water mark"}
