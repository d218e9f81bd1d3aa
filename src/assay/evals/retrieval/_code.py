"""`assay eval retrieval --component code`: code search quality, incremental re-index and robustness.

Cases of a suite:

- ``q:<instance_id>`` (category ``query``): index the repository at the query's base commit (one reused
  worktree per repository, oldest base first, so each re-index only re-embeds what changed), search with
  the issue text, score file recall@1/5/10, function recall@5/10 and MRR, and the same for the two
  baselines: ``git grep`` for the issue's identifiers, and BM25 over whole files.
- ``replay:<repo>`` (``incremental``): replay the last N commits re-indexing after each, then compare with
  a fresh index of the last (built without the vector cache): no stale or missing chunks, every vector
  within cosine 0.9999; each step records chunks embedded against chunks whose embedded text is new.
- ``robust:index:<mode>`` / ``robust:cache:<mode>`` / ``robust:tree:<mode>`` (``robustness``): damaged copies
  of a real index, damaged vector-cache entries (rebuilt, never served) and hostile trees; silent outcomes fail.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from assay.errors import ConfigError
from assay.evals._swebench_dataset import ensure_swebench_verified
from assay.evals.retrieval._code_data import (
    DATA_DIR,
    SDIST_SUITES,
    Query,
    changed_symbols,
    checkout,
    ensure_pr_repo,
    ensure_repo,
    file_at,
    git,
    load_queries,
    parse_patch,
    relevant_files,
    sdist_sources,
)
from assay.evals.retrieval._code_report import (
    BASELINES,
    failure_reason,
    file_recall_plot,
    query_wins,
    report_lines,
)
from assay.evals.retrieval._options import CodeOptions
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite, check_stop, run_stoppable
from assay.runs import Attempt, MetricSpec, MetricValue, Scorecard, Status, SubjectConfig

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = ["CodeRetrievalBenchmark"]

QUALITY = (
    "file_recall@1",
    "file_recall@5",
    "file_recall@10",
    "function_recall@5",
    "function_recall@10",
    "mrr",
)
DEPTH = 200
#: a query passes when a file the real fix changed is among the first PASS_RANK semantic results
PASS_RANK = 5
PASS_RULE = f"a file the fix changed is in the top {PASS_RANK} semantic results"
#: a replayed (vector-cached) index's vectors against a fresh build's, per chunk
REPLAY_MIN_COSINE = 0.9999
NIGHTLY_QUERIES = 50


def _recall(ranked: list[Any], gold: list[Any], k: int) -> float:
    return len(set(ranked[:k]) & set(gold)) / len(gold)


def first_rank(ranked: list[Any], gold: list[Any]) -> int | None:
    """1-based rank of the first gold item within the first DEPTH results, or None."""
    for i, item in enumerate(ranked[:DEPTH]):
        if item in gold:
            return i + 1
    return None


def _mrr(ranked: list[Any], gold: list[Any]) -> float:
    rank = first_rank(ranked, gold)
    return 1.0 / rank if rank else 0.0


def query_verdict(ranked_files: list[str], gold_files: list[str]) -> tuple[Status, dict[str, Any]]:
    """PASS when a changed file is in the top PASS_RANK, else FAIL; the details say the rule and the rank."""
    rank = first_rank(ranked_files, gold_files)
    ok = rank is not None and rank <= PASS_RANK
    return (Status.PASS if ok else Status.FAIL), {"pass_rule": PASS_RULE, "first_gold_rank": rank}


def _stop_check(_done: int, _total: int) -> None:
    """An index update's progress callback: stop between embedding batches when the attempt is stopped."""
    check_stop()


def _metrics(
    prefix: str, files: list[str], symbols: list[str], gold_files: list[str], gold_syms: list[str]
) -> dict[str, float]:
    out = {
        f"{prefix}file_recall@1": _recall(files, gold_files, 1),
        f"{prefix}file_recall@5": _recall(files, gold_files, 5),
        f"{prefix}file_recall@10": _recall(files, gold_files, 10),
        f"{prefix}mrr": _mrr(files, gold_files),
    }
    if gold_syms:
        out[f"{prefix}function_recall@5"] = _recall(symbols, gold_syms, 5)
        out[f"{prefix}function_recall@10"] = _recall(symbols, gold_syms, 10)
    return out


