"""Cost of the code index on a real history replay: chunks embedded per commit, time, throughput, suite wall time.

Replays a real history (default: the ``pr`` suite's click releases, assembled from pinned sdists under
``$ASSAY_HOME/repos``; or the last ``--commits`` first-parent commits of ``--repo``, any git repository)
into one worktree and one index with a fresh vector cache, and prints:

- per commit: files changed, chunks, chunks whose embedded text is new (not in the previous commit's index),
  chunks embedded, chunks that came back by content (from the index or the cache), what a build without the
  cache embeds (every chunk of an added or changed file), and the update's time; then embedded / new over the
  commits after the first (goal: at most 1.2);
- fresh (no cache) against incremental time on the last commit, and the replayed index's vectors against
  the fresh build's (min cosine per chunk, goal at least 0.9999);
- throughput: index chunks/s of a fresh build (no cache) beside the raw embedder's texts/s on the same texts in
  one ``embed`` call, the median over ``--rounds`` back-to-back pairs (goal: at least 0.85), with where the
  index's time goes;
- the damaged vector-cache cases (each entry must be rebuilt, never served);
- search latency p50/p95 on the last commit;
- the whole ``pr`` suite's wall time with ``ASSAY_VECTOR_CACHE=off`` (before) and with the cache (after), both
  runs' chunks embedded, and whether every case scored the same (``--no-suite`` skips this part).

    python benchmarks/code_index_bench.py                         # click history, local MiniLM ONNX embedder
    python benchmarks/code_index_bench.py --repo PATH --commits 10 --embedder hash --no-suite
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from assay._util import assay_home  # noqa: E402
from assay.codeindex import CodeIndex  # noqa: E402
from assay.codeindex.index import embed_text  # noqa: E402
from assay.embed import get_embedder  # noqa: E402
from assay.evals.retrieval._code_data import DATA_DIR, checkout, ensure_pr_repo, git  # noqa: E402
from assay.evals.retrieval._code_robust import CACHE_DAMAGE_MODES, run_cache_damage_case  # noqa: E402


def _history(args: argparse.Namespace) -> tuple[str, Path, list[tuple[str, str]]]:
    """(label, repository to clone, [(name, commit)] oldest first)."""
    if args.repo is not None:
        repo = args.repo.resolve()
        if not (repo / ".git").exists() and not (repo / "HEAD").exists():
            raise SystemExit(f"error: --repo {repo} is not a git repository")
        out = git(repo, "rev-list", "--first-parent", "-n", str(args.commits), args.rev).split()[::-1]
        return str(repo), repo, [(c[:10], c) for c in out]
    _, bare, commits = ensure_pr_repo(args.repo_cache, offline=args.offline)
    order = sorted(commits, key=lambda v: tuple(int(p) for p in v.split(".")))
    return "click releases (the pr suite's history)", bare, [(v, commits[v]) for v in order]


def _replay(embedder: Any, source: Path, commits: list[tuple[str, str]], tmp: Path) -> dict[str, Any]:
    worktree = tmp / "worktree"
    idx = CodeIndex(worktree, embedder, index_dir=tmp / "index", vector_cache=tmp / "vector-cache")
    steps: list[dict[str, Any]] = []
    previous: set[str] = set()
    for name, commit in commits:
        checkout(source, worktree, commit)
        s = idx.update()
        texts = [embed_text(c) for c in idx.chunks]
        steps.append(
            {
                "commit": name,
                "files_changed": s.files_added + s.files_changed + s.files_removed,
                "chunks": s.chunks_total,
                "new_text": sum(t not in previous for t in texts),
                "embedded": s.chunks_embedded,
                "by_content": s.chunks_reused + s.chunks_cached,
                "without_cache": s.chunks_embedded + s.chunks_reused + s.chunks_cached,
                "update_s": round(s.total_s, 3),
            }
        )
        previous = set(texts)
        print(
            f"  {name:<12} files changed {steps[-1]['files_changed']:>4}  chunks {s.chunks_total:>5}  new text "
            f"{steps[-1]['new_text']:>5}  embedded {s.chunks_embedded:>5}  by content {steps[-1]['by_content']:>5}  "
            f"without cache {steps[-1]['without_cache']:>5}  {s.total_s:7.2f} s",
            flush=True,
        )
    return {"index": idx, "steps": steps}


def _fresh(embedder: Any, worktree: Path, where: Path) -> tuple[CodeIndex, Any, float]:
    idx = CodeIndex(worktree, embedder, index_dir=where, vector_cache=False)
    t0 = time.perf_counter()
    stats = idx.update()
    return idx, stats, time.perf_counter() - t0


def _throughput(
    embedder: Any, worktree: Path, tmp: Path, rounds: int, first: tuple[Any, float]
) -> dict[str, Any]:
    """``rounds`` pairs of a fresh build and a raw ``embed`` call on the same texts, run back to back (the
    order alternating, so a machine getting busier or quieter favours neither); the ratio is the median of
    the pairs' ratios, since on a shared machine the load drifts more between rounds than within one."""
    stats, fresh_s = first
    texts = [embed_text(c) for c in CodeIndex.load(tmp / "fresh-0", embedder).chunks]
    pairs: list[tuple[float, float]] = []
    for r in range(rounds):
        raw_s = 0.0
        if r % 2:  # raw first in odd rounds
            t0 = time.perf_counter()
            embedder.embed(texts)
            raw_s = time.perf_counter() - t0
        if r:
            _, stats, fresh_s = _fresh(embedder, worktree, tmp / f"fresh-{r}")
        if not r % 2:
            t0 = time.perf_counter()
            embedder.embed(texts)
            raw_s = time.perf_counter() - t0
        pairs.append((fresh_s, raw_s))
    n = len(texts)
    return {
        "chunks": n,
        "index_chunks_per_s": round(statistics.median(n / i for i, _ in pairs), 2),
        "raw_texts_per_s": round(statistics.median(n / r for _, r in pairs), 2),
        "ratio": round(statistics.median(r / i for i, r in pairs), 3),
        "pairs_s": [(round(i, 2), round(r, 2)) for i, r in pairs],
        "last_build": {
            "discover_s": round(stats.discover_s, 3),
            "embed_s": round(stats.embed_s, 3),
            "save_s": round(stats.save_s, 3),
            "chunking_and_rest_s": round(stats.total_s - stats.discover_s - stats.embed_s - stats.save_s, 3),
        },
        "rounds": rounds,
    }


