"""Suite identity is the suite's content: same-size datasets differ, the same content twice is the same."""

from __future__ import annotations

import json
from pathlib import Path

from assay.evals import Case
from assay.evals._suite_id import suite_version
from assay.evals.retrieval._code import CodeRetrievalBenchmark


def _dataset(path: Path, issue: str) -> Path:
    row = {
        "repo": "acme/zoo",
        "instance_id": "acme__zoo-1",
        "base_commit": "0" * 40,
        "patch": "diff --git a/zoo.py b/zoo.py\n--- a/zoo.py\n+++ b/zoo.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
        "problem_statement": issue,
        "created_at": "2024-01-01T00:00:00Z",
    }
    path.write_text(json.dumps(row) + "\n")
    return path


def _code_version(dataset: Path) -> str:
    bench = CodeRetrievalBenchmark({"component": "code", "embedder": "hash", "dataset": str(dataset)})
    return bench.load_suite("nightly").version


def test_code_search_datasets_of_one_size_are_different_suites(tmp_path: Path) -> None:
    one = _code_version(_dataset(tmp_path / "one.jsonl", "zebra stripes are counted wrong"))
    other = _code_version(_dataset(tmp_path / "other.jsonl", "the ledger rounds invoices wrong"))
    again = _code_version(_dataset(tmp_path / "again.jsonl", "zebra stripes are counted wrong"))
    assert one != other
    assert one == again and one.startswith("nightly-")


def test_suite_version_hashes_cases_files_and_settings(tmp_path: Path) -> None:
    cases = [Case("a", "x", {"n": 1}), Case("b", "x", {"n": 2})]
    data = tmp_path / "data.json"
    data.write_text("[1, 2]")
    v = suite_version("pr", cases, files=[data], extra={"mode": "plain"})
    assert v == suite_version("pr", list(cases), files=[data], extra={"mode": "plain"})
    assert v != suite_version("pr", [Case("a", "x", {"n": 1}), Case("b", "x", {"n": 3})], files=[data])
    assert v != suite_version("pr", cases, files=[data], extra={"mode": "structured"})
    data.write_text("[1, 3]")  # same size, other bytes
    assert v != suite_version("pr", cases, files=[data], extra={"mode": "plain"})


def test_memory_and_serving_suites_use_the_content_hash() -> None:
    from assay.evals.memory import MemoryBenchmark
    from assay.evals.serving._benchmark import ServingBenchmark

    mem = MemoryBenchmark({}).load_suite("pr").version
    assert mem == MemoryBenchmark({}).load_suite("pr").version and len(mem.rsplit("-", 1)[1]) == 16
    short = ServingBenchmark({"input_len": "32", "output_len": "8"}).load_suite("synthetic").version
    long = ServingBenchmark({"input_len": "64", "output_len": "8"}).load_suite("synthetic").version
    assert short != long and short.startswith("synthetic-")
