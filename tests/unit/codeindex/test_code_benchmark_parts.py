from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.retrieval._code_data import changed_symbols, load_queries, parse_patch, relevant_files
from assay.evals.retrieval._code_grep import grep_rank_files, grep_rank_symbols, query_identifiers

BASE = '''import os


class Store:
    """A store."""

    def get(self, key):
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value


def helper():
    return 1
'''

PATCH = """diff --git a/pkg/store.py b/pkg/store.py
--- a/pkg/store.py
+++ b/pkg/store.py
@@ -7,5 +7,6 @@ class Store:
     def get(self, key):
-        return self.data[key]
+        return self.data.get(key)
+
     def put(self, key, value):
         self.data[key] = value
@@ -14,2 +15,4 @@ class Store:
 def helper():
     return 1
+
+VALUE = 2
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,1 @@
+x = 1
diff --git a/pkg/old.py b/pkg/old.py
deleted file mode 100644
--- a/pkg/old.py
+++ /dev/null
@@ -1,1 +0,0 @@
-y = 1
"""


def test_relevant_files_are_modified_or_deleted_not_created() -> None:
    assert relevant_files(PATCH) == ["pkg/store.py", "pkg/old.py"]
    created = [f for f in parse_patch(PATCH) if f.old_path is None]
    assert [f.new_path for f in created] == ["pkg/new.py"]


def test_changed_symbols_innermost_and_insertions_only_inside() -> None:
    store = parse_patch(PATCH)[0]
    assert store.old_lines == {8}
    # the blank line inserted after line 8 is inside Store.get's span? no: get ends at 8 -> class spans both sides
    syms = changed_symbols("pkg/store.py", BASE, store)
    assert syms == ["Store.get", "Store"]
    # an insertion after the end of the file (VALUE = 2) is inside no symbol: not counted
    assert "helper" not in syms


def test_load_queries_validates_and_names_file_and_line(tmp_path: Path) -> None:
    good = {"instance_id": "a", "repo": "o/r", "base_commit": "abc", "problem_statement": "x", "patch": PATCH}
    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps(good) + "\n" + json.dumps({**good, "instance_id": "b", "patch": ""}) + "\n")
    with pytest.raises(ConfigError, match=r"q\.jsonl:2: missing or empty field\(s\): patch"):
        load_queries(f)
    f.write_text(json.dumps(good) + "\n{not json\n")
    with pytest.raises(ConfigError, match=r"q\.jsonl:2: not valid JSON"):
        load_queries(f)
    f.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(ConfigError, match="duplicate instance_id"):
        load_queries(f)
    f.write_text(json.dumps(good) + "\n")
    (q,) = load_queries(f)
    assert q.relevant_files == ["pkg/store.py", "pkg/old.py"]
    with pytest.raises(ConfigError, match="--dataset"):
        load_queries(tmp_path / "missing.jsonl")


def test_query_identifiers_pick_code_looking_tokens() -> None:
    text = (
        "Calling `CliRunner.invoke` with mix_stderr fails in getHelpRecord; see click.testing and "
        "the Context class. Also e.g. example.com is not code."
    )
    ids = query_identifiers(text)
    assert ids[:3] == ["CliRunner.invoke", "CliRunner", "invoke"]
    assert {"mix_stderr", "getHelpRecord", "click.testing", "testing"} <= set(ids)
    assert "Context" not in ids and "example.com" not in ids and "Calling" not in ids


def test_grep_baseline_ranks_by_rarity(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "a.py").write_text("def common_name():\n    rare_thing = 1\n")
    (repo / "b.py").write_text("def common_name():\n    pass\n")
    (repo / "c.py").write_text("def common_name():\n    pass\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    ranked, weights = grep_rank_files(
        repo, "common_name breaks when rare_thing is set", ["a.py", "b.py", "c.py"]
    )
    assert ranked == ["a.py", "b.py", "c.py"]
    assert weights["rare_thing"] > weights["common_name"]
    syms = grep_rank_symbols(
        [("a.py", "common_name", "rare_thing = 1"), ("b.py", "x", "common_name")], weights
    )
    assert syms == [("a.py", "common_name"), ("b.py", "x")]


def test_swebench_verified_is_pinned_and_checked(tmp_path: Path) -> None:
    from assay.errors import DataIntegrityError
    from assay.evals._swebench_dataset import SWE_BENCH_VERIFIED, ensure_swebench_verified, swebench_url

    assert SWE_BENCH_VERIFIED["revision"] in swebench_url() and len(SWE_BENCH_VERIFIED["sha256"]) == 64
    with pytest.raises(ConfigError, match=r"--offline.*--dataset"):
        ensure_swebench_verified(tmp_path, offline=True)
    (tmp_path / f"swe-bench-verified-{SWE_BENCH_VERIFIED['revision'][:12]}.parquet").write_bytes(b"tampered")
    with pytest.raises(DataIntegrityError, match="sha256"):
        ensure_swebench_verified(tmp_path, offline=True)
