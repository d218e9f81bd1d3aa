"""The jinja suite: a second release history pinned like click's, loaded offline from the shipped files."""

from __future__ import annotations

import json

import pytest

from assay.errors import ConfigError
from assay.evals.retrieval._code import CodeRetrievalBenchmark
from assay.evals.retrieval._code_data import DATA_DIR, load_queries, sdist_sources


def test_jinja_suite_has_its_queries_replay_and_robustness_cases() -> None:
    suite = CodeRetrievalBenchmark({"component": "code"}).load_suite("jinja")
    queries = [c for c in suite.cases if c.category == "query"]
    assert len(queries) == 23 and all(c.input["repo"] == "pypi-sdist/jinja2" for c in queries)
    (replay,) = [c for c in suite.cases if c.category == "incremental"]
    pins = json.loads((DATA_DIR / "sources-jinja.json").read_text())
    assert replay.id == "replay:pypi-sdist/jinja2" and replay.input["head"] == pins["releases"][-1]["commit"]
    assert suite.version != CodeRetrievalBenchmark({"component": "code"}).load_suite("pr").version


def test_every_query_starts_at_a_pinned_release_and_changes_jinja_sources() -> None:
    pins = json.loads((DATA_DIR / "sources-jinja.json").read_text())
    commits = {r["commit"] for r in pins["releases"]}
    assert len(commits) == 5 and all(len(r["sha256"]) == 64 for r in pins["releases"])
    for q in load_queries(DATA_DIR / "jinja.jsonl"):
        assert q.base_commit in commits and q.relevant_files
        assert all(f.startswith("src/jinja2/") for f in q.relevant_files), q.instance_id


def test_release_history_pins_are_found_by_repository_name() -> None:
    assert sdist_sources("pypi-sdist/click") == DATA_DIR / "sources.json"
    assert sdist_sources("pypi-sdist/jinja2") == DATA_DIR / "sources-jinja.json"
    with pytest.raises(ConfigError, match="pypi-sdist/nope is not one of"):
        sdist_sources("pypi-sdist/nope")
