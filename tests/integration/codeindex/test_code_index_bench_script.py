"""benchmarks/code_index_bench.py replays a real git history and prints every figure it promises."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import assay.codeindex

SCRIPT = Path(__file__).parents[3] / "benchmarks" / "code_index_bench.py"
PKG = Path(assay.codeindex.__file__).parent


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _history(repo: Path) -> None:
    """Three commits of real code: the package's own sources, a function added on top, a file renamed."""
    (repo / "pkg").mkdir(parents=True)
    _git(repo, "init", "-q")
    # copied under the names they had when the test was written (chunk.py was _chunk.py, ...)
    for name, source in (
        ("_chunk.py", "chunk.py"),
        ("_lexical.py", "_lexical.py"),
        ("_discover.py", "discovery.py"),
    ):
        shutil.copy(PKG / source, repo / "pkg" / name)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    chunk = repo / "pkg" / "_chunk.py"
    chunk.write_text("def added_first(x):\n    return x + 1\n\n\n" + chunk.read_text())
    _git(repo, "commit", "-q", "-am", "two")
    _git(repo, "mv", "pkg/_discover.py", "pkg/discovery.py")
    _git(repo, "commit", "-q", "-m", "three")


def test_replays_a_git_history_and_prints_the_figures(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _history(repo)
    out = tmp_path / "figures.json"
    args = ["--repo", str(repo), "--commits", "3", "--embedder", "hash", "--no-suite", "--queries", "5"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--json", str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for line in (
        "embedded / new text over commits 2..3",
        "min cosine",
        "throughput on",
        "damaged cache entries",
    ):
        assert line in done.stdout, done.stdout
    fig = json.loads(out.read_text())
    steps = fig["replay"]
    assert len(steps) == 3 and steps[0]["embedded"] == steps[0]["new_text"] == steps[0]["chunks"]
    # the function added on top: _chunk.py's other chunks come back by content, a build without the cache
    # re-embeds the whole file
    assert steps[1]["embedded"] <= 3 and steps[1]["without_cache"] >= steps[1]["embedded"] + 10
    assert steps[2]["embedded"] == steps[2]["new_text"] > 0  # a renamed file: its path is in every chunk
    assert fig["embedded_over_new_text"] <= 1.0 and fig["min_cosine"] >= 0.9999
    assert all(o in ("rebuilt", "served") for o in fig["cache_damage"].values())
    assert fig["cache_damage"]["leftover_temp_file"] == "served"
    tp = fig["throughput"]
    assert tp["chunks"] == steps[-1]["chunks"] and tp["index_chunks_per_s"] > 0 and tp["raw_texts_per_s"] > 0


def test_a_repo_that_is_no_git_repository_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--repo", str(tmp_path), "--embedder", "hash", "--no-suite"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "is not a git repository" in done.stderr
