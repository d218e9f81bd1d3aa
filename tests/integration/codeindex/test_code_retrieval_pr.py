"""The `pr` suite of `assay eval retrieval --component code`, end to end, with the hashing embedder.

The suite's repository is assembled from pinned click sdists that pip downloads once per session (set
ASSAY_TEST_REPO_CACHE to a folder to keep them between sessions).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.errors import ConfigError
from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval._code_data import DATA_DIR, ensure_pr_repo
from assay.exec import RunOptions, run_benchmark


@pytest.fixture(scope="session")
def repo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = Path(os.environ.get("ASSAY_TEST_REPO_CACHE") or tmp_path_factory.mktemp("repos"))
    name, bare, commits = ensure_pr_repo(cache, offline=False)
    assert name == "pypi-sdist/click" and (bare / "HEAD").exists()
    sources = json.loads((DATA_DIR / "sources.json").read_text())
    assert commits == {r["version"]: r["commit"] for r in sources["releases"]}  # same ids on every machine
    return cache


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    return tmp_path


def _run(cache: Path, out: Path, iterations: int = 1, **extra: object) -> object:
    options = {"component": "code", "embedder": "hash", "offline": True, "repo_cache": str(cache)}
    options |= {"code_replay_commits": 3, **extra}
    opts = RunOptions(suite="pr", out=out, command_line=["test"], iterations=iterations)
    return run_benchmark(RetrievalBenchmark, options, opts)


def test_pr_suite_offline_deterministic_and_complete(repo_cache: Path, env: Path) -> None:
    first = _run(repo_cache, env / "run1")
    sc = first.scorecard  # type: ignore[attr-defined]
    assert first.exit_code == 0  # type: ignore[attr-defined]
    assert sc.complete and len(sc.cases) == 18 + 1 + 14 + 9 + 7
    assert all(c.counts == {"PASS": 1} for c in sc.cases if c.category != "query")
    m = sc.summary.metrics
    for name in (
        "file_recall@1",
        "file_recall@5",
        "file_recall@10",
        "function_recall@5",
        "function_recall@10",
        "mrr",
    ):
        assert m[name].gated and m[name].tolerance == 0.05 and m[f"grep_{name}"].gated is False
        assert 0.0 <= m[name].value <= 1.0
    assert m["file_recall@5"].n == 18 and m["function_recall@5"].n == 17  # one query changes no symbol
    # the hashing embedder plus BM25 already finds most fixed files; grep is the weaker baseline
    assert m["file_recall@10"].value >= 0.6
    assert m["file_recall@5"].value > m["grep_file_recall@5"].value
    rows = [json.loads(line) for line in (env / "run1" / "results.jsonl").read_text().splitlines()]
    by_id = {r["case_id"]: r for r in rows}
    for r in rows:  # a query passes exactly when a changed file is in the top 5
        if r["category"] == "query":
            rank = r["details"]["first_gold_rank"]
            assert (r["status"] == "PASS") == (rank is not None and rank <= 5), r["case_id"]
    replay = by_id["replay:pypi-sdist/click"]["details"]
    assert len(replay["commits"]) == 3 and replay["stale_chunks"] == replay["missing_chunks"] == 0
    assert replay["min_cosine"] >= 0.9999  # against a build without the vector cache
    steps = replay["steps"]  # the query cases indexed the first replayed commit already: all from the cache
    assert steps[0]["chunks_embedded"] == 0 and steps[0]["chunks_cached"] == steps[0]["chunks"]
    assert all(s["chunks_embedded"] <= s["new_text_chunks"] for s in steps)
    assert steps[-1]["chunks_embedded"] > 0  # 8.2.1 is no query's base: its new texts are embedded
    q = by_id["q:click-8.2.1-runner-stderr-flush"]["details"]
    assert q["gold_files"] == ["src/click/testing.py"] and q["gold_symbols"] == [
        "src/click/testing.py::CliRunner.invoke"
    ]
    later = by_id["q:click-8.2.1-flag-value-type"]["details"]["index"]
    assert 0 < later["chunks_embedded"] < later["chunks"]  # re-indexing the reused worktree is incremental
    outcomes = {cid: r["details"]["outcome"] for cid, r in by_id.items() if cid.startswith("robust:")}
    assert outcomes["robust:index:crash_between_renames"] == "correct"
    assert outcomes["robust:index:dropped_chunk"] == "raised"
    assert outcomes["robust:tree:latin1"] == "correct"
    assert outcomes["robust:cache:flipped_byte"] == "rebuilt"  # a damaged vector-cache entry is never served
    assert outcomes["robust:cache:leftover_temp_file"] == "served"
    assert "## Code search" in (env / "run1" / "report.md").read_text()
    assert not (env / "home" / "code_work" / "run1").exists()  # scratch removed at teardown

    # same numbers again, whatever the index went through before: a run of the four oldest queries only
    second = _run(repo_cache, env / "run2", iterations=2, code_max_queries=4, code_replay_commits=2)
    again = {c.case_id: c.metrics for c in second.scorecard.cases if c.category == "query"}  # type: ignore[attr-defined]
    assert len(again) == 4
    assert again == {c.case_id: c.metrics for c in sc.cases if c.case_id in again}
    # every attempt's replay is compared with a fresh build of its own (not the last attempt's saved one)
    replays = [
        json.loads(line)["details"]
        for line in (env / "run2" / "results.jsonl").read_text().splitlines()
        if json.loads(line)["case_id"].startswith("replay:")
    ]
    assert len(replays) == 2 and all(d["fresh_chunks_embedded"] == d["chunks"] > 0 for d in replays)


def test_offline_without_cache_is_a_clear_error(env: Path) -> None:
    """A cache miss offline is the user's configuration, not the subject: the run stops (exit 1, resumable)
    and no case is scored ERROR."""
    result = _run(env / "empty-cache", env / "run")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    reason = result.stopped_reason  # type: ignore[attr-defined]
    assert reason.startswith("configuration error: --offline") and "click-8.1.3.tar.gz" in reason
    counts = result.scorecard.summary.counts  # type: ignore[attr-defined]
    assert counts["ERROR"] == 0 and counts["NOT_RUN"] >= 1, counts
    rows = [json.loads(line) for line in (env / "run" / "results.jsonl").read_text().splitlines()]
    assert any("--offline" in (r.get("skip_reason") or "") for r in rows if r["status"] == "NOT_RUN")


def test_dataset_flag_and_bad_suite(repo_cache: Path, env: Path) -> None:
    bad = env / "bad.jsonl"
    bad.write_text('{"instance_id": "x"}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1: missing"):
        _run(repo_cache, env / "r", dataset=str(bad))
    with pytest.raises(ConfigError, match="--suite"):
        run_benchmark(
            RetrievalBenchmark,
            {"component": "code", "embedder": "hash"},
            RunOptions(suite="nope", out=env / "r2", command_line=["test"]),
        )


def test_code_index_cli_build_and_search(env: Path) -> None:
    from assay.cli._codeindex import code_index_group

    repo = env / "proj"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "billing.py").write_text("def compute_invoice_total(lines):\n    return sum(lines)\n")
    (repo / "src" / "auth.py").write_text(
        "def check_password(user, password):\n    return user.ok(password)\n"
    )
    (repo / "blob.py").write_bytes(b"\x00\x01binary")
    runner = CliRunner()
    built = runner.invoke(code_index_group, ["build", str(repo), "--embedder", "hash"])
    assert built.exit_code == 0, built.output
    assert "files 2 (added 2" in built.output and "binary 1" in built.output
    again = runner.invoke(code_index_group, ["build", str(repo), "--embedder", "hash"])
    assert "unchanged 2" in again.output and "embedded 0" in again.output
    found = runner.invoke(
        code_index_group, ["search", str(repo), "invoice total", "--files", "-k", "1", "--embedder", "hash"]
    )
    assert found.exit_code == 0 and found.output.split()[-1] == "src/billing.py"
    sym = runner.invoke(code_index_group, ["search", str(repo), "password check", "--embedder", "hash"])
    assert "src/auth.py:1-2  function check_password" in sym.output
    (repo / "src" / "auth.py").write_text("def check_token(token):\n    return bool(token)\n")
    stale = runner.invoke(code_index_group, ["search", str(repo), "password", "--embedder", "hash"])
    assert (
        stale.exit_code == 0 and "1 file(s) changed since the index was built (src/auth.py)" in stale.output
    )
    shutil.rmtree(env / "home" / "code_index")
    missing = runner.invoke(code_index_group, ["search", str(repo), "x", "--embedder", "hash"])
    assert missing.exit_code != 0 and "code-index build" in str(missing.exception)


def _git(cwd: Path, *args: str) -> str:
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_swebench_format_dataset_on_a_cached_repository(env: Path) -> None:
    """The nightly path: a SWE-bench-format --dataset whose repository comes from the bare-repo cache."""
    work = env / "widgets"
    (work / "widgets").mkdir(parents=True)
    (work / "widgets" / "gears.py").write_text(
        "def spin_gear(speed):\n    return speed * 2\n\n\ndef stop_gear():\n    return 0\n"
    )
    (work / "widgets" / "paint.py").write_text("def paint_widget(colour):\n    return colour.upper()\n")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "one")
    base = _git(work, "rev-parse", "HEAD").strip()
    (work / "widgets" / "gears.py").write_text(
        "def spin_gear(speed):\n    return max(0, speed) * 2\n\n\ndef stop_gear():\n    return 0\n"
    )
    patch = _git(work, "diff")
    _git(work, "commit", "-qam", "two")
    cache = env / "cache"
    cache.mkdir()
    _git(cache, "clone", "-q", "--bare", str(work), "acme__widgets.git")
    dataset = env / "swe.jsonl"
    row = {
        "instance_id": "acme__widgets-1",
        "repo": "acme/widgets",
        "base_commit": base,
        "problem_statement": "spin_gear returns a negative rotation when the speed is negative",
        "patch": patch,
    }
    dataset.write_text(json.dumps(row) + "\n")
    opts = {"component": "code", "embedder": "hash", "offline": True, "repo_cache": str(cache)}
    opts |= {"dataset": str(dataset), "code_replay_commits": 2}
    result = run_benchmark(
        RetrievalBenchmark, opts, RunOptions(suite="nightly", out=env / "n", command_line=["t"])
    )
    sc = result.scorecard
    assert sc.summary.counts["PASS"] == len(sc.cases) == 1 + 1 + 14 + 9 + 7, sc.summary.counts
    q = sc.case("q:acme__widgets-1")
    assert q is not None and q.metrics["file_recall@1"] == 1.0 and q.metrics["function_recall@5"] == 1.0
    # a repository that is not cached is refused offline, naming the cache
    row["repo"] = "acme/other"
    dataset.write_text(json.dumps(row) + "\n")
    again = run_benchmark(
        RetrievalBenchmark, opts, RunOptions(suite="nightly", out=env / "n2", command_line=["t"])
    )
    rows = [json.loads(line) for line in (env / "n2" / "results.jsonl").read_text().splitlines()]
    assert any("not in the cache" in (r.get("error") or {}).get("message", "") for r in rows)
    assert again.exit_code == 1 and "not in the cache" in (again.stopped_reason or "")
    assert again.scorecard.summary.counts["ERROR"] == 0
