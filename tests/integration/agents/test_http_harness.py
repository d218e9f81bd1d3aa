"""The ``http`` harness: assay's turn protocol against a loopback agent server, and an OpenAI-style agent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cliagents_loopback import OpenAILoopback

from assay.agents import AgentResult, Limits, Route, RunSpec, ToolCallRecord, get_harness
from assay.agents._http import TURN_PATH, TurnRequest
from assay.errors import ConfigError


class TurnServer:
    """A tiny agent speaking POST /turn with the shared models: it appends each prompt to log.txt in the workdir."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.sessions: dict[str, list[str]] = {}
        self.seen: list[TurnRequest] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path != TURN_PATH:
                    self.send_response(404)
                    self.end_headers()
                    return
                req = TurnRequest.model_validate_json(raw)
                owner.seen.append(req)
                time.sleep(delay_s)
                sid = req.session_id or f"s{len(owner.sessions) + 1}"
                said = owner.sessions.setdefault(sid, [])
                said.append(req.prompt)
                log = Path(req.workdir) / "log.txt"
                log.write_text("\n".join(said) + "\n")
                result = AgentResult(
                    harness="turn-server",
                    answer=f"turn {len(said)}: {req.prompt}",
                    session_id=sid,
                    model_ran=req.model,
                    tool_record=[ToolCallRecord(name="write", kind="write", edited_paths=["log.txt"])],
                )
                data = result.model_dump_json().encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def turn_server() -> Iterator[TurnServer]:
    srv = TurnServer()
    yield srv
    srv.close()


async def test_turn_protocol_two_turns(tmp_path: Path, turn_server: TurnServer) -> None:
    harness = get_harness(f"http:{turn_server.url}")
    spec = RunSpec(workdir=tmp_path, route=Route(model="m-3", openai_base_url="http://127.0.0.1:9/v1"))
    one = await harness.run("first", spec)
    assert one.error is None and one.harness == "http" and one.answer == "turn 1: first"
    assert one.session_id == "s1" and one.model_ran == "m-3" and one.edited_paths == ["log.txt"]
    spec.session_id = one.session_id
    two = await harness.run("second", spec)
    assert two.answer == "turn 2: second" and (tmp_path / "log.txt").read_text() == "first\nsecond\n"
    req = turn_server.seen[1]
    assert req.session_id == "s1" and req.workdir == str(tmp_path.resolve())
    assert req.openai_base_url == "http://127.0.0.1:9/v1" and req.limits == spec.limits


async def test_turn_protocol_wall_clock(tmp_path: Path) -> None:
    srv = TurnServer(delay_s=3)
    try:
        started = time.monotonic()
        r = await get_harness("http", url=srv.url).run(
            "x", RunSpec(workdir=tmp_path, limits=Limits(wall_clock_s=0.5))
        )
        assert r.cut_off == "wall_clock" and time.monotonic() - started < 2.5
    finally:
        srv.close()


async def test_unreachable_and_bad_replies_are_errors(tmp_path: Path, turn_server: TurnServer) -> None:
    down = await get_harness("http", url="http://127.0.0.1:9").run("x", RunSpec(workdir=tmp_path))
    assert down.error is not None and down.error.startswith("http agent at http://127.0.0.1:9: ConnectError")
    wrong = await get_harness("http", url=turn_server.url + "/nope").run("x", RunSpec(workdir=tmp_path))
    assert wrong.error is not None and ": 404" in wrong.error


async def test_openai_protocol_sends_the_conversation(tmp_path: Path) -> None:
    with OpenAILoopback([{"text": "hello"}, {"text": "again"}, {"text": "given"}]) as srv:
        harness = get_harness("http", url=f"http://127.0.0.1:{srv.port}/v1", model="agent-x")
        one = await harness.run("hi", RunSpec(workdir=tmp_path))
        two = await harness.run("more", RunSpec(workdir=tmp_path, session_id=one.session_id))
        history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
        three = await harness.run("c", RunSpec(workdir=tmp_path, history=history))
    assert (one.answer, two.answer, three.answer) == ("hello", "again", "given")
    assert one.record_level == "answer_only" and one.model_ran == "agent-x"
    assert (
        one.usage.input_tokens > 0
        and one.usage.cost_source == "harness_counts"
        and one.usage.cost_usd is None
    )
    sent = [r["body"]["messages"] for r in srv.requests]
    assert sent[1] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "more"},
    ]
    assert sent[2] == [*history, {"role": "user", "content": "c"}]
    assert json.dumps(sent).count('"hello"') == 1


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="expected http://HOST:PORT"):
        get_harness("http", url="localhost:8000")
    with pytest.raises(ConfigError, match="protocol='grpc'"):
        get_harness("http", url="http://127.0.0.1:1", protocol="grpc")
    with pytest.raises(ConfigError, match="unknown option"):
        get_harness("http", url="http://127.0.0.1:1", retries=3)
