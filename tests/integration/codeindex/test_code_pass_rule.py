"""Code-search queries are graded: PASS when a file the real fix changed is in the top 5, else FAIL.

A small local repository (no network): ten modules about zebras, and one fix to a module that says
nothing about them, asked for with a zebra question. The changed file is not in the top 5, so the query
fails and its details say the rule and the rank; the query whose fix is in a zebra module passes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from assay.evals.retrieval import RetrievalBenchmark
from assay.exec import RunOptions, run_benchmark


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _repo(tmp: Path, cache: Path) -> Path:
    work = tmp / "zoo"
    (work / "zoo").mkdir(parents=True)
    for i in range(10):
        (work / "zoo" / f"zebra_{i}.py").write_text(
            f'def zebra_stripes_{i}(zebra):\n    """Count the zebra stripes of zebra number {i}."""\n'
            f"    return zebra.stripes + {i}\n"
        )
    (work / "zoo" / "ledger.py").write_text("def post_invoice(total):\n    return round(total, 2)\n")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "zoo")
    rows = []
    for n, (path, text) in enumerate(
        [
            ("ledger.py", "def post_invoice(total):\n    return round(total, 3)\n"),
            ("zebra_3.py", "def zebra_stripes_3(zebra):\n    return zebra.stripes * 3\n"),
        ],
        1,
    ):
        base = _git(work, "rev-parse", "HEAD").strip()
        (work / "zoo" / path).write_text(text)
        patch = _git(work, "diff")
        _git(work, "commit", "-qam", f"fix {n}")
        rows.append(
            {
                "repo": "acme/zoo",
                "instance_id": f"acme__zoo-{n}",
                "base_commit": base,
                "patch": patch,
                "problem_statement": "zebra stripes are counted wrong for zebra number 3",
                "created_at": f"2024-0{n}-01T00:00:00Z",
            }
        )
    cache.mkdir(parents=True, exist_ok=True)
    _git(cache, "clone", "-q", "--bare", str(work), "acme__zoo.git")
    dataset = tmp / "zoo.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dataset


def test_a_query_whose_changed_file_ranks_below_5_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    cache = tmp_path / "repos"
    dataset = _repo(tmp_path, cache)
    options = {"component": "code", "embedder": "hash", "offline": True, "repo_cache": str(cache)}
    options |= {"dataset": str(dataset), "code_replay_commits": 2}
    result = run_benchmark(RetrievalBenchmark, options, RunOptions(out=tmp_path / "run", command_line=["t"]))
    rows = {
        json.loads(line)["case_id"]: json.loads(line)
        for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    }
    missed, found = rows["q:acme__zoo-1"], rows["q:acme__zoo-2"]
    assert missed["status"] == "FAIL", missed["details"]["semantic_top10"]
    assert missed["details"]["pass_rule"] == "a file the fix changed is in the top 5 semantic results"
    rank = missed["details"]["first_gold_rank"]
    assert rank is None or rank > 5
    assert found["status"] == "PASS" and found["details"]["first_gold_rank"] <= 5
    case = result.scorecard.case("q:acme__zoo-1")
    assert case is not None and case.passed == 0 and case.measured == 1
