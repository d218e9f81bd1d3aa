"""Equal conditions: every harness (reference, claude-code, Codex CLI and a plain CLI agent under command, a
python callable, the reference agent served to the http harness), on the same prompt through one gateway on
one scripted upstream, gets the same toolchain first on PATH (a bare venv, also in a login shell: Codex CLI
runs its commands in ``bash -lc``), the same offline ``gh``, the same route and the same wall-clock cap, and
returns the same AgentResult, scored by one function.

Each agent runs one probe command (``PROBE``) that writes what it sees to ``probe.txt``; the harnesses run in
turn, so the upstream's ordered replies give each its own tool call (its own tool's name) and then the answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from assay.agents import AgentResult, Harness, Limits, Route, RunSpec, get_harness
from assay.agents._env import bare_venv, run_env
from assay.agents._gh import install_gh, read_gh_log
from assay.agents.claude_code import find_claude
from assay.agents.gateway import Gateway
from assay.agents.reference import ReferenceHarness
from assay.agents.reference.serve import listen, turn_app
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

pytestmark = pytest.mark.slow

try:
    find_claude()
except ConfigError as exc:  # .ci/run installs it; a checkout without it fails loudly rather than skipping
    pytest.fail(str(exc), pytrace=False)

PROMPT = "Report the python and the PATH you run with, and read issue 1."
PROBE = 'command -v python > probe.txt; printf "%s\\n" "$PATH" >> probe.txt; gh issue view 1 >> probe.txt'
ANSWER = "probed"
ISSUE_TITLE = "Widget crashes on empty input"

#: the command harness's agent: a plain CLI agent with one tool, ``bash``, on the OpenAI route it is given
CLI_AGENT = """
import json, os, subprocess, sys, urllib.request
model, prompt = sys.argv[1], sys.argv[2]
tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object",
        "properties": {"command": {"type": "string"}}, "required": ["command"]}}}
messages = [{"role": "user", "content": prompt}]
while True:
    body = json.dumps({"model": model, "messages": messages, "tools": [tool]}).encode()
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                 headers={"content-type": "application/json"})
    msg = json.load(urllib.request.urlopen(req))["choices"][0]["message"]
    messages.append(msg)
    if not msg.get("tool_calls"):
        print(msg["content"])
        break
    for call in msg["tool_calls"]:
        command = json.loads(call["function"]["arguments"])["command"]
        done = subprocess.run(command, shell=True, capture_output=True, text=True)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": done.stdout + done.stderr})
"""

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}


async def py_agent(prompt: str, workdir: Path, route: Route, env: dict[str, str]) -> dict[str, Any]:
    """The python harness's agent: the same loop in-process; its commands run with the ``env`` it is given."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    record: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=None) as client:
        while True:
            reply = await client.post(
                f"{route.openai_base_url}/chat/completions",
                json={"model": route.model, "messages": messages, "tools": [BASH_TOOL]},
            )
            msg = reply.json()["choices"][0]["message"]
            messages.append(msg)
            if not msg.get("tool_calls"):
                return {"answer": msg["content"], "tool_calls": record}
            for call in msg["tool_calls"]:
                command = json.loads(call["function"]["arguments"])["command"]
                proc = await asyncio.create_subprocess_shell(command, cwd=workdir, env=env)
                code = await proc.wait()
                record.append({"name": "bash", "kind": "shell", "command": command, "exit_code": code})
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": f"exit {code}"})


#: harness name -> (how to build it, the tool its agent runs commands with)
TOOL_OF = {
    "reference": "run_shell",
    "claude-code": "Bash",
    "codex": "exec_command",
    "http": "run_shell",
    "command": "bash",
    "python": "bash",
}
SHELL_KIND = "shell"
MODEL_ENDPOINTS = ("/messages", "/chat/completions", "/responses")


