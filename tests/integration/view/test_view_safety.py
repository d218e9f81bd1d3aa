"""The viewer is read-only, serves only scrubbed artifacts found under --dir, refuses traversal (``..``,
percent-encoded, symlinks out) and listens on loopback unless told otherwise."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from assay.view import Site, write_bundle

SECRET = "vk-test-0123456789abcdefSECRET"
OUTSIDE = "TOPSECRET-outside-the-dir"


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


def _raw(port: int, method: str, path: str) -> tuple[int, str]:
    """A request with the path sent exactly as given (no client-side normalising)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path, skip_accept_encoding=True)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read().decode("utf-8", errors="replace")
    conn.close()
    return resp.status, body


@pytest.fixture
def planted(view_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "results"
    shutil.copytree(view_runs / "memory", root / "mem")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE)
    shutil.copytree(view_runs / "memory", outside / "run-out")
    (outside / "run-out" / "report.md").write_text(OUTSIDE)
    (root / "linked-run").symlink_to(outside / "run-out")  # a run directory outside --dir
    (root / "mem" / "leak.png").symlink_to(outside / "secret.txt")  # a file outside --dir
    (root / "mem" / "notes.txt").write_text(OUTSIDE)  # not an artifact assay writes
    # a journal tampered with after it was written: a secret value the scrubber would have removed
    journal = root / "mem" / "results.jsonl"
    lines = journal.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["details"]["note"] = f"key {SECRET} and sk-abcdefghijklmnopqrstuvwxyz123456"
    lines[0] = json.dumps(rec, separators=(",", ":"))
    journal.write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("VIEW_TEST_API_KEY", SECRET)
    return root


def test_traversal_symlinks_and_unlisted_files_are_refused(planted: Path, serve_dir) -> None:
    before = _tree_digest(planted)
    served = serve_dir(planted)
    status, body = _raw(served.port, "GET", "/")
    assert status == 200 and "mem" in body and "linked-run" not in body
    probes = [
        "/runs/linked-run/index.html",
        "/runs/linked-run/files/report.md",
        "/runs/mem/files/leak.png",
        "/runs/mem/files/notes.txt",
        "/runs/mem/files/meta.json",
        "/runs/mem/files/../../outside/secret.txt",
        "/runs/mem/files/..%2F..%2Foutside%2Fsecret.txt",
        "/runs/mem/files/%2e%2e%2f%2e%2e%2foutside%2fsecret.txt",
        "/runs/mem/files/%252e%252e%252fsecret.txt",
        "/runs/..%2F..%2Foutside/index.html",
        "/runs/%2e%2e/index.html",
        "/runs/mem/case/..%2F..%2F..%2Foutside%2Fsecret.txt.html",
        "/static/..%2F_app.py",
        "/static/%2e%2e%2f__init__.py",
        "/../../outside/secret.txt",
        "/trends/..%2F..%2Foutside/secret.html",
    ]
    for path in probes:
        status, body = _raw(served.port, "GET", path)
        assert status in (400, 404), (path, status)
        assert OUTSIDE not in body and "import" not in body, path
    status, body = _raw(served.port, "GET", "/runs/mem/files/report.md")
    assert status == 200 and "Memory" in body  # the artifact itself is served
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert _raw(served.port, method, "/runs/mem/index.html")[0] == 405
    assert _tree_digest(planted) == before  # nothing written under --dir


def test_secrets_are_never_shown_served_or_bundled(planted: Path, tmp_path: Path, serve_dir) -> None:
    site = Site(planted)
    tampered = json.loads((planted / "mem" / "results.jsonl").read_text().splitlines()[0])["case_id"]
    from assay.view._store import case_slug

    served = serve_dir(planted)
    status, body = _raw(served.port, "GET", f"/runs/mem/case/{case_slug(tampered)}.html")
    assert status == 200 and "[REDACTED]" in body
    assert SECRET not in body and "sk-abcdefghijklmnop" not in body
    out = tmp_path / "bundle"
    write_bundle(site, out)
    for f in out.rglob("*.html"):
        text = f.read_text()
        assert SECRET not in text and OUTSIDE not in text, f
    assert not (out / "runs" / "linked-run").exists()
    assert not (out / "runs" / "mem" / "files" / "leak.png").exists()


def test_serves_on_loopback_by_default(view_runs: Path, free_port) -> None:
    port = free_port()
    env = {**os.environ, "ASSAY_NO_LOCK": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "view", "--dir", str(view_runs), "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 15
        addrs: set[str] = set()
        while time.monotonic() < deadline and not addrs:
            addrs = {
                c.laddr.ip
                for c in psutil.Process(proc.pid).net_connections(kind="inet")
                if c.status == psutil.CONN_LISTEN
            }
            time.sleep(0.1)
        assert addrs == {"127.0.0.1"}
        assert _raw(port, "GET", "/")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_bad_dir_and_bundle_folder_are_named(view_runs: Path, tmp_path: Path, run_cli, capsys) -> None:
    assert run_cli("view", "--dir", str(tmp_path / "nope")) == 1
    assert "--dir" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert run_cli("view", "--dir", str(view_runs), "--bundle", str(tmp_path / "full")) == 1
    assert "--bundle" in capsys.readouterr().err
    assert run_cli("view", "--dir", str(view_runs), "--bundle", str(view_runs / "inside")) == 1
    assert "inside --dir" in capsys.readouterr().err
