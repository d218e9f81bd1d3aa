"""The pinned SWE-bench parquet path of the code search benchmark, offline.

Each test writes a small parquet file in the SWE-bench Verified layout (every column a string, as in
the real file), pins it by its own sha256, and drives the real cache/verify/download/parse code. The
network is an ``httpx.MockTransport``: a test that must not touch it fails if it is called.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.errors import ConfigError, DataIntegrityError, InfraError, MissingDependencyError
from assay.evals._swebench_dataset import ensure_swebench_verified, swebench_cache_path, swebench_url
from assay.evals.retrieval._code_data import load_queries

COLUMNS = (
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
    "difficulty",
)

PATCH_SEPARABLE = """\
diff --git a/astropy/modeling/separable.py b/astropy/modeling/separable.py
--- a/astropy/modeling/separable.py
+++ b/astropy/modeling/separable.py
@@ -242,7 +242,7 @@ def _cstack(left, right):
         cright = _coord_matrix(right, 'right', noutp)
     else:
         cright = np.zeros((noutp, right.shape[1]))
-        cright[-right.shape[0]:, -right.shape[1]:] = 1
+        cright[-right.shape[0]:, -right.shape[1]:] = right

     return np.hstack([cleft, cright])
"""

PATCH_MIGRATE = """\
diff --git a/django/core/management/commands/sqlmigrate.py b/django/core/management/commands/sqlmigrate.py
--- a/django/core/management/commands/sqlmigrate.py
+++ b/django/core/management/commands/sqlmigrate.py
@@ -55,8 +55,9 @@ def handle(self, *args, **options):
                 migration_name, app_label))
         targets = [(app_label, migration.name)]

-        # Show begin/end around output only for atomic migrations
-        self.output_transaction = migration.atomic
+        # Show begin/end around output for atomic migrations, if the database
+        # supports transactional DDL.
+        self.output_transaction = migration.atomic and connection.features.can_rollback_ddl

         # Make a plan that represents just the requested migrations and show SQL
         # for it
diff --git a/django/core/management/commands/helpers.py b/django/core/management/commands/helpers.py
new file mode 100644
--- /dev/null
+++ b/django/core/management/commands/helpers.py
@@ -0,0 +1,2 @@
+def can_rollback(connection):
+    return connection.features.can_rollback_ddl
"""

PATCH_REQUESTS = """\
diff --git a/requests/models.py b/requests/models.py
--- a/requests/models.py
+++ b/requests/models.py
@@ -10,3 +10,3 @@ class PreparedRequest:
     def prepare_body(self, data, files, json=None):
-        body = None
+        body = b""
         content_type = None