@contextmanager
def reference_server() -> Iterator[str]:
    """The reference agent served over the turn protocol (``assay agent serve``), in a thread of this process."""
    sock = listen("127.0.0.1", 0)
    config = uvicorn.Config(turn_app(ReferenceHarness()), log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def harnesses(cli_agent: Path, http_url: str) -> dict[str, Harness]:
    return {
        "reference": get_harness("reference"),
        "claude-code": get_harness("claude-code"),
        "codex": get_harness("command", agent="codex"),
        "command": get_harness("command", template=f"{sys.executable} {cli_agent} {{model}} {{prompt}}"),
        "python": get_harness("python", fn=py_agent),
        "http": get_harness("http", url=http_url),
    }


def probe_reply(tool: str) -> dict[str, Any]:
    args: dict[str, Any] = {"cmd" if tool == "exec_command" else "command": PROBE}
    if tool == "Bash":
        args["description"] = "probe"
    return {
        "tool_calls": [{"name": tool, "arguments": args}],
        "usage": {"input_tokens": 50, "output_tokens": 7},
    }


def _unwrap(command: str | None) -> str | None:
    """The script of a ``bash -lc SCRIPT`` call (Codex records its commands so), else the command."""
    words = shlex.split(command or "")
    return words[2] if len(words) == 3 and words[1] in ("-c", "-lc") else command


def score(result: Any, workdir: Path, toolchain: list[Path]) -> list[str]:
    """The one scorer: what is wrong with a run (empty: it met every condition). Reads only the record
    and the workdir, never the harness."""
    wrong: list[str] = []
    if not isinstance(result, AgentResult):
        return [f"not an AgentResult: {type(result).__name__}"]
    again = AgentResult.model_validate_json(result.model_dump_json())
    if again != result:
        wrong.append("the record does not round-trip through its schema")
    if result.error or result.infra_error or result.cut_off:
        wrong.append(f"failed: {result.error or result.infra_error or result.cut_off}")
    if result.answer.strip() != ANSWER:
        wrong.append(f"answer {result.answer!r}")
    if result.record_level == "full" and [_unwrap(c.command) for c in result.calls(kind=SHELL_KIND)] != [
        PROBE
    ]:
        wrong.append(f"shell calls {[c.command for c in result.tool_record]}")
    probe = workdir / "probe.txt"
    if not probe.is_file():
        return [*wrong, "the probe never ran"]
    lines = probe.read_text().splitlines()
    if lines[:1] != [str(toolchain[0] / "python")]:
        wrong.append(f"python is {lines[:1]}, not the toolchain's")
    path = lines[1].split(":") if len(lines) > 1 else []
    # an agent may put folders of its own first (Codex CLI its helpers); the toolchain comes before the host's
    host = [i for i, p in enumerate(path) if p in os.environ["PATH"].split(":")]
    at = [path.index(str(t)) if str(t) in path else len(path) for t in toolchain]
    if at != sorted(at) or not host or max(at) > min(host):
        wrong.append(f"PATH does not start with the toolchain: {path[:3]}")
    if str(Path(sys.prefix) / "bin") in path:
        wrong.append("the host's venv is on PATH")
    if f"title:\t{ISSUE_TITLE}" not in lines:
        wrong.append("gh issue view 1 did not answer from the fixtures")
    return wrong


@pytest.fixture(scope="module")
def conditions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("equal")
    fixtures = root / "gh-fixtures"
    (fixtures / "issues").mkdir(parents=True)
    (fixtures / "issues" / "1.json").write_text(
        json.dumps({"title": ISSUE_TITLE, "author": {"login": "ann"}})
    )
    (fixtures / "issues" / "1.md").write_text("It crashes.\n")
    gh = install_gh(root / "gh-bin", fixtures, root / "gh.jsonl")
    toolchain = [bare_venv(root / "venv"), gh.bin_dir]
    (root / "cli_agent.py").write_text(CLI_AGENT)
    with reference_server() as http:
        yield {
            "root": root,
            "gh": gh,
            "toolchain": toolchain,
            "cli_agent": root / "cli_agent.py",
            "http": http,
        }


async def _close(hs: dict[str, Harness]) -> None:
    for h in hs.values():
        await h.close()


async def test_same_toolchain_gh_route_and_record(conditions: dict[str, Any]) -> None:
    hs = harnesses(conditions["cli_agent"], conditions["http"])
    script = [r for name in hs for r in (probe_reply(TOOL_OF[name]), {"text": ANSWER})]
    toolchain: list[Path] = conditions["toolchain"]
    results: dict[str, AgentResult] = {}
    calls: dict[str, list[Any]] = {}
    gh_before = len(read_gh_log(conditions["gh"].log))
    try:
        with Gateway(ScriptedModel(script)) as gw:
            for name, harness in hs.items():  # in turn: each takes its two replies of the script
                run = gw.new_run_id()
                workdir = conditions["root"] / f"work-{name}"
                workdir.mkdir()
                spec = RunSpec(
                    workdir=workdir,
                    route=gw.route("claude-sonnet-4-5", run=run),
                    limits=Limits(wall_clock_s=60),
                    toolchain=toolchain,
                )
                results[name] = await harness.run(PROMPT, spec)
                calls[name] = [c for c in gw.calls(run=run) if c.endpoint.endswith(MODEL_ENDPOINTS)]
            everything = gw.calls()
    finally:
        await _close(hs)
    scores = {name: score(r, conditions["root"] / f"work-{name}", toolchain) for name, r in results.items()}
    assert scores == {name: [] for name in hs}, results
    # the same route: each harness's two model calls went through this gateway, to the one upstream
    for name, got in calls.items():
        assert [(c.status, c.upstream) for c in got] == [("ok", "scripted/inline")] * 2, name
        assert [c.tool_calls for c in got] == [1, 0], name
    assert {c.front for c in calls["claude-code"]} == {"anthropic"}
    assert all({c.front for c in calls[n]} == {"openai"} for n in ("reference", "codex", "command", "python"))
    assert sum(c.endpoint.endswith(MODEL_ENDPOINTS) for c in everything) == 2 * len(hs)
    # the same gh: one logged call per harness, all served
    gh_calls = read_gh_log(conditions["gh"].log)[gh_before:]
    assert [(c.argv, c.exit_code, c.refused) for c in gh_calls] == [
        (["gh", "issue", "view", "1"], 0, False)
    ] * len(hs)
    # the tokens the gateway counted are the ones the recording harnesses report
    for name in ("reference", "claude-code", "codex", "http"):
        assert results[name].usage.input_tokens == sum(c.input_tokens for c in calls[name]) > 0, name


async def test_same_wall_clock_cap(conditions: dict[str, Any]) -> None:
    hs = harnesses(conditions["cli_agent"], conditions["http"])
    cap = 4.0
    try:
        with Gateway(ScriptedModel({"replies": [{"text": "late", "delay_s": 6}], "loop": True})) as gw:

            async def one(name: str, harness: Harness) -> AgentResult:
                workdir = conditions["root"] / f"cap-{name}"
                workdir.mkdir()
                spec = RunSpec(
                    workdir=workdir,
                    route=gw.route("claude-sonnet-4-5", run=gw.new_run_id()),
                    limits=Limits(wall_clock_s=cap),
                    toolchain=conditions["toolchain"],
                )
                return await harness.run(PROMPT, spec)

            got = await asyncio.gather(*(one(n, h) for n, h in hs.items()))
    finally:
        await _close(hs)
    for name, r in zip(hs, got, strict=True):
        assert isinstance(r, AgentResult) and r.cut_off == "wall_clock", (name, r)
        assert r.error is None and r.infra_error is None and r.answer != "late", (name, r)
        assert cap - 0.5 <= r.elapsed_s < cap + 3, (name, r.elapsed_s)


async def test_the_scorer_sees_a_run_without_the_conditions(conditions: dict[str, Any]) -> None:
    """The same agent with no toolchain given: the scorer names each condition it did not get."""
    harness = harnesses(conditions["cli_agent"], conditions["http"])["command"]
    workdir = conditions["root"] / "unequal"
    workdir.mkdir()
    with Gateway(ScriptedModel([probe_reply("bash"), {"text": ANSWER}])) as gw:
        spec = RunSpec(workdir=workdir, route=gw.route(run=gw.new_run_id()), limits=Limits(wall_clock_s=30))
        r = await harness.run(PROMPT, spec)
    assert r.error is None and r.answer == ANSWER
    assert score(r, workdir, conditions["toolchain"]) == [
        f"python is {(workdir / 'probe.txt').read_text().splitlines()[:1]}, not the toolchain's",
        f"PATH does not start with the toolchain: {(workdir / 'probe.txt').read_text().splitlines()[1].split(':')[:3]}",
        "gh issue view 1 did not answer from the fixtures",
    ]


def test_a_login_shell_keeps_the_toolchain(conditions: dict[str, Any], tmp_path: Path) -> None:
    """``bash -lc`` sources /etc/profile, which sets PATH anew; the agent's HOME profile puts the run's back."""
    spec = RunSpec(workdir=tmp_path, toolchain=conditions["toolchain"])
    env = run_env(spec, home=tmp_path)
    shown = subprocess.run(["bash", "-lc", 'printf "%s" "$PATH"; echo; command -v python gh'], env=env,
                           capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    assert shown[0] == env["PATH"] and shown[0].startswith(f"{conditions['toolchain'][0]}:")
    assert shown[1:] == [str(conditions["toolchain"][0] / "python"), str(conditions["toolchain"][1] / "gh")]
