"""Quality of the code index's ranking, one choice at a time, on the release-history suites.

For each suite (``pr``: click's releases, ``jinja``: Jinja2's; both assembled from pinned sdists in the repo
cache), every query is searched at its base commit by the two baselines (git grep, whole-file BM25), by the
index as it ships, and by the index with one ranking choice turned off (``SearchSettings``). It prints
file recall@1/5/10, MRR and function recall@5/10 per row, then the shipped ranking minus the best baseline.
A choice is worth keeping when turning it off loses on every suite.

    python benchmarks/code_search_ablation.py                          # pr and jinja, local MiniLM embedder
    python benchmarks/code_search_ablation.py --suite pr --embedder hash --max-queries 4
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from assay.codeindex import CodeIndex  # noqa: E402
from assay.codeindex._search import SearchSettings, search  # noqa: E402
from assay.embed import get_embedder  # noqa: E402
from assay.evals.retrieval._code import DEPTH, _metrics  # noqa: E402
from assay.evals.retrieval._code_bm25 import bm25_rank_files, bm25_rank_symbols  # noqa: E402
from assay.evals.retrieval._code_data import (  # noqa: E402
    DATA_DIR,
    SDIST_SUITES,
    changed_symbols,
    checkout,
    ensure_pr_repo,
    file_at,
    load_queries,
    parse_patch,
    relevant_files,
)
from assay.evals.retrieval._code_grep import grep_rank_files, grep_rank_symbols  # noqa: E402
from assay.evals.retrieval._code_report import baseline_deltas  # noqa: E402

COLUMNS = (
    "file_recall@1",
    "file_recall@5",
    "file_recall@10",
    "mrr",
    "function_recall@5",
    "function_recall@10",
)
#: each row turns one choice of the shipped ranking off
ABLATIONS: dict[str, dict[str, object]] = {
    "index (as shipped)": {},
    "- whole-file channel": {"file_channel": False},
    "- query weights": {"weighted_query": False},
    "- several chunks per file": {"agg_chunks": 1},
    "- symbol terms": {"symbol_terms": 0},
    "- plain-text files halved": {"text_file_weight": 1.0},
    "+ weighted symbols": {"weighted_symbols": True},
}


def _gold_symbols(worktree: Path, commit: str, patch: str) -> list[str]:
    out: list[str] = []
    for fp in parse_patch(patch):
        if fp.old_path is not None and (src := file_at(worktree, commit, fp.old_path)) is not None:
            out += [f"{fp.old_path}::{s}" for s in changed_symbols(fp.old_path, src, fp)]
    return list(dict.fromkeys(out))


def run_suite(suite: str, embedder: object, cache: Path, work: Path, max_queries: int | None) -> dict:
    queries_file, pins = SDIST_SUITES[suite]
    _, bare, _ = ensure_pr_repo(cache, offline=False, sources=DATA_DIR / pins)
    queries = sorted(load_queries(DATA_DIR / queries_file), key=lambda q: (q.created_at, q.instance_id))
    queries = queries[:max_queries] if max_queries else queries
    worktree = work / suite / "tree"
    idx = CodeIndex(worktree, embedder, index_dir=work / suite / "index")  # type: ignore[arg-type]
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q in queries:
        checkout(bare, worktree, q.base_commit)
        idx.update()
        gold, gold_syms = relevant_files(q.patch), _gold_symbols(worktree, q.base_commit, q.patch)
        text = q.problem_statement
        chunks = [(c.path, c.symbol, c.text) for c in idx.chunks]
        grep_files, weights = grep_rank_files(worktree, text, idx.files)
        grep_syms = [f"{p}::{s}" for p, s in grep_rank_symbols(chunks, weights)]
        texts = {p: (worktree / p).read_text(encoding="utf-8", errors="replace") for p in idx.files}
        bm25_syms = [f"{p}::{s}" for p, s in bm25_rank_symbols(chunks, text)]
        ranked = {
            "git grep": (grep_files, grep_syms),
            "BM25 (whole files)": (bm25_rank_files(texts, text), bm25_syms),
        }
        for name, change in ABLATIONS.items():
            settings = dataclasses.replace(SearchSettings(), **change)  # type: ignore[arg-type]
            files = [h.path for h in search(idx, text, DEPTH, level="file", settings=settings)]
            syms = search(idx, text, DEPTH, level="symbol", settings=settings)
            ranked[name] = (files, [f"{h.path}::{h.symbol}" for h in syms if h.symbol])
        for name, (files, syms) in ranked.items():
            for metric, value in _metrics("", files, syms, gold, gold_syms).items():
                rows[name][metric].append(value)
    return {name: {m: sum(v) / len(v) for m, v in metrics.items()} for name, metrics in rows.items()}


def print_table(suite: str, n: int, means: dict[str, dict[str, float]]) -> None:
    print(f"\n== {suite}: {n} queries")
    print(f"{'':28s}" + "".join(f"{c:>20s}" for c in COLUMNS))
    for name, m in means.items():
        print(f"{name:28s}" + "".join(f"{m[c]:20.3f}" if c in m else f"{'-':>20s}" for c in COLUMNS))
    shipped = means["index (as shipped)"]
    flat = dict(shipped)
    for base, prefix in (("git grep", "grep"), ("BM25 (whole files)", "bm25")):
        flat |= {f"{prefix}_{k}": v for k, v in means[base].items()}
    deltas = baseline_deltas(flat, COLUMNS)
    print(
        f"{'index - best baseline':28s}"
        + "".join(f"{deltas[c][1]:+20.3f}" if c in deltas else "" for c in COLUMNS)
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", action="append", choices=sorted(SDIST_SUITES), help="default: every one")
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--repo-cache", type=Path, default=None, help="default $ASSAY_HOME/repos")
    ap.add_argument(
        "--work", type=Path, default=None, help="where worktrees and indexes go (default: a temp dir)"
    )
    ap.add_argument("--max-queries", type=int, default=None, help="the oldest N queries of each suite")
    args = ap.parse_args(argv)
    from assay._util import assay_home

    cache = args.repo_cache or assay_home() / "repos"
    embedder = get_embedder(args.embedder)
    with tempfile.TemporaryDirectory(prefix="code-ablation-") as tmp:
        work = args.work or Path(tmp)
        for suite in args.suite or sorted(SDIST_SUITES, key=lambda s: s != "pr"):
            means = run_suite(suite, embedder, cache, work, args.max_queries)
            n = len(load_queries(DATA_DIR / SDIST_SUITES[suite][0]))
            print_table(suite, min(n, args.max_queries or n), means)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
