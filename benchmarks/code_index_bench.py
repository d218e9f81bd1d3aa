"""Speed of the code index on a real repository: fresh build, one-file incremental re-index, search, memory.

Prints: fresh index time, files/s and chunks/s; incremental re-index time after a one-file change and how
many times faster than fresh it is (target: at least 20x); search latency p50/p95 over the ``pr`` suite's
issue texts; peak RSS of this process.

    python benchmarks/code_index_bench.py                      # click 8.2.1 from the pr suite's repo cache
    python benchmarks/code_index_bench.py --repo PATH --embedder hash

The default repository is the ``pr`` suite's (click releases, assembled from pinned sdists under
``$ASSAY_HOME/repos``; pip fetches them once). The tree is copied to a temporary folder first, so the
one-file change never touches the original.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _default_repo(tmp: Path, offline: bool) -> Path:
    from assay.evals.retrieval._code_data import checkout, ensure_pr_repo
    from assay.runs._paths import assay_home

    _, bare, commits = ensure_pr_repo(assay_home() / "repos", offline=offline)
    work = tmp / "click"
    checkout(bare, work, commits[max(commits, key=lambda v: tuple(int(p) for p in v.split(".")))])
    return work


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--repo", type=Path, help="repository to index (default: click from the pr suite's cache)"
    )
    ap.add_argument("--embedder", default="local", help="embedder spec (default local MiniLM ONNX)")
    ap.add_argument("--queries", type=int, default=60, help="searches to time")
    ap.add_argument("--offline", action="store_true", help="never download the default repository's sources")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    args = ap.parse_args(argv)

    from assay.codeindex import CodeIndex
    from assay.embed import get_embedder
    from assay.evals.retrieval._code_data import DATA_DIR

    embedder = get_embedder(args.embedder)
    with tempfile.TemporaryDirectory(prefix="code-index-bench-") as tmp_s:
        tmp = Path(tmp_s)
        source = args.repo or _default_repo(tmp, args.offline)
        label = str(args.repo) if args.repo else "click 8.2.1 (the pr suite's repository)"
        if not source.is_dir():
            print(f"error: --repo {source} is not a directory", file=sys.stderr)
            return 1
        tree = tmp / "tree"
        shutil.copytree(source, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        embedder.embed(["warm up the embedder"])

        idx = CodeIndex(tree, embedder, index_dir=tmp / "index")
        t0 = time.perf_counter()
        fresh = idx.update()
        fresh_s = time.perf_counter() - t0

        # one-file change: a median-sized Python file gets a new function
        per_file = sorted((rec.chunks, path) for path, rec in idx.files.items() if path.endswith(".py"))
        if not per_file:
            per_file = sorted((rec.chunks, path) for path, rec in idx.files.items())
        changed = per_file[len(per_file) // 2][1]
        with open(tree / changed, "a", encoding="utf-8") as fh:
            fh.write(
                '\n\ndef bench_added_function(value):\n    """Added by the benchmark."""\n    return value\n'
            )
        t1 = time.perf_counter()
        inc = idx.update()
        inc_s = time.perf_counter() - t1

        texts = [
            json.loads(line)["problem_statement"] for line in (DATA_DIR / "pr.jsonl").read_text().splitlines()
        ]
        texts += [
            "parse command line arguments",
            "progress bar",
            "read environment variables",
            "shell completion",
        ]
        queries = [texts[i % len(texts)] for i in range(args.queries)]
        idx.search(queries[0], 10, level="file")  # build the search structures once
        lat = []
        for q in queries:
            t = time.perf_counter()
            idx.search(q, 10, level="file")
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        figures = {
            "repository": label,
            "embedder": embedder.id,
            "files": fresh.files_total,
            "chunks": fresh.chunks_total,
            "skipped": fresh.skipped,
            "fresh_index_s": round(fresh_s, 2),
            "files_per_s": round(fresh.files_total / fresh_s, 1),
            "chunks_per_s": round(fresh.chunks_total / fresh_s, 1),
            "changed_file": changed,
            "incremental_s": round(inc_s, 3),
            "incremental_chunks_embedded": inc.chunks_embedded,
            "incremental_speedup_x": round(fresh_s / inc_s, 1),
            "search_p50_ms": round(statistics.median(lat), 2),
            "search_p95_ms": round(p95, 2),
            "searches": len(lat),
            "peak_rss_mib": round(peak_mib, 1),
        }
    print(
        f"repository        {figures['repository']}  ({figures['files']} files, {figures['chunks']} chunks)"
    )
    print(f"embedder          {figures['embedder']}")
    print(
        f"fresh index       {figures['fresh_index_s']} s  ({figures['files_per_s']} files/s, "
        f"{figures['chunks_per_s']} chunks/s)"
    )
    verdict = "meets" if figures["incremental_speedup_x"] >= 20 else "MISSES"
    print(
        f"incremental       {figures['incremental_s']} s after changing {changed} "
        f"({figures['incremental_chunks_embedded']} chunks re-embedded): {figures['incremental_speedup_x']}x "
        f"faster than fresh ({verdict} the 20x target)"
    )
    print(
        f"search            p50 {figures['search_p50_ms']} ms, p95 {figures['search_p95_ms']} ms ({len(lat)} searches)"
    )
    print(f"peak RSS          {figures['peak_rss_mib']} MiB")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
