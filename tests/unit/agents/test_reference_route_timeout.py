"""A slow model answer through the gateway is the run's wall clock to cut off, never an outage: the reference
harness's client waits ROUTE_READ_TIMEOUT_S (the HTTP default of 300 s stopped a real `eval tasks run` on the
embedded model as a backend outage). The gateway here is a stub that answers late."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from assay.agents import Limits, Route, RunSpec
from assay.agents.reference import ReferenceHarness
from assay.agents.reference import harness as reference

ANSWER = {
    "id": "x",
    "object": "chat.completion",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "late"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up closed the connection: expected here


def _slow_gateway(delay_s: float) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(delay_s)
            body = json.dumps(ANSWER).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = _Quiet(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


@pytest.fixture
def gateway() -> Iterator[str]:
    yield from _slow_gateway(1.5)


def test_the_default_outwaits_any_runs_wall_clock() -> None:
    assert reference.ROUTE_READ_TIMEOUT_S >= 3600  # eval tasks' default wall clock is 600 s


@pytest.mark.parametrize(("read_timeout_s", "waited"), [(10.0, True), (0.5, False)])
async def test_the_route_client_waits_its_read_timeout(
    gateway: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_timeout_s: float, waited: bool
) -> None:
    monkeypatch.setattr(reference, "ROUTE_READ_TIMEOUT_S", read_timeout_s)
    harness = ReferenceHarness()
    route = Route(model="m", openai_base_url=gateway)
    result = await harness.run("hi", RunSpec(workdir=tmp_path, route=route, limits=Limits(wall_clock_s=60)))
    await harness.close()
    if waited:  # the answer 1.5 s late is waited for
        assert result.answer == "late" and result.infra_error is None and result.cut_off is None
    else:  # past the client's limit it is an outage: hence a limit longer than any run's wall clock
        assert result.infra_error is not None and "timed out" in result.infra_error


async def test_a_slower_answer_is_cut_off_by_the_wall_clock_not_an_outage(
    gateway: str, tmp_path: Path
) -> None:
    harness = ReferenceHarness()
    spec = RunSpec(
        workdir=tmp_path, route=Route(model="m", openai_base_url=gateway), limits=Limits(wall_clock_s=0.5)
    )
    result = await harness.run("hi", spec)
    await harness.close()
    assert result.cut_off == "wall_clock" and result.infra_error is None and result.error is None
