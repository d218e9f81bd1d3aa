"""`assay agent serve` as a user runs it (a real subprocess on a free loopback port, a scripted model): turns
over POST /turn keep their conversation under the session id, with httpx and with the ``http`` harness; bad
turns of one session run one after another; without --model a turn runs on the route it carries (the gateway);
--fence holds the agent's commands inside the workdir; bad turns are refused with a clear 4xx; Ctrl-C stops it;
a public host, a busy port or an unknown model is refused at start."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from gateway_fakes import closed_port

from assay.agents import AgentResult, Limits, RunSpec
from assay.agents._http import HttpHarness
from assay.agents.fence import fence_available
from assay.agents.gateway import Gateway
from assay.models.scripted import ScriptedModel

SCRIPT = """\
- tool_calls: [{name: read_file, arguments: {path: notes.txt}}]
  usage: {input_tokens: 100, output_tokens: 8}
- text: "The notes say: buy milk."
  usage: {input_tokens: 130, output_tokens: 6}
- text: "You asked about the notes."
  usage: {input_tokens: 150, output_tokens: 5}
- tool_calls: [{name: list_files, arguments: {}}]
- text: "Two files."
- text: "Still two files."
"""


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "assay", "agent", "serve", *args]


def _env(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "COLUMNS": "160"}


@contextmanager
def _serve(
    tmp_path: Path, script_text: str, *extra: str
) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("buy milk\n")
    (work / "todo.md").write_text("- nothing\n")
    script = tmp_path / "script.yaml"
    model = ["--model", f"scripted/{script}"] if script_text is not None else []
    if script_text is not None:
        script.write_text(script_text)
    port = closed_port()
    proc = subprocess.Popen(
        _cmd("--port", str(port), *model, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith(f"serving the reference agent on http://127.0.0.1:{port}"), (
        first + proc.stderr.read()
    )
    shown = f"scripted/{script}" if model else "none: each turn must carry a route (model + openai_base_url)"
    assert proc.stdout.readline().strip() == f"model: {shown}"
    try:
        yield f"http://127.0.0.1:{port}", work, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    with _serve(tmp_path, SCRIPT) as s:
        yield s


def test_two_turns_keep_the_conversation_then_ctrl_c(served: tuple[str, Path, subprocess.Popen[str]]) -> None:
    url, work, proc = served
    with httpx.Client(base_url=url, timeout=30) as client:
        limits = {"wall_clock_s": 20, "max_steps": 5, "max_tokens": None}
        reply = client.post(
            "/turn", json={"prompt": "What do my notes say?", "workdir": str(work), "limits": limits}
        )
        assert reply.status_code == 200, reply.text
        one = AgentResult.model_validate(reply.json())
        assert one.error is None and one.harness == "reference"
        assert one.answer == "The notes say: buy milk." and one.steps == 2
        [call] = one.tool_record
        assert (call.name, call.kind, call.status, call.result_summary) == (
            "read_file",
            "read",
            "ok",
            "buy milk",
        )
        assert (one.usage.input_tokens, one.usage.output_tokens, one.usage.calls) == (230, 14, 2)
        assert one.session_id

        reply = client.post(
            "/turn", json={"prompt": "What did I ask?", "workdir": str(work), "session_id": one.session_id}
        )
        assert reply.status_code == 200, reply.text
        two = AgentResult.model_validate(reply.json())
        assert two.answer == "You asked about the notes." and two.session_id == one.session_id
        assert two.steps == 1 and two.tool_record == [] and two.usage.input_tokens == 150
        # the second turn's conversation is the first one's, then the new prompt and its answer
        assert [(e.role, e.content) for e in two.transcript[:-2]] == [
            (e.role, e.content) for e in one.transcript
        ]
        assert [(e.role, e.content) for e in two.transcript[-2:]] == [
            ("user", "What did I ask?"),
            ("assistant", "You asked about the notes."),
        ]

        # bad turns: a clear 4xx naming what is wrong, and nothing run
        unknown = client.post("/turn", json={"prompt": "hi", "workdir": str(work), "session_id": "nope"})
        assert unknown.status_code == 404 and "'nope'" in unknown.json()["error"]
        relative = client.post("/turn", json={"prompt": "hi", "workdir": "work"})
        assert relative.status_code == 400 and "workdir 'work'" in relative.json()["error"]
        history = client.post(
            "/turn",
            json={"prompt": "hi", "workdir": str(work), "history": [{"role": "user", "content": "x"}]},
        )
        assert history.status_code == 400 and "session_id instead" in history.json()["error"]
        half_route = client.post("/turn", json={"prompt": "hi", "workdir": str(work), "model": "m"})
        assert half_route.status_code == 400 and "openai_base_url" in half_route.json()["error"]
        broken = client.post("/turn", content=b"{not json", headers={"content-type": "application/json"})
        assert broken.status_code == 422 and broken.json()["error"].startswith("not a TurnRequest")
        no_prompt = client.post("/turn", json={"workdir": str(work)})
        assert no_prompt.status_code == 422 and "prompt: Field required" in no_prompt.json()["error"]
        status = client.get("/").json()
        assert status == {
            "agent": "reference",
            "protocol_version": 1,
            "turn": "/turn",
            "fence": fence_available() is None,  # on by default wherever bubblewrap works
            "turns": 2,
        }

    proc.send_signal(signal.SIGINT)
    assert proc.wait(15) == 0


async def test_the_http_harness_drives_it(served: tuple[str, Path, subprocess.Popen[str]]) -> None:
    url, work, _ = served
    harness = HttpHarness(url=url)
    spec = RunSpec(workdir=work, limits=Limits(wall_clock_s=20, max_steps=5))
    one = await harness.run("What do my notes say?", spec)
    assert one.error is None and one.harness == "http" and one.answer == "The notes say: buy milk."
    assert [(c.name, c.status) for c in one.tool_record] == [("read_file", "ok")]
    spec.session_id = one.session_id
    two = await harness.run("And?", spec)
    assert two.error is None and two.session_id == one.session_id
    assert two.answer == "You asked about the notes."
    assert [e.content for e in two.transcript if e.role == "user"] == ["What do my notes say?", "And?"]
    fresh = await harness.run("List the files.", RunSpec(workdir=work))
    assert fresh.session_id != one.session_id and fresh.answer == "Two files."
    assert [(c.name, c.result_summary) for c in fresh.tool_record] == [("list_files", "notes.txt todo.md")]
    assert [e.role for e in fresh.transcript].count("user") == 1
    await harness.close()


async def test_without_a_model_turns_run_on_the_route_they_carry(tmp_path: Path) -> None:
    reply = {
        "tool_calls": [{"name": "list_files", "arguments": {}}],
        "usage": {"input_tokens": 90, "output_tokens": 7},
    }
    done = {"text": "Two files, via the gateway.", "usage": {"input_tokens": 120, "output_tokens": 6}}
    upstream = ScriptedModel([reply, done, reply, done])
    with Gateway(upstream) as gateway, _serve(tmp_path, None) as (url, work, _):
        no_route = httpx.post(f"{url}/turn", json={"prompt": "hi", "workdir": str(work)}, timeout=30)
        assert no_route.status_code == 400 and "no model" in no_route.json()["error"]
        run = Gateway.new_run_id()
        route = gateway.route(run=run)
        body = {
            "prompt": "List the files.",
            "workdir": str(work),
            "model": route.model,
            "openai_base_url": route.openai_base_url,
        }
        answered = httpx.post(f"{url}/turn", json=body, timeout=30)
        assert answered.status_code == 200, answered.text
        result = AgentResult.model_validate(answered.json())
        counted = gateway.usage(run=run)
        # the http harness sends its RunSpec's route the same way
        harness = HttpHarness(url=url)
        again = await harness.run("List the files.", RunSpec(workdir=work, route=gateway.route(run="second")))
        await harness.close()
        second = gateway.usage(run="second")
    assert result.error is None and result.answer == "Two files, via the gateway."
    assert [(c.name, c.result_summary) for c in result.tool_record] == [("list_files", "notes.txt todo.md")]
    assert counted.calls == 2 and counted.usage.input_tokens == result.usage.input_tokens == 210
    assert again.error is None and again.answer == result.answer and second.calls == 2


async def test_turns_of_one_session_run_one_after_another(tmp_path: Path) -> None:
    script = '- text: "first"\n- text: "second"\n  delay_s: 0.3\n- text: "third"\n  delay_s: 0.3\n'
    with _serve(tmp_path, script) as (url, work, _):
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            first = (await client.post("/turn", json={"prompt": "p1", "workdir": str(work)})).json()
            session = first["session_id"]
            turns = [{"prompt": p, "workdir": str(work), "session_id": session} for p in ("p2", "p3")]
            started = time.monotonic()
            replies = await asyncio.gather(*(client.post("/turn", json=t) for t in turns))
            took = time.monotonic() - started
    early, late = sorted(
        (AgentResult.model_validate(r.json()) for r in replies), key=lambda r: len(r.transcript)
    )
    # the later turn saw the earlier one whole: its prompt and answer, never a half-done turn
    assert [(e.role, e.content) for e in late.transcript[:-2]] == [
        (e.role, e.content) for e in early.transcript
    ]
    assert [e.content for e in late.transcript if e.role == "user"] == [
        "p1",
        early.transcript[-2].content,
        late.transcript[-2].content,
    ]
    assert (early.answer, late.answer) == ("second", "third") and took >= 0.6


def test_fenced_turns_cannot_read_outside_the_workdir(tmp_path: Path) -> None:
    planted = tmp_path / "planted.txt"
    planted.write_text("the planted secret 7f3a\n")
    # the path in octal escapes, so the best-effort shell check lets it through: only the fence stops it
    command = "cat \"$(printf '" + str(planted).replace("/", "\\057") + "')\""
    script = (
        f"- tool_calls: [{{name: run_shell, arguments: {{command: {json.dumps(command)}}}}}]\n- text: done\n"
    )
    with _serve(tmp_path, script, "--fence") as (url, work, proc):
        assert proc.stdout is not None and "fence: on" in proc.stdout.readline()
        reply = httpx.post(f"{url}/turn", json={"prompt": "read it", "workdir": str(work)}, timeout=30)
        assert reply.status_code == 200, reply.text
        assert httpx.get(url).json()["fence"] is True
    [call] = AgentResult.model_validate(reply.json()).tool_record
    assert call.status == "error" and "No such file or directory" in call.result_summary
    assert "7f3a" not in reply.text


def test_refuses_a_public_host_and_a_busy_port(tmp_path: Path) -> None:
    done = subprocess.run(
        _cmd("--port", "8799", "--host", "0.0.0.0"),
        capture_output=True,
        text=True,
        timeout=30,
        env=_env(tmp_path),
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: --host '0.0.0.0': the agent runs commands on this machine; serve loopback only"
    ]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        started = time.monotonic()
        done = subprocess.run(
            _cmd("--port", str(port)), capture_output=True, text=True, timeout=30, env=_env(tmp_path)
        )
    assert done.returncode == 1 and time.monotonic() - started < 20
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: --port {port}: cannot listen on 127.0.0.1")
    bad_model = subprocess.run(
        _cmd("--port", str(closed_port()), "--model", "nosuch/provider"),
        capture_output=True,
        text=True,
        timeout=30,
        env=_env(tmp_path),
    )
    assert bad_model.returncode != 0 and "nosuch" in bad_model.stderr and bad_model.stdout == ""
