"""benchmarks/code_search_ablation.py measures the baselines, the shipped ranking and each choice turned off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.evals.retrieval._code_data import ensure_pr_repo

SCRIPT = Path(__file__).parents[3] / "benchmarks" / "code_search_ablation.py"
ROWS = (
    "git grep",
    "BM25 (whole files)",
    "index (as shipped)",
    "- whole-file channel",
    "- query weights",
    "- several chunks per file",
    "- symbol terms",
    "- plain-text files halved",
    "+ weighted symbols",
)


@pytest.fixture(scope="module")
def repo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = Path(os.environ.get("ASSAY_TEST_REPO_CACHE") or tmp_path_factory.mktemp("repos"))
    ensure_pr_repo(cache, offline=False)  # the click history, from sdists pip fetches once
    return cache


def test_ablation_table_on_the_pr_history(repo_cache: Path, tmp_path: Path) -> None:
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / "home"), "ASSAY_VECTOR_CACHE": "off"}
    argv = [sys.executable, str(SCRIPT), "--suite", "pr", "--embedder", "hash", "--max-queries", "3"]
    argv += ["--repo-cache", str(repo_cache), "--work", str(tmp_path / "work")]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "== pr: 3 queries" in lines
    for row in ROWS:
        (line,) = [ln for ln in lines if ln.startswith(row + " ")]
        values = [float(v) for v in line[len(row) :].split()]
        assert len(values) == 6 and all(0.0 <= v <= 1.0 for v in values), line
    (delta,) = [ln for ln in lines if ln.startswith("index - best baseline")]
    assert len(delta.split()[4:]) == 6 and all(v[0] in "+-" for v in delta.split()[4:])
