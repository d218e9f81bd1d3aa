"""The `full` suite's plumbing with a corpus served from this machine: --fetch-only, --offline, answers."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from assay.errors import ConfigError, StopEarly
from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval._rag import default_eval_dir
from assay.exec import RunOptions, run_benchmark

EVAL = default_eval_dir()


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            zf.write(EVAL / "beir-mini" / name, f"mini/{name}")
    return buf.getvalue()


@pytest.fixture
def full_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = _zip()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    root = tmp_path / "eval" / "retrieval"
    shutil.copytree(EVAL / "pr", root / "pr", ignore=shutil.ignore_patterns("pdf_src"))
    pin = {
        "name": "mini",
        "url": f"http://127.0.0.1:{httpd.server_address[1]}/mini.zip",
        "revision": "test",
        "sha256": hashlib.sha256(data).hexdigest(),
        "licence": "test data",
        "subdir": "mini",
        "max_queries": 10,
    }
    (root / "sources.json").write_text(json.dumps({"sources": [pin]}))
    monkeypatch.setenv("ASSAY_EVAL_DIR", str(tmp_path / "eval"))
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [], "default": {"text": "I don't know."}}))
    yield tmp_path, f"scripted/{script}"
    httpd.shutdown()


def _run(tmp_path: Path, name: str, **options: object):
    return run_benchmark(
        RetrievalBenchmark,
        {"component": "rag", "embedder": "hash", **options},
        RunOptions(suite="full", out=tmp_path / name, command_line=["test"]),
    )


def test_full_suite_fetches_once_then_runs_offline(full_env) -> None:
    tmp_path, model = full_env
    with pytest.raises(ConfigError, match="--offline: corpus 'mini' is not cached"):
        _run(tmp_path, "a", model=model, offline=True)
    with pytest.raises(ConfigError, match="pass --model"):
        _run(tmp_path, "b")
    with pytest.raises(StopEarly, match="fetched and verified"):
        _run(tmp_path, "c", fetch_only=True)
    result = _run(tmp_path, "d", model=model, offline=True, scale_tiers="12")
    assert result.exit_code == 0 and result.scorecard.suite == "full"
    ids = [c.case_id for c in result.scorecard.cases]
    assert sum(i.startswith("mini/") for i in ids) == 10 and "scale/12" in ids
    m = result.scorecard.summary.metrics
    assert m["ndcg@10"].value > 0.5 and m["sdk_recall@5"].value > 0.9
    assert m["answer_accuracy"].value == 0  # the scripted model never knows
    assert "mini" in result.scorecard.suite_version