def _search_latency(idx: CodeIndex, n: int) -> dict[str, float]:
    texts = [
        json.loads(line)["problem_statement"] for line in (DATA_DIR / "pr.jsonl").read_text().splitlines()
    ]
    queries = [texts[i % len(texts)] for i in range(n)]
    idx.search(queries[0], 10, level="file")  # builds the search structures once
    lat = []
    for q in queries:
        t = time.perf_counter()
        idx.search(q, 10, level="file")
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {"p50_ms": round(statistics.median(lat), 2), "p95_ms": round(lat[round(0.95 * (len(lat) - 1))], 2)}


def _suite_run(embedder_spec: str, repo_cache: Path, tmp: Path, label: str, cache: str) -> dict[str, Any]:
    """One whole ``pr`` suite run in its own ASSAY_HOME with ASSAY_VECTOR_CACHE=``cache``."""
    from assay.evals.retrieval import RetrievalBenchmark
    from assay.exec import RunOptions, run_benchmark

    saved = {k: os.environ.get(k) for k in ("ASSAY_HOME", "ASSAY_VECTOR_CACHE", "ASSAY_NO_LOCK")}
    os.environ.update(ASSAY_HOME=str(tmp / f"home-{label}"), ASSAY_VECTOR_CACHE=cache, ASSAY_NO_LOCK="1")
    try:
        options = {
            "component": "code",
            "embedder": embedder_spec,
            "offline": True,
            "repo_cache": str(repo_cache),
        }
        t0 = time.perf_counter()
        result = run_benchmark(
            RetrievalBenchmark,
            options,
            RunOptions(suite="pr", out=tmp / f"run-{label}", command_line=["bench"]),
        )
        wall = time.perf_counter() - t0
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    rows = [json.loads(x) for x in (tmp / f"run-{label}" / "results.jsonl").read_text().splitlines()]
    embedded = sum(r["details"].get("index", {}).get("chunks_embedded", 0) for r in rows)
    for r in rows:
        if r["case_id"].startswith("replay:"):
            embedded += sum(s["chunks_embedded"] for s in r["details"]["steps"]) + r["details"]["chunks"]
    sc = result.scorecard
    return {
        "wall_s": round(wall, 1),
        "exit_code": result.exit_code,
        "chunks_embedded": embedded,
        "cases": {c.case_id: (c.counts, c.metrics) for c in sc.cases},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--repo", type=Path, help="a git repository to replay (default: the pr suite's click history)"
    )
    ap.add_argument("--rev", default="HEAD", help="with --repo: the newest commit to replay (default HEAD)")
    ap.add_argument("--commits", type=int, default=5, help="with --repo: how many first-parent commits")
    ap.add_argument("--embedder", default="local", help="embedder spec (default local MiniLM ONNX)")
    ap.add_argument(
        "--rounds", type=int, default=1, help="throughput rounds: index/raw pairs, order alternating"
    )
    ap.add_argument("--queries", type=int, default=60, help="searches to time")
    ap.add_argument("--no-suite", action="store_true", help="skip the pr suite's before/after wall time")
    ap.add_argument("--offline", action="store_true", help="never download the click sdists")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    args = ap.parse_args(argv)
    if args.commits < 2 or args.rounds < 1:
        ap.error("--commits must be at least 2 and --rounds at least 1")
    args.repo_cache = assay_home() / "repos"
    embedder = get_embedder(args.embedder)
    embedder.embed(["warm up the embedder"])
    figures: dict[str, Any] = {"embedder": embedder.id}
    with tempfile.TemporaryDirectory(prefix="code-index-bench-") as tmp_s:
        tmp = Path(tmp_s)
        label, source, commits = _history(args)
        figures["history"] = label
        print(
            f"history      {label}: {len(commits)} commits\nembedder     {embedder.id}\n\nreplay (vector cache on)"
        )
        replay = _replay(embedder, source, commits, tmp)
        steps = replay["steps"]
        later = steps[1:]
        ratio = sum(s["embedded"] for s in later) / max(1, sum(s["new_text"] for s in later))
        old_ratio = sum(s["without_cache"] for s in later) / max(1, sum(s["new_text"] for s in later))
        verdict = "meets" if ratio <= 1.2 else "MISSES"
        print(
            f"embedded / new text over commits 2..{len(steps)}: {ratio:.3f} ({verdict} the 1.2 goal); "
            f"without the cache {old_ratio:.2f}"
        )
        inc = replay["index"]
        fresh, fresh_stats, fresh_s = _fresh(embedder, inc.root, tmp / "fresh-0")
        same = fresh.chunks == inc.chunks
        cos = np.sum(fresh.vectors * inc.vectors, axis=1) if same else np.zeros(1)
        inc_s = steps[-1]["update_s"]
        print(
            f"\nfresh build of {commits[-1][0]} (no cache) {fresh_s:.2f} s; incremental {inc_s:.2f} s "
            f"({fresh_s / max(inc_s, 1e-6):.1f}x faster); mean incremental over commits 2..: "
            f"{statistics.mean(s['update_s'] for s in later):.2f} s"
        )
        print(
            f"replayed index against fresh build: same chunk table {same}, min cosine {float(cos.min()):.6f} "
            f"({'meets' if same and cos.min() >= 0.9999 else 'MISSES'} the 0.9999 goal)"
        )
        tp = _throughput(embedder, inc.root, tmp, args.rounds, (fresh_stats, fresh_s))
        print(
            f"\nthroughput on {tp['chunks']} chunks: index {tp['index_chunks_per_s']} chunks/s, raw embedder "
            f"{tp['raw_texts_per_s']} texts/s, ratio {tp['ratio']} ({'meets' if tp['ratio'] >= 0.85 else 'MISSES'} "
            f"the 0.85 goal); (index s, raw s) per pair {tp['pairs_s']}; index time: {tp['last_build']}"
        )
        damage = {
            m: run_cache_damage_case(tmp / "damage", m, embedder)["outcome"] for m in CACHE_DAMAGE_MODES
        }
        wrong = [m for m, o in damage.items() if o != CACHE_DAMAGE_MODES[m]]
        print(
            f"\ndamaged cache entries: {damage} -> {'all handled' if not wrong else 'FAILED: ' + ', '.join(wrong)}"
        )
        search = _search_latency(inc, args.queries)
        print(f"search       p50 {search['p50_ms']} ms, p95 {search['p95_ms']} ms ({args.queries} searches)")
        figures.update(
            replay=steps,
            embedded_over_new_text=round(ratio, 3),
            without_cache_over_new_text=round(old_ratio, 3),
            fresh_s=round(fresh_s, 2),
            incremental_s=inc_s,
            min_cosine=float(cos.min()),
            throughput=tp,
            cache_damage=damage,
            search=search,
        )
        if not args.no_suite:
            print("\npr suite, whole (cache off = before, on = after) ...", flush=True)
            before = _suite_run(args.embedder, args.repo_cache, tmp, "off", "off")
            after = _suite_run(args.embedder, args.repo_cache, tmp, "on", "on")
            same_scores = before["cases"] == after["cases"]
            print(
                f"pr suite     before {before['wall_s']} s ({before['chunks_embedded']} chunks embedded), after "
                f"{after['wall_s']} s ({after['chunks_embedded']}): {before['wall_s'] / after['wall_s']:.2f}x; "
                f"every case scored the same: {same_scores}; exit codes {before['exit_code']}/{after['exit_code']}"
            )
            figures["pr_suite"] = {
                "before_s": before["wall_s"],
                "after_s": after["wall_s"],
                "before_chunks_embedded": before["chunks_embedded"],
                "after_chunks_embedded": after["chunks_embedded"],
                "same_scores": same_scores,
            }
    figures["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    figures["load_average"] = os.getloadavg()
    print(f"peak RSS     {figures['peak_rss_mib']} MiB; load average {figures['load_average']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
