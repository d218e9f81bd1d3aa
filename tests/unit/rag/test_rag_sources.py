"""Pinned corpora: download once, verify on every use, refuse mismatches, --offline never fetches."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.errors import ConfigError, DataIntegrityError
from assay.evals.retrieval._rag_sources import Source, cache_dir, load_sources, prepare_sources


def _beir_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mini/corpus.jsonl", '{"_id": "d1", "title": "T", "text": "tides at Brannock"}\n')
        zf.writestr("mini/queries.jsonl", '{"_id": "q1", "text": "tides"}\n{"_id": "q2", "text": "x"}\n')
        zf.writestr("mini/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\n")
    return buf.getvalue()


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, bytes]]]:
    files: dict[str, bytes] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            if body is not None:
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", files
    httpd.shutdown()


def _source(url: str, data: bytes, **kw: object) -> Source:
    return Source(
        name="mini", url=url, revision="test", sha256=hashlib.sha256(data).hexdigest(), licence="test",
        subdir="mini", **kw,
    )  # fmt: skip


def test_fetch_verify_and_reuse(server, tmp_path: Path) -> None:
    base, files = server
    data = _beir_zip()
    files["/mini.zip"] = data
    src = _source(base + "/mini.zip", data, max_queries=1)
    with pytest.raises(ConfigError, match="--offline: corpus 'mini' is not cached"):
        prepare_sources([src], offline=True)
    beir = prepare_sources([src], offline=False)["mini"]
    assert beir.corpus["d1"][1] == "tides at Brannock" and list(beir.qrels) == ["q1"]
    del files["/mini.zip"]  # now only the cache can serve it
    assert prepare_sources([src], offline=True)["mini"].queries["q1"] == "tides"


def test_a_changed_download_or_cache_is_an_error(server) -> None:
    base, files = server
    data = _beir_zip()
    files["/mini.zip"] = data + b"changed upstream"
    src = _source(base + "/mini.zip", data)
    with pytest.raises(DataIntegrityError, match=r"downloaded file .* pins sha256"):
        prepare_sources([src], offline=False)
    assert not list(cache_dir().glob("mini-*.zip"))  # nothing unverified is kept
    files["/mini.zip"] = data
    prepare_sources([src], offline=False)
    cached = next(cache_dir().glob("mini-*.zip"))
    cached.write_bytes(data[:-10])
    with pytest.raises(DataIntegrityError, match="cached file"):
        prepare_sources([src], offline=True)


def test_sources_file_is_validated(tmp_path: Path) -> None:
    path = tmp_path / "sources.json"
    path.write_text(
        json.dumps({"sources": [{"name": "x", "url": "u", "revision": "r", "sha256": "ab", "licence": "l"}]})
    )
    with pytest.raises(ConfigError, match=r"sources\.json:1: source 'x': sha256 must be 64 hex digits"):
        load_sources(path)
    path.write_text("{\n  oops\n}")
    with pytest.raises(ConfigError, match=r"sources\.json:2: invalid JSON"):
        load_sources(path)


def test_the_committed_pins_parse() -> None:
    from assay.evals.retrieval._rag import default_eval_dir

    sources = load_sources(default_eval_dir() / "sources.json")
    assert sources and all(len(s.sha256) == 64 and s.licence for s in sources)


def test_a_pinned_size_is_checked_and_the_offline_error_names_the_pin(server, tmp_path: Path) -> None:
    base, files = server
    data = _beir_zip()
    files["/mini.zip"] = data
    src = _source(base + "/mini.zip", data, size_bytes=len(data) + 1)
    with pytest.raises(
        ConfigError, match=rf"not cached at .*pinned as {base}/mini\.zip sha256 [0-9a-f]{{64}}, "
    ):
        prepare_sources([src], offline=True)
    with pytest.raises(
        DataIntegrityError, match=rf"is {len(data):,} bytes but sources\.json pins {len(data) + 1:,}"
    ):
        prepare_sources([src], offline=False)
    assert prepare_sources([_source(base + "/mini.zip", data, size_bytes=len(data))], offline=False)
    path = tmp_path / "sources.json"
    pin = {"name": "x", "url": "u", "revision": "r", "sha256": "a" * 64, "licence": "l", "size_bytes": "2 MB"}
    path.write_text(json.dumps({"sources": [pin]}))
    with pytest.raises(
        ConfigError, match=r"sources\.json:1: source 'x': size_bytes must be a positive whole"
    ):
        load_sources(path)
