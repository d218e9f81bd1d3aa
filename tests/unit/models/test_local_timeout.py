"""The embedded model's calls wait LOCAL_READ_TIMEOUT_S for an answer (a judge's long prompt on a busy CPU takes
minutes; the HTTP default of 300 s made a real `eval tasks run` lose its judge step): a slow server is waited for
within it and is an outage past it. The server here is a stub that answers late."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest

from assay.errors import InfraError
from assay.models import Message, _local
from assay.models._local import LocalModel

DELAY_S = 1.0
ANSWER = {
    "id": "x",
    "object": "chat.completion",
    "model": "stub",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "late"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


class _Slow(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(DELAY_S)
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the client that gave up closed the connection: expected here


@pytest.fixture
def slow_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    httpd = _Quiet(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    stub = SimpleNamespace(
        model="stub", base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", crash_report=lambda: None
    )
    monkeypatch.setattr(_local, "shared_server", lambda *a, **k: stub)
    yield
    httpd.shutdown()


def _ask(tmp_path: Path) -> str:
    gguf = tmp_path / "stub.gguf"
    gguf.write_bytes(b"GGUF")  # never loaded: the stub stands in for its server
    model = LocalModel(model_path=gguf)
    out = asyncio.run(model.generate([Message(role="user", content="hi")], max_tokens=4))
    return out.text


def test_the_default_outwaits_a_long_prompt_on_a_busy_cpu() -> None:
    # a 1.7k-token prompt measured 149 s on 2 busy cores: a ~6k-token judge prompt takes 10+ minutes there
    assert _local.LOCAL_READ_TIMEOUT_S >= 1800


def test_a_slow_answer_within_the_limit_is_waited_for(
    slow_server: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_local, "LOCAL_READ_TIMEOUT_S", DELAY_S * 5)
    assert _ask(tmp_path) == "late"


def test_past_the_limit_it_is_an_outage(
    slow_server: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_local, "LOCAL_READ_TIMEOUT_S", DELAY_S / 4)
    with pytest.raises(InfraError, match="timed out"):
        _ask(tmp_path)
