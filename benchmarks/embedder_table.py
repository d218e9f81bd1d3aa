"""MiniLM against multilingual-e5-small on everything assay retrieves, side by side in one run (issue 38).

    python benchmarks/embedder_table.py                       # both embedders, every row (40 min on 2 busy cores)
    python benchmarks/embedder_table.py --embedders local --skip code
    python benchmarks/embedder_table.py --skip beir,code,memory     # speed and man-pages only (~15 min)
    python benchmarks/embedder_table.py --json out.json

Rows, for each embedder (``--embedders``, default ``local,e5-small``):

- **speed**: texts/s and CPU ms a text embedding 200 paragraphs of the stdlib's docstrings cut at 256 tokens
  (``benchmarks/embed_throughput.py``'s corpus), after a warm-up, in this process.
- **man-pages**: the BEIR-format set built from the Linux manual pages (``benchmarks/build_man_pages.py``,
  1,098 pages, queries = each page's NAME summary): nDCG@10 of hybrid, dense and BM25 on its ``test`` split
  (``--split dev`` for tuning), index build time, embedding ms a chunk and search p95.
- **BEIR**: the shipped BEIR-format set ``eval/retrieval/beir-mini`` (40 passages, 24 queries) on its own and
  padded to 300 documents with the scale tiers' generated distractors; nDCG@10 of hybrid, dense and BM25,
  the index build time and the search p95 (query embedding included), exactly as
  ``assay eval retrieval --component rag --dataset beir:DIR --scale-tiers N`` measures a tier.
- **rag pr**: the labelled ``pr`` documents (8 files, 51 questions): recall@5 of a hit chunk, nDCG@10.
- **code**: ``assay eval retrieval --component code`` on the ``pr`` (click) and ``jinja`` release histories:
  file recall@5, MRR, and the run's wall time (index builds included).
- **memory**: ``assay eval memory --dataset locomo:tests/fixtures/locomo/locomo_slice.json --retrieval-only``:
  evidence recall@5/@10 of the replayed conversations.

The code rows fetch the click and Jinja2 sdists once with pip into ``$ASSAY_HOME/repos`` (as the suites do).
The README ("The parts under test, as tools") has the figures of ``--skip code,memory`` on 2026-12-03 (load 4 to
5.5), the code rows of the full run on 2026-12-02 (40 minutes, load 4 to 15) and the memory row of
``--skip speed,man,beir,code`` on 2026-12-03, after memory recall moved to ``assay.embed.relatedness``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_man_pages import build as build_man_pages  # noqa: E402
from embed_throughput import stdlib_paragraphs  # noqa: E402

from assay.embed import get_embedder  # noqa: E402
from assay.evals.retrieval._rag import default_eval_dir  # noqa: E402
from assay.evals.retrieval._rag_data import load_beir, load_dataset, verify_labels  # noqa: E402
from assay.evals.retrieval._rag_scale import beir_corpus, labelled_corpus, measure_tier  # noqa: E402

ROWS = ("speed", "man", "beir", "code", "memory")  # beir includes the rag pr tier
_TIER_KEYS = ("hybrid_ndcg@10", "dense_ndcg@10", "bm25_ndcg@10", "index_s", "sdk_p95_ms", "sdk_recall@5")


def speed(spec: str, n: int) -> dict[str, float]:
    emb = get_embedder(spec)
    texts = stdlib_paragraphs(n)
    emb.embed(texts[:4])
    c, w = time.process_time(), time.perf_counter()
    emb.embed(texts)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    return {"texts_per_s": n / wall, "cpu_ms_per_text": 1000 * cpu / n}


def tiers(spec: str, work: Path) -> dict[str, float]:
    emb = get_embedder(spec)
    out: dict[str, float] = {}
    mini = beir_corpus("beir-mini", load_beir(default_eval_dir() / "beir-mini"))
    labelled = load_dataset(default_eval_dir() / "pr" / "dataset.json")
    verify_labels(labelled)  # places each evidence quote in its document's text
    for name, corpus, tier in (
        ("beir40", mini, 40),
        ("beir300", mini, 300),
        ("ragpr", labelled_corpus(labelled), 8),
    ):
        m, _ = measure_tier(tier, corpus, emb, work / f"{spec}-{name}")
        p = f"scale@{tier}/"
        for key in _TIER_KEYS:
            out[f"{name}/{key}"] = m[p + key]
        out[f"{name}/chunks"] = m[p + "chunks"]
    return out


def man_pages(spec: str, work: Path, split: str) -> dict[str, float]:
    """The ``man-pages`` set (1,098 Linux manual pages, built from the pinned packages): one split's queries."""
    beir = load_beir(build_man_pages(), split)
    corpus = beir_corpus("man-pages", beir)
    m, _ = measure_tier(len(beir.corpus), corpus, get_embedder(spec), work / f"{spec}-man-{split}")
    p = f"scale@{len(beir.corpus)}/"
    out = {f"man/{key}": m[p + key] for key in _TIER_KEYS}
    out["man/chunks"], out["man/queries"] = m[p + "chunks"], m[p + "queries"]
    out["man/embed_ms_per_chunk"] = 1000 * m[p + "embed_s"] / max(1.0, m[p + "chunks"])
    return out