diff --git a/requests/compat.py b/requests/compat.py
deleted file mode 100644
--- a/requests/compat.py
+++ /dev/null
@@ -1,2 +0,0 @@
-import sys
-is_py2 = sys.version_info[0] == 2
"""


def swe_rows() -> list[dict[str, str]]:
    base = {
        "test_patch": "diff --git a/tests/test_x.py b/tests/test_x.py\n",
        "hints_text": "",
        "PASS_TO_PASS": "[]",
        "difficulty": "<15 min fix",
    }
    return [
        {
            **base,
            "repo": "django/django",
            "instance_id": "django__django-11039",
            "base_commit": "d5276398046ce4a102776a1e67dcac2884d80dfe",
            "patch": PATCH_MIGRATE,
            "problem_statement": "sqlmigrate wraps its output in BEGIN/COMMIT even if the database "
            "doesn't support transactional DDL",
            "created_at": "2019-03-01T10:24:38Z",
            "version": "3.0",
            "FAIL_TO_PASS": json.dumps(["test_sqlmigrate_for_non_transactional_databases"]),
            "environment_setup_commit": "419a78300f7cd27611196e1e464d50fd0385ff27",
        },
        {
            **base,
            "repo": "astropy/astropy",
            "instance_id": "astropy__astropy-12907",
            "base_commit": "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
            "patch": PATCH_SEPARABLE,
            "problem_statement": "Modeling's `separability_matrix` does not compute separability "
            "correctly for nested CompoundModels",
            "created_at": "2022-03-03T15:14:54Z",
            "version": "4.3",
            "FAIL_TO_PASS": json.dumps(["astropy/modeling/tests/test_separable.py::test_separable[x]"]),
            "environment_setup_commit": "298ccb478e6bf092953bca67a3d29dc6c35f6752",
        },
        {
            **base,
            "repo": "psf/requests",
            "instance_id": "psf__requests-2317",
            "base_commit": "091991be0da19de9108dbe5e3752917fea3d7fdc",
            "patch": PATCH_REQUESTS,
            "problem_statement": "method = builtin_str(method) turns b'GET' into \"b'GET'\"",
            "created_at": "2014-11-01T02:20:16Z",
            "version": "2.4",
            "FAIL_TO_PASS": json.dumps(["test_requests.py::RequestsTestCase::test_HTTP_200_OK_GET"]),
            "environment_setup_commit": "091991be0da19de9108dbe5e3752917fea3d7fdc",
        },
    ]


def write_parquet(path: Path, rows: list[dict[str, Any]], columns: tuple[str, ...] = COLUMNS) -> str:
    """Write ``rows`` as a SWE-bench-layout parquet file (all columns strings); returns its sha256."""
    table = pa.table({c: pa.array([r[c] for r in rows], type=pa.string()) for c in columns})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_pin(sha256: str, rows: int = 3) -> dict[str, Any]:
    return {
        "dataset": "princeton-nlp/SWE-bench_Verified",
        "revision": "0123456789abcdef0123456789abcdef01234567",
        "file": "data/test-00000-of-00001.parquet",
        "sha256": sha256,
        "rows": rows,
    }


def no_network() -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"the network was touched: {request.url}")

    return httpx.Client(transport=httpx.MockTransport(handler))


def serving(body: bytes, calls: list[str], status: int = 200) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(status, content=body)

    return httpx.Client(transport=httpx.MockTransport(handler))


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, dict[str, Any], bytes]:
    """A SWE-bench parquet written outside the cache, its pin, and its bytes."""
    src = tmp_path / "built.parquet"
    sha = write_parquet(src, swe_rows())
    return src, make_pin(sha), src.read_bytes()


def test_cached_pinned_parquet_gives_the_same_queries_as_jsonl(
    tmp_path: Path, built: tuple[Path, dict[str, Any], bytes]
) -> None:
    _, pin, data = built
    cache = tmp_path / "repos"
    target = swebench_cache_path(cache, pin)
    assert target.parent == cache and target.name == "swe-bench-verified-0123456789ab.parquet"
    target.parent.mkdir(parents=True)
    target.write_bytes(data)
    for offline in (True, False):  # a verified cached file is used as it is: no network either way
        assert ensure_swebench_verified(cache, offline=offline, pin=pin, client=no_network()) == target

    queries = load_queries(target)
    by_id = {q.instance_id: q for q in queries}
    assert [q.instance_id for q in queries] == [
        "django__django-11039",
        "astropy__astropy-12907",
        "psf__requests-2317",
    ]
    dj = by_id["django__django-11039"]
    assert dj.repo == "django/django" and dj.base_commit == "d5276398046ce4a102776a1e67dcac2884d80dfe"
    assert dj.created_at == "2019-03-01T10:24:38Z" and dj.problem_statement.startswith("sqlmigrate wraps")
    # created files are not scored; modified and deleted ones are
    assert dj.relevant_files == ["django/core/management/commands/sqlmigrate.py"]
    assert by_id["astropy__astropy-12907"].relevant_files == ["astropy/modeling/separable.py"]
    assert by_id["psf__requests-2317"].relevant_files == ["requests/models.py", "requests/compat.py"]
    assert by_id["psf__requests-2317"].to_case_input()["patch"] == PATCH_REQUESTS

    # the JSONL path gives exactly the same records
    jsonl = tmp_path / "same.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in swe_rows()))
    assert load_queries(jsonl) == queries


def test_download_is_verified_before_it_is_kept(
    tmp_path: Path, built: tuple[Path, dict[str, Any], bytes]
) -> None:
    _, pin, data = built
    cache = tmp_path / "repos"
    calls: list[str] = []
    got = ensure_swebench_verified(cache, offline=False, pin=pin, client=serving(data, calls))
    assert calls == [swebench_url(pin)] and pin["revision"] in calls[0]
    assert got == swebench_cache_path(cache, pin) and got.read_bytes() == data
    assert len(load_queries(got)) == 3
    assert sorted(p.name for p in cache.iterdir()) == [got.name]  # no .part left behind

    # a download whose bytes are not the pinned ones is refused and nothing is saved
    other = tmp_path / "other"
    bad = data[:-1] + bytes([data[-1] ^ 1])
    bad_sha = hashlib.sha256(bad).hexdigest()
    with pytest.raises(DataIntegrityError) as exc:
        ensure_swebench_verified(other, offline=False, pin=pin, client=serving(bad, []))
    assert bad_sha in str(exc.value) and pin["sha256"] in str(exc.value)
    assert list(other.iterdir()) == []

    # the server refusing is an infrastructure error, not a data error
    with pytest.raises(InfraError, match="404"):
        ensure_swebench_verified(other, offline=False, pin=pin, client=serving(b"gone", [], status=404))
    assert list(other.iterdir()) == []


def test_tampered_cached_file_is_refused_and_left_alone(
    tmp_path: Path, built: tuple[Path, dict[str, Any], bytes]
) -> None:
    _, pin, _ = built
    cache = tmp_path / "repos"
    target = swebench_cache_path(cache, pin)
    target.parent.mkdir(parents=True)
    # a real, parseable parquet file with one statement changed: only the checksum can tell
    rows = swe_rows()
    rows[1]["problem_statement"] = "separability_matrix is fine"
    tampered_sha = write_parquet(target, rows)
    tampered = target.read_bytes()
    assert tampered_sha != pin["sha256"]
    for offline in (True, False):
        with pytest.raises(DataIntegrityError) as exc:
            ensure_swebench_verified(cache, offline=offline, pin=pin, client=no_network())
        msg = str(exc.value)
        assert str(target) in msg and tampered_sha in msg and pin["sha256"] in msg
    assert target.read_bytes() == tampered  # never silently replaced by a fresh download


def test_offline_without_the_cached_file_names_where_it_belongs(
    tmp_path: Path, built: tuple[Path, dict[str, Any], bytes]
) -> None:
    _, pin, _ = built
    cache = tmp_path / "repos"
    with pytest.raises(ConfigError) as exc:
        ensure_swebench_verified(cache, offline=True, pin=pin, client=no_network())
    msg = str(exc.value)
    assert str(swebench_cache_path(cache, pin)) in msg
    assert "without --offline" in msg and swebench_url(pin) in msg and pin["sha256"] in msg
    assert "--dataset" in msg
    assert not cache.exists()


def test_pinned_row_count_is_checked(tmp_path: Path, built: tuple[Path, dict[str, Any], bytes]) -> None:
    _, pin, data = built
    pin = {**pin, "rows": 500}
    target = swebench_cache_path(tmp_path, pin)
    target.write_bytes(data)
    with pytest.raises(DataIntegrityError, match=r"3 rows, the pin says 500"):
        ensure_swebench_verified(tmp_path, offline=True, pin=pin)


def test_bad_parquet_rows_and_columns_name_the_file(tmp_path: Path) -> None:
    rows = swe_rows()
    rows[1]["patch"] = ""
    f = tmp_path / "swe.parquet"
    write_parquet(f, rows)
    with pytest.raises(ConfigError, match=r"swe\.parquet: row 2: missing or empty field\(s\): patch"):
        load_queries(f)
    rows = swe_rows()
    rows[2]["instance_id"] = rows[0]["instance_id"]
    write_parquet(f, rows)
    with pytest.raises(
        ConfigError, match=r"swe\.parquet: row 3: duplicate instance_id 'django__django-11039'"
    ):
        load_queries(f)
    write_parquet(f, swe_rows(), columns=tuple(c for c in COLUMNS if c != "base_commit"))
    with pytest.raises(ConfigError, match=r"swe\.parquet: no column\(s\) base_commit"):
        load_queries(f)
    f.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ConfigError, match=r"swe\.parquet: not a readable parquet file"):
        load_queries(f)


def test_missing_pyarrow_names_the_extra(
    tmp_path: Path, built: tuple[Path, dict[str, Any], bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    src, pin, data = built
    target = swebench_cache_path(tmp_path, pin)
    target.write_bytes(data)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    for call in (
        lambda: load_queries(src),
        lambda: ensure_swebench_verified(tmp_path, offline=True, pin=pin),
    ):
        with pytest.raises(MissingDependencyError) as exc:
            call()
        assert exc.value.package == "pyarrow" and "pip install 'assay[code]'" in str(exc.value)
