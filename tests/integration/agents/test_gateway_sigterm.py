"""A run stopped by SIGTERM while the gateway serves a model call prints its stop and resume line, no
server traceback ("Exception in ASGI application"), and stops in seconds rather than waiting on the call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class _Upstream(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that lists one model and never answers a chat call (it marks it began)."""

    marker: Path
    release = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "slow"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.marker.touch()
        self.release.wait(120)


@pytest.fixture
def hanging_upstream(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    marker = tmp_path / "call-began"
    handler = type("Handler", (_Upstream,), {"marker": marker, "release": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", marker
    finally:
        handler.release.set()
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_sigterm_while_the_gateway_serves_prints_only_the_stop_and_resume_line(
    hanging_upstream: tuple[str, Path], tmp_path: Path
) -> None:
    url, marker = hanging_upstream
    out = tmp_path / "run"
    env = {**os.environ, "ASSAY_NO_LOCK": "1", "ASSAY_PROGRESS": "off"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "eval", "code", "--suite", "full", "--harness", "reference",
         "--model", f"openai-compat/slow@{url}", "-j", "1", "--out", str(out)],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while not marker.exists():  # the agent's first model call is in the gateway, waiting on upstream
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1]
            time.sleep(0.05)
        time.sleep(0.3)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "ERROR" not in err and "Exception in ASGI" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("progress:")]
    assert lines == [f"interrupted; resume with: assay eval code --resume {out}"], err
    assert took < 8, f"took {took:.1f}s to stop"