class CodeRetrievalBenchmark(Benchmark):
    """Code search: semantic (dense + lexical) vs git-grep and BM25 baselines on real fixes; re-index; damage."""

    name = "retrieval-code"
    help = (
        "Code search: file/function recall vs grep and BM25 baselines, incremental re-index, damaged caches."
    )
    suites: ClassVar[tuple[str, ...]] = ("pr", "jinja", "nightly", "scale")
    default_suite = "pr"
    pass_fail = True
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = tuple(
        # recall and MRR: per-query values in [0, 1], proportions over the queries
        [
            MetricSpec(name=m, kind="proportion", direction="higher", tolerance=0.05, gated=True)
            for m in QUALITY
        ]
        + [
            MetricSpec(name=f"{b}_{m}", kind="proportion", direction="higher", tolerance=0.05, gated=False)
            for b in BASELINES
            for m in QUALITY
        ]
        + [
            MetricSpec(
                name="incremental_speedup", kind="continuous", direction="higher", gated=False, unit="x"
            ),
            MetricSpec(name="index_update_s", kind="continuous", direction="lower", gated=False, unit="s"),
            MetricSpec(name="search_ms", kind="continuous", direction="lower", gated=False, unit="ms"),
            MetricSpec(name="semantic_wins@5", kind="count", direction="higher", gated=False),
            MetricSpec(name="grep_wins@5", kind="count", direction="lower", gated=False),
            MetricSpec(name="bm25_wins@5", kind="count", direction="lower", gated=False),
        ]
    )

    Options = CodeOptions
    options: CodeOptions

    def __init__(self, options: CodeOptions | Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        tol = self.options.tolerance
        if tol is not None:
            self.metric_specs = tuple(  # type: ignore[misc]
                s.model_copy(update={"tolerance": tol}) if s.gated else s for s in type(self).metric_specs
            )
        self._lock = asyncio.Lock()
        self._embedder_obj: Any = None
        self._states: dict[str, dict[str, Any]] = {}
        self._work: Path | None = None
        self._run_dir: Path | None = None
        self._suite = "pr"
        self._reference: tuple[Path, Any] | None = None

    # ------------------------------------------------------------------------------------------ options
    def _embedder(self) -> Any:
        if self._embedder_obj is None:
            from assay.embed import get_embedder

            self._embedder_obj = get_embedder(self.options.embedder or "local")
        return self._embedder_obj

    def _cache(self) -> Path:
        opt = self.options.repo_cache
        if opt:
            return Path(opt)
        from assay._util import assay_home

        return assay_home() / "repos"

    def subject_config(self) -> SubjectConfig:
        emb = self._embedder()
        return SubjectConfig(
            subject="assay.codeindex",
            embedder=emb.id,
            extra={"embedder_spec": self.options.embedder or "local"},
        )

    # ------------------------------------------------------------------------------------------ suite
    def _queries(self, suite: str) -> list[Query]:
        dataset = self.options.dataset
        if dataset:
            queries = load_queries(Path(dataset))
        elif suite in SDIST_SUITES:
            queries = load_queries(DATA_DIR / SDIST_SUITES[suite][0])
        else:
            queries = load_queries(ensure_swebench_verified(self._cache(), offline=self.options.offline))
        limit = self.options.code_max_queries
        if limit is None and suite == "nightly" and not dataset:
            limit = NIGHTLY_QUERIES
        if limit is not None and len(queries) > int(limit):
            by_repo: dict[str, list[Query]] = defaultdict(list)
            for q in sorted(queries, key=lambda q: (q.repo, q.created_at, q.instance_id)):
                by_repo[q.repo].append(q)
            picked: list[Query] = []
            while len(picked) < int(limit):  # round-robin over repositories, oldest first
                for repo in sorted(by_repo):
                    if by_repo[repo] and len(picked) < int(limit):
                        picked.append(by_repo[repo].pop(0))
            queries = picked
        return sorted(queries, key=lambda q: (q.repo, q.created_at, q.instance_id))

    def load_suite(self, suite: str) -> Suite:
        from assay.evals.retrieval._code_robust import CACHE_DAMAGE_MODES, DAMAGE_MODES, TREE_MODES

        if suite not in self.suites:
            raise ConfigError(
                f"--suite must be one of {', '.join(self.suites)} for retrieval --component code"
            )
        self._suite = suite
        queries = self._queries(suite)
        cases = [Case(id=f"q:{q.instance_id}", category="query", input=q.to_case_input()) for q in queries]
        last: dict[str, Query] = {}
        for q in queries:
            last[q.repo] = q  # the newest base per repository (queries are sorted oldest first)
        replay_repo = queries[0].repo
        head = last[replay_repo].base_commit
        pins = (
            [DATA_DIR / SDIST_SUITES[suite][1]] if suite in SDIST_SUITES and not self.options.dataset else []
        )
        if pins:
            import json

            head = json.loads(pins[0].read_text())["releases"][-1]["commit"]
        cases.append(
            Case(
                id=f"replay:{replay_repo}",
                category="incremental",
                input={
                    "repo": replay_repo,
                    "head": head,
                    "n": self.options.code_replay_commits,
                },
            )
        )
        cases += [
            Case(id=f"robust:index:{m}", category="robustness", input={"kind": "index", "mode": m})
            for m in DAMAGE_MODES
        ]
        cases += [
            Case(id=f"robust:cache:{m}", category="robustness", input={"kind": "cache", "mode": m})
            for m in CACHE_DAMAGE_MODES
        ]
        cases += [
            Case(id=f"robust:tree:{m}", category="robustness", input={"kind": "tree", "mode": m})
            for m in TREE_MODES
        ]
        self._first_repo = replay_repo
        self._first_base = queries[0].base_commit
        from assay.evals._suite_id import suite_version

        return Suite(name=suite, version=suite_version(suite, cases, files=pins), cases=cases)

    # ------------------------------------------------------------------------------------------ running
    async def setup(self, run_dir: str) -> None:
        from assay._util import assay_home

        self._run_dir = Path(run_dir)
        # worktrees and indexes are scratch: kept out of the run directory, removed at teardown
        self._work = assay_home() / "code_work" / self._run_dir.name
        self._work.mkdir(parents=True, exist_ok=True)
        self._embedder()

    async def teardown(self) -> None:
        if self._work is not None and self._work.exists():
            shutil.rmtree(self._work, ignore_errors=True)
        self._states.clear()
        self._reference = None

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        if self._work is None:
            await self.setup(ctx.run_dir)
        # one worktree per repository, one embedder: cases take turns, each timed from its turn; a case
        # stopped by --timeout stops between steps and ends before the next one may touch the worktrees
        async with ctx.exclusive(self._lock):
            try:
                return await run_stoppable(self._run_sync, case)
            except asyncio.CancelledError:
                self._states.clear()  # an index stopped mid-update is reopened from its last save
                self._reference = None
                raise

    def _run_sync(self, case: Case) -> Outcome:
        check_stop()
        if case.category == "query":
            return self._run_query(case.input)
        if case.category == "incremental":
            return self._run_replay(case.input)
        return self._run_robust(case.input)

    def _bare(self, repo: str) -> Path:
        offline = self.options.offline
        if repo.startswith("pypi-sdist/"):
            _, bare, _ = ensure_pr_repo(self._cache(), offline=offline, sources=sdist_sources(repo))
            return bare
        return ensure_repo(repo, self._cache(), offline=offline)

    def _state(self, repo: str) -> dict[str, Any]:
        from assay.codeindex import CodeIndex

        if repo not in self._states:
            assert self._work is not None
            slug = repo.replace("/", "__")
            bare = self._bare(repo)
            worktree = self._work / "worktrees" / slug
            index = CodeIndex.open(
                worktree,
                self._embedder(),
                index_dir=self._work / "indexes" / slug,
                vector_cache=self._vectors(),
            )
            self._states[repo] = {"bare": bare, "worktree": worktree, "index": index}
        return self._states[repo]

    def _vectors(self) -> Path:
        """The run's vector cache, shared by every worktree, commit and repository it indexes."""
        assert self._work is not None
        return self._work / "vector-cache"

    def _run_query(self, q: dict[str, Any]) -> Outcome:
        from assay.evals.retrieval._code_bm25 import bm25_rank_files, bm25_rank_symbols
        from assay.evals.retrieval._code_grep import grep_rank_files, grep_rank_symbols

        st = self._state(q["repo"])
        worktree: Path = st["worktree"]
        checkout(st["bare"], worktree, q["base_commit"])
        idx = st["index"]
        stats = idx.update(progress=_stop_check)
        check_stop()
        gold_files = relevant_files(q["patch"])
        gold_syms: list[str] = []
        for fp in parse_patch(q["patch"]):
            if fp.old_path is None:
                continue
            source = file_at(worktree, q["base_commit"], fp.old_path)
            if source is not None:
                gold_syms += [f"{fp.old_path}::{s}" for s in changed_symbols(fp.old_path, source, fp)]
        gold_syms = list(dict.fromkeys(gold_syms))
        text = q["problem_statement"]
        t0 = time.perf_counter()
        sem_files = [h.path for h in idx.search(text, DEPTH, level="file")]
        search_ms = (time.perf_counter() - t0) * 1000
        sem_syms = [f"{h.path}::{h.symbol}" for h in idx.search(text, DEPTH, level="symbol") if h.symbol]
        grep_files, weights = grep_rank_files(worktree, text, idx.files)
        grep_syms = [
            f"{p}::{s}"
            for p, s in grep_rank_symbols(((c.path, c.symbol, c.text) for c in idx.chunks), weights)
        ]
        texts = {p: (worktree / p).read_text(encoding="utf-8", errors="replace") for p in idx.files}
        bm25_files = bm25_rank_files(texts, text)
        chunks = ((c.path, c.symbol, c.text) for c in idx.chunks)
        bm25_syms = [f"{p}::{s}" for p, s in bm25_rank_symbols(chunks, text)]
        metrics = _metrics("", sem_files, sem_syms, gold_files, gold_syms)
        metrics.update(_metrics("grep_", grep_files, grep_syms, gold_files, gold_syms))
        metrics.update(_metrics("bm25_", bm25_files, bm25_syms, gold_files, gold_syms))
        if self._suite == "scale":
            metrics.update(index_update_s=round(stats.total_s, 3), search_ms=round(search_ms, 2))
        details = {
            "query": " ".join(text.split())[:300],
            "repo": q["repo"],
            "base_commit": q["base_commit"],
            "gold_files": gold_files,
            "gold_symbols": gold_syms,
            "unindexed_gold_files": [f for f in gold_files if f not in idx.files],
            "semantic_top10": sem_files[:10],
            "grep_top10": grep_files[:10],
            "bm25_top10": bm25_files[:10],
            "semantic_symbols_top10": sem_syms[:10],
            "grep_identifiers": {k: round(v, 3) for k, v in weights.items()},
            "index": {
                "files": stats.files_total,
                "chunks": stats.chunks_total,
                "chunks_embedded": stats.chunks_embedded,
                "files_changed": stats.files_changed + stats.files_added + stats.files_removed,
                "update_s": round(stats.total_s, 3),
                "skipped": stats.skipped,
            },
            "search_ms": round(search_ms, 2),
        }
        status, verdict = query_verdict(sem_files, gold_files)
        details.update(verdict)
        return Outcome(status=status, score=metrics["file_recall@5"], metrics=metrics, details=details)

    def _run_replay(self, inp: dict[str, Any]) -> Outcome:
        from assay.codeindex import CodeIndex
        from assay.codeindex.index import embed_text

        assert self._work is not None
        bare = self._state(inp["repo"])["bare"]
        commits = git(bare, "rev-list", "--first-parent", "-n", str(inp["n"]), inp["head"]).split()[::-1]
        slug = inp["repo"].replace("/", "__")
        worktree = self._work / "replay" / slug
        for left in (self._work / "replay-index" / slug, self._work / "replay-fresh" / slug):
            shutil.rmtree(left, ignore_errors=True)  # each attempt replays from nothing (the cache stays)
        inc = CodeIndex(
            worktree,
            self._embedder(),
            index_dir=self._work / "replay-index" / slug,
            vector_cache=self._vectors(),
        )
        steps = []
        seen: set[str] = set()
        for commit in commits:
            check_stop()
            checkout(bare, worktree, commit)
            s = inc.update(progress=_stop_check)
            texts = [embed_text(c) for c in inc.chunks]
            steps.append(
                {
                    "commit": commit,
                    "chunks_embedded": s.chunks_embedded,
                    "new_text_chunks": sum(t not in seen for t in texts),
                    "chunks_reused": s.chunks_reused,
                    "chunks_cached": s.chunks_cached,
                    "chunks": s.chunks_total,
                    "files_changed": s.files_added + s.files_changed + s.files_removed,
                    "update_s": round(s.total_s, 3),
                }
            )
            seen = set(texts)
        # built without the cache, so the comparison is with vectors the embedder makes now
        fresh = CodeIndex(
            worktree, self._embedder(), index_dir=self._work / "replay-fresh" / slug, vector_cache=False
        )
        check_stop()
        fs = fresh.update(progress=_stop_check)
        stored = CodeIndex.load(inc.index_dir, self._embedder())
        inc_set = {c.model_dump_json() for c in inc.chunks}
        fresh_set = {c.model_dump_json() for c in fresh.chunks}
        stale = sorted(inc_set - fresh_set)
        missing = sorted(fresh_set - inc_set)
        min_cos = None
        if not stale and not missing and inc.chunks == fresh.chunks:
            cos = np.sum(inc.vectors * fresh.vectors, axis=1)
            min_cos = float(cos.min()) if len(cos) else 1.0
        reloaded_same = stored.chunks == inc.chunks and np.array_equal(stored.vectors, inc.vectors)
        ok = (
            not stale
            and not missing
            and min_cos is not None
            and min_cos >= REPLAY_MIN_COSINE
            and reloaded_same
        )
        later = [s["update_s"] for s in steps[1:]] or [float("nan")]
        speedup = fs.total_s / max(float(np.mean(later)), 1e-6)
        details = {
            "commits": commits,
            "steps": steps,
            "fresh_s": round(fs.total_s, 3),
            "fresh_chunks_embedded": fs.chunks_embedded,
            "chunks": len(fresh.chunks),
            "stale_chunks": len(stale),
            "missing_chunks": len(missing),
            "examples": [s[:300] for s in (stale + missing)[:3]],
            "min_cosine": min_cos,
            "stored_equals_memory": reloaded_same,
        }
        metrics = {"incremental_speedup": round(speedup, 2)} if self._suite == "scale" else {}
        return Outcome(
            status=Status.PASS if ok else Status.FAIL,
            score=1.0 if ok else 0.0,
            metrics=metrics,
            details=details,
        )

    def _reference_index(self) -> tuple[Path, Any]:
        """A copy of a real index (the first repository's, as it stands) and its answers to the probes."""
        from assay.evals.retrieval._code_robust import reference_results

        assert self._work is not None
        if self._reference is None:
            st = self._state(self._first_repo)
            idx = st["index"]
            if not (idx.index_dir / "metadata.json").exists():
                checkout(st["bare"], st["worktree"], self._first_base)
                idx.update(progress=_stop_check)
            ref = self._work / "robust" / "reference"
            if ref.exists():
                shutil.rmtree(ref)
            shutil.copytree(idx.index_dir, ref)
            self._reference = (ref, reference_results(ref, self._embedder()))
        return self._reference

    def _run_robust(self, inp: dict[str, Any]) -> Outcome:
        from assay.evals.retrieval._code_robust import (
            CACHE_DAMAGE_MODES,
            DAMAGE_MODES,
            NotRunnable,
            run_cache_damage_case,
            run_damage_case,
            run_tree_case,
        )

        assert self._work is not None
        work = self._work / "robust"
        work.mkdir(parents=True, exist_ok=True)
        mode = inp["mode"]
        if inp["kind"] == "index":
            ref, expected = self._reference_index()
            detail = run_damage_case(ref, work, mode, self._embedder(), expected)
            ok = detail["outcome"] == DAMAGE_MODES[mode]
        elif inp["kind"] == "cache":
            detail = run_cache_damage_case(work, mode, self._embedder())
            ok = detail["outcome"] == CACHE_DAMAGE_MODES[mode]
        else:
            try:
                detail = run_tree_case(work, mode, self._embedder())
            except NotRunnable as exc:
                return Outcome.skipped(f"not-run: {exc}", mode=mode)
            ok = detail["outcome"] == "correct"
        return Outcome(status=Status.PASS if ok else Status.FAIL, score=1.0 if ok else 0.0, details=detail)

    # ------------------------------------------------------------------------------------------ reporting
    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        return query_wins(attempts)

    def report_section(self, scorecard: Scorecard) -> str:
        return report_lines(scorecard, QUALITY, self._details())

    def failure_reason(self, attempt: Attempt) -> str:
        return failure_reason(attempt) or super().failure_reason(attempt)

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]:
        plot = file_recall_plot(attempts)
        return [plot] if plot is not None else []

    def _details(self) -> dict[str, dict[str, Any]]:
        if self._run_dir is None or not (self._run_dir / "results.jsonl").exists():
            return {}
        from assay.runs import latest_attempts, read_journal

        latest = latest_attempts(read_journal(self._run_dir / "results.jsonl"))
        return {a.case_id: a.details for a in latest.values()}