def code(spec: str, work: Path) -> dict[str, float]:
    from assay.evals.retrieval import RetrievalBenchmark
    from assay.exec import RunOptions, run_benchmark

    out: dict[str, float] = {}
    for suite in ("pr", "jinja"):
        t = time.perf_counter()
        res = run_benchmark(
            RetrievalBenchmark,
            {"component": "code", "suite": suite, "embedder": spec},
            RunOptions(out=work / f"code-{spec}-{suite}", suite=suite, command_line=["embedder_table"]),
        )
        m = res.scorecard.summary.metrics
        out[f"code-{suite}/file_recall@5"] = m["file_recall@5"].value
        out[f"code-{suite}/mrr"] = m["mrr"].value
        out[f"code-{suite}/wall_s"] = time.perf_counter() - t
    return out


def memory(spec: str, work: Path) -> dict[str, float]:
    from assay.evals.memory import MemoryBenchmark
    from assay.exec import RunOptions, run_benchmark

    slice_ = ROOT / "tests" / "fixtures" / "locomo" / "locomo_slice.json"
    t = time.perf_counter()
    res = run_benchmark(
        MemoryBenchmark,
        {"dataset": f"locomo:{slice_}", "retrieval_only": True, "embedder": spec},
        RunOptions(out=work / f"memory-{spec}", command_line=["embedder_table"]),
    )
    m = res.scorecard.summary.metrics
    return {
        "memory/evidence_recall@5": m["evidence_recall@5"].value,
        "memory/evidence_recall@10": m["evidence_recall@10"].value,
        "memory/wall_s": time.perf_counter() - t,
    }


def _f(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def table(results: dict[str, dict[str, float]]) -> str:
    specs = list(results)
    lines = ["| measure | " + " | ".join(specs) + " |", "|---|" + "---:|" * len(specs)]
    names = [
        ("speed: texts/s at 256 tokens", "texts_per_s", 1),
        ("speed: CPU ms a text", "cpu_ms_per_text", 1),
        ("man-pages (1,098 docs, test split): hybrid nDCG@10", "man/hybrid_ndcg@10", 3),
        ("man-pages: dense nDCG@10", "man/dense_ndcg@10", 3),
        ("man-pages: BM25 nDCG@10", "man/bm25_ndcg@10", 3),
        ("man-pages: index build s", "man/index_s", 1),
        ("man-pages: embedding ms a chunk (index build)", "man/embed_ms_per_chunk", 1),
        ("man-pages: search p95 ms", "man/sdk_p95_ms", 1),
        *[
            (f"{label}: {what}", f"{key}/{m}", d)
            for key, label in (("beir40", "beir-mini (40 docs)"), ("beir300", "beir-mini + 260 generated"))
            for what, m, d in (
                ("hybrid nDCG@10", "hybrid_ndcg@10", 3),
                ("dense nDCG@10", "dense_ndcg@10", 3),
                ("BM25 nDCG@10", "bm25_ndcg@10", 3),
                ("index build s", "index_s", 1),
                ("search p95 ms", "sdk_p95_ms", 1),
            )
        ],
        ("rag pr (8 docs, 51 q): hybrid nDCG@10", "ragpr/hybrid_ndcg@10", 3),
        ("rag pr: dense nDCG@10", "ragpr/dense_ndcg@10", 3),
        ("rag pr: recall@5", "ragpr/sdk_recall@5", 3),
        ("rag pr: index build s", "ragpr/index_s", 1),
        ("code pr (click): file R@5", "code-pr/file_recall@5", 3),
        ("code pr: MRR", "code-pr/mrr", 3),
        ("code pr: run s (index builds included)", "code-pr/wall_s", 0),
        ("code jinja: file R@5", "code-jinja/file_recall@5", 3),
        ("code jinja: MRR", "code-jinja/mrr", 3),
        ("code jinja: run s", "code-jinja/wall_s", 0),
        ("memory (LoCoMo slice): evidence R@5", "memory/evidence_recall@5", 3),
        ("memory: evidence R@10", "memory/evidence_recall@10", 3),
        ("memory: run s", "memory/wall_s", 1),
    ]
    for label, key, digits in names:
        if any(key in results[s] for s in specs):
            lines.append(f"| {label} | " + " | ".join(_f(results[s].get(key), digits) for s in specs) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedders", default="local,e5-small")
    ap.add_argument("--n", type=int, default=200, help="paragraphs for the speed row")
    ap.add_argument("--skip", default="", help=f"comma-separated rows to leave out ({', '.join(ROWS)})")
    ap.add_argument(
        "--split", default="test", help="man-pages queries to score: test (reported) or dev (tuning)"
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    os.environ.setdefault("ASSAY_NO_LOCK", "1")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for spec in [s for s in args.embedders.split(",") if s]:
            r: dict[str, float] = {}
            for row, fn in (
                ("speed", lambda s: speed(s, args.n)),
                ("man", lambda s: man_pages(s, work, args.split)),
                ("beir", lambda s: tiers(s, work)),
                ("code", lambda s: code(s, work)),
                ("memory", lambda s: memory(s, work)),
            ):
                if row in skip:
                    continue
                t = time.perf_counter()
                try:
                    r.update(fn(spec))
                except Exception as exc:  # one broken row must not lose the hour the others took
                    print(f"{spec}: {row} FAILED: {exc!r}", file=sys.stderr, flush=True)
                    continue
                print(f"{spec}: {row} done in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
            results[spec] = r
    print(table(results))
    print(f"\nload average at the end: {statistics.fmean(os.getloadavg()):.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
