"""The reference agent on a scripted model: the exact tool record of a multi-step edit, limits that cut a run
off (keeping its record), usage and the model read back, sessions, profiles, and outages as infra errors."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from assay.agents import AgentResult, Limits, Route, RunSpec, get_harness
from assay.agents.reference import DEFAULT_PROFILE, ReferenceHarness
from assay.agents.reference.memory import MEMORY_TOOLS
from assay.embed import HashEmbedder
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel
from assay.rag import DocumentIndex

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_text(CALC)
    (work / "test_calc.py").write_text(TEST)
    return work


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _without_times(result: AgentResult) -> list[dict[str, Any]]:
    rows = []
    for call in result.tool_record:
        row = call.model_dump()
        assert row.pop("started_s") <= row.pop("ended_s")
        rows.append(row)
    return rows


async def test_multi_step_edit_has_exactly_the_expected_record(project: Path) -> None:
    model = ScriptedModel(
        [
            _call("list_files"),
            _call("run_tests"),
            _call("read_file", path="calc.py"),
            _call("edit_file", path="calc.py", old="a - b", new="a + b"),
            _call("run_tests", args=["test_calc.py"]),
            {
                "text": "add() subtracted; it adds now and both tests pass.",
                "usage": {"input_tokens": 50, "output_tokens": 12},
            },
        ]
    )
    harness = ReferenceHarness(model=model)
    result = await harness.run("Make the tests pass.", RunSpec(workdir=project))

    assert result.answer == "add() subtracted; it adds now and both tests pass."
    assert result.cut_off is None and result.error is None and result.infra_error is None
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    common = {"edited_paths": [], "command": None, "exit_code": None, "test_counts": None, "status": "ok"}
    assert _without_times(result) == [
        {
            **common,
            "name": "list_files",
            "kind": "list",
            "arguments": {},
            "result_summary": "calc.py test_calc.py",
        },
        {
            **common,
            "name": "run_tests",
            "kind": "test",
            "arguments": {},
            "result_summary": result.tool_record[1].result_summary,
            "command": "pytest -q",
            "exit_code": 1,
            "test_counts": {"passed": 1, "failed": 1},
        },
        {
            **common,
            "name": "read_file",
            "kind": "read",
            "arguments": {"path": "calc.py"},
            "result_summary": "def add(a, b): return a - b",
        },
        {
            **common,
            "name": "edit_file",
            "kind": "edit",
            "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"},
            "result_summary": "edited calc.py: replaced 1 occurrence",
            "edited_paths": ["calc.py"],
        },
        {
            **common,
            "name": "run_tests",
            "kind": "test",
            "arguments": {"args": ["test_calc.py"]},
            "result_summary": result.tool_record[4].result_summary,
            "command": "pytest -q test_calc.py",
            "exit_code": 0,
            "test_counts": {"passed": 2, "failed": 0},
        },
    ]
    assert result.tool_record[1].result_summary.startswith("1 passed, 1 failed (1 failed, 1 passed in ")
    assert result.tool_record[4].result_summary.startswith("2 passed, 0 failed (2 passed in ")
    starts = [c.started_s for c in result.tool_record]
    assert starts == sorted(starts) and all(s is not None and s >= 0 for s in starts)
    assert result.edited_paths == ["calc.py"]
    assert result.steps == 6 and result.usage.calls == 6
    # the transcript: system, user, then an assistant message and a tool answer per step, then the answer
    roles = [e.role for e in result.transcript]
    assert roles == ["system", "user"] + ["assistant", "tool"] * 5 + ["assistant"]
    assert result.transcript[0].content == (DEFAULT_PROFILE / "system.md").read_text().strip()
    assert result.transcript[4].tool_calls[0]["name"] == "run_tests"
    assert "1 failed" in result.transcript[5].content and result.transcript[5].tool_call_id
    # the model saw each tool's result, and every tool of the profile with its description and schema
    seen = model.calls[3]["messages"][-1]
    assert seen.role == "tool" and seen.content == CALC
    offered = {t.name: t for t in model.calls[0]["tools"]}
    # every tool the profile describes, but query_documents only when there are documents
    tool_files = {p.stem for p in (DEFAULT_PROFILE / "tools").glob("*.md")}
    assert set(offered) == tool_files - {"query_documents", *MEMORY_TOOLS}
    assert (
        offered["edit_file"].description == (DEFAULT_PROFILE / "tools" / "edit_file.md").read_text().strip()
    )
    assert offered["edit_file"].parameters["required"] == ["path", "old", "new"]
    # usage summed; the scripted model prices at 0 with counted tokens; the model read back from its output
    assert result.usage.output_tokens >= 12 and result.usage.input_tokens > 50
    assert result.usage.cost_usd == 0.0 and result.usage.cost_source == "harness_counts"
    assert result.model_ran == "inline"
    assert AgentResult.model_validate_json(result.model_dump_json()) == result


async def test_get_harness_builds_the_reference_agent_from_a_script_file(
    project: Path, tmp_path: Path
) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- tool_calls: [{name: grep, arguments: {pattern: 'def \\w+'}}]\n- text: done\n")
    harness = get_harness("reference", model=f"scripted/{script}")
    assert isinstance(harness, ReferenceHarness)
    result = await harness.run("find functions", RunSpec(workdir=project))
    assert result.answer == "done"
    assert result.tool_record[0].result_summary == (
        "calc.py:1:def add(a, b): test_calc.py:4:def test_add(): test_calc.py:8:def test_zero():"
    )
    assert result.model_ran == str(script)


async def test_bad_tool_calls_are_answered_and_recorded(project: Path) -> None:
    model = ScriptedModel(
        [
            _call("delete_everything"),
            _call("read_file"),
            _call("read_file", path="calc.py", colour="red"),
            _call("read_file", path="missing.py"),
            _call("edit_file", path="calc.py", old="nothing like this", new="x"),
            _call("edit_file", path="test_calc.py", old="add(", new="x("),
            {"text": "gave up"},
        ]
    )
    result = await ReferenceHarness(model=model).run("go", RunSpec(workdir=project))
    assert [c.status for c in result.tool_record] == ["not_offered"] + ["error"] * 5
    summaries = [c.result_summary for c in result.tool_record]
    assert summaries[0].startswith("unknown tool 'delete_everything' (tools: edit_file, grep,")
    assert summaries[1] == "error: missing argument(s) path"
    assert summaries[2] == "error: unknown argument(s) colour (known: path, start_line, end_line)"
    assert summaries[3] == "error: no such file or directory: missing.py"
    assert "was not found in calc.py; nothing changed" in summaries[4]
    assert "found 3 times" in summaries[5]
    assert result.tool_record[0].kind == "other"
    assert (project / "calc.py").read_text() == CALC and result.answer == "gave up"


async def test_step_cap_cuts_off_and_keeps_the_record(project: Path) -> None:
    model = ScriptedModel({"replies": [_call("read_file", path="calc.py")], "loop": True})
    result = await ReferenceHarness(model=model).run(
        "loop", RunSpec(workdir=project, limits=Limits(max_steps=3))
    )
    assert result.cut_off == "steps" and result.steps == 3 and result.answer == ""
    assert [c.name for c in result.tool_record] == ["read_file"] * 3
    assert all(c.status == "ok" for c in result.tool_record)
    assert result.usage.calls == 3 and result.usage.total_tokens > 0


async def test_wall_clock_cuts_off_a_command_and_keeps_the_record(project: Path) -> None:
    model = ScriptedModel(
        [_call("write_file", path="notes.txt", content="hi"), _call("run_shell", command="sleep 20")]
    )
    spec = RunSpec(workdir=project, limits=Limits(wall_clock_s=1.0))
    result = await ReferenceHarness(model=model).run("go", spec)
    assert result.cut_off == "wall_clock"
    assert [c.name for c in result.tool_record] == ["write_file", "run_shell"]
    shell = result.tool_record[1]
    assert shell.status == "timeout" and shell.exit_code is None and shell.command == "sleep 20"
    assert result.edited_paths == ["notes.txt"]
    assert 0.9 < result.elapsed_s < 5.0


async def test_wall_clock_cuts_off_a_slow_model_call(project: Path) -> None:
    model = ScriptedModel([_call("list_files"), {"text": "late", "delay_s": 10}])
    spec = RunSpec(workdir=project, limits=Limits(wall_clock_s=0.5))
    result = await ReferenceHarness(model=model).run("go", spec)
    assert result.cut_off == "wall_clock" and result.answer == "" and result.steps == 1
    assert [c.name for c in result.tool_record] == ["list_files"]
    assert result.elapsed_s < 3.0


async def test_token_cap_stops_before_running_more_tools(project: Path) -> None:
    used = {"input_tokens": 40, "output_tokens": 10}
    model = ScriptedModel(
        [
            {**_call("read_file", path="calc.py"), "usage": used},
            {**_call("write_file", path="x.txt", content="never"), "usage": used},
        ]
    )
    spec = RunSpec(workdir=project, limits=Limits(max_tokens=80))
    result = await ReferenceHarness(model=model).run("go", spec)
    assert result.cut_off == "tokens" and result.usage.total_tokens == 100
    assert [c.name for c in result.tool_record] == ["read_file"]
    assert not (project / "x.txt").exists()
    assert (
        result.transcript[-1].role == "tool"
        and result.transcript[-1].content == "not run: the token budget ran out"
    )


async def test_no_tokens_counted_is_no_cost(project: Path) -> None:
    model = ScriptedModel([{"text": "hi", "usage": {"input_tokens": 0, "output_tokens": 0}}])
    result = await ReferenceHarness(model=model).run("hi", RunSpec(workdir=project))
    assert result.usage.calls == 1 and result.usage.total_tokens == 0 and result.usage.cost_usd is None


async def test_model_errors_are_recorded_not_raised(project: Path) -> None:
    infra = ScriptedModel([_call("list_files"), {"error": "auth", "message": "key rejected"}])
    result = await ReferenceHarness(model=infra).run("go", RunSpec(workdir=project))
    assert result.infra_error == "scripted: key rejected" and result.error is None
    assert [c.name for c in result.tool_record] == ["list_files"]
    subject = ScriptedModel([{"error": "subject", "message": "context too long"}])
    result = await ReferenceHarness(model=subject).run("go", RunSpec(workdir=project))
    assert result.error == "ModelResponseError: scripted: context too long" and result.infra_error is None
    assert result.usage.calls == 0 and result.usage.cost_usd is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_unreachable_openai_compat_url_is_an_infra_error(project: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    harness = ReferenceHarness(model=f"openai-compat/qwen@{url}", model_args={"max_retries": 0})
    result = await harness.run("hi", RunSpec(workdir=project))
    assert (
        result.infra_error is not None
        and "cannot connect" in result.infra_error
        and url in result.infra_error
    )
    assert result.error is None and result.tool_record == [] and result.usage.cost_usd is None
    # the same through a route (the gateway's URL), with no model of the harness's own
    routed = ReferenceHarness(model_args={"max_retries": 0})
    result = await routed.run("hi", RunSpec(workdir=project, route=Route(model="m", openai_base_url=url)))
    assert result.infra_error is not None and "cannot connect" in result.infra_error
    await harness.close()


class _Gateway:
    """A loopback OpenAI-compatible server whose replies name another model than the one asked for."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                owner.requests.append(body)
                data = json.dumps(replies.pop(0)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _completion(message: dict[str, Any], finish: str, tokens: tuple[int, int]) -> dict[str, Any]:
    return {
        "model": "served-model-7b",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
    }


@pytest.fixture
def gateway() -> Iterator[_Gateway]:
    call = {"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
    gw = _Gateway(
        [
            _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls", (30, 5)),
            _completion({"role": "assistant", "content": "two files"}, "stop", (45, 3)),
        ]
    )
    yield gw
    gw.close()


async def test_route_talks_to_the_gateway_and_reads_the_model_back(project: Path, gateway: _Gateway) -> None:
    harness = ReferenceHarness(model="scripted/never-used.yaml")
    spec = RunSpec(workdir=project, route=Route(model="asked-for", openai_base_url=gateway.url))
    result = await harness.run("what is here?", spec)
    await harness.close()
    assert result.answer == "two files" and result.model_ran == "served-model-7b"
    assert [gateway.requests[0]["model"], gateway.requests[1]["model"]] == ["asked-for", "asked-for"]
    assert {t["function"]["name"] for t in gateway.requests[0]["tools"]} >= {"read_file", "run_tests"}
    assert gateway.requests[1]["messages"][-1]["role"] == "tool"
    assert gateway.requests[1]["messages"][-1]["content"] == "calc.py\ntest_calc.py"
    assert result.tool_record[0].name == "list_files" and result.tool_record[0].status == "ok"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.calls) == (75, 8, 2)


async def test_a_session_keeps_the_conversation_between_turns(project: Path) -> None:
    model = ScriptedModel([{"text": "first answer"}, _call("list_files"), {"text": "second answer"}])
    harness = ReferenceHarness(model=model)
    one = await harness.run("turn one", RunSpec(workdir=project))
    two = await harness.run("turn two", RunSpec(workdir=project, session_id=one.session_id))
    assert (one.answer, two.answer) == ("first answer", "second answer")
    assert two.session_id == one.session_id and [c.name for c in two.tool_record] == ["list_files"]
    assert [m.content for m in model.calls[1]["messages"] if m.role in ("user", "assistant")] == [
        "turn one",
        "first answer",
        "turn two",
    ]
    with pytest.raises(ConfigError, match="no session 'nope'"):
        await harness.run("x", RunSpec(workdir=project, session_id="nope"))


def _profile(root: Path, tools: dict[str, str], system: str = "Be brief.") -> Path:
    (root / "tools").mkdir(parents=True)
    (root / "system.md").write_text(system)
    for name, text in tools.items():
        (root / "tools" / f"{name}.md").write_text(text)
    return root


async def test_a_profile_folder_sets_prompt_tools_and_skills(project: Path, tmp_path: Path) -> None:
    profile = _profile(tmp_path / "p", {"read_file": "Read one file."})
    (profile / "skills").mkdir()
    (profile / "skills" / "testing.md").write_text("Run the tests last.\n")
    model = ScriptedModel([_call("run_shell", command="true"), {"text": "ok"}])
    result = await ReferenceHarness(model=model, profile=profile).run("go", RunSpec(workdir=project))
    assert [(t.name, t.description) for t in model.calls[0]["tools"]] == [("read_file", "Read one file.")]
    assert model.calls[0]["messages"][0].content == "Be brief.\n\n## Skill: testing\n\nRun the tests last."
    assert result.tool_record[0].status == "not_offered"  # a tool the profile does not offer is not run
    assert result.tool_record[0].result_summary == "unknown tool 'run_shell' (tools: read_file)"


def test_bad_profiles_are_config_errors_naming_the_file(tmp_path: Path) -> None:
    unknown = _profile(tmp_path / "a", {"read_file": "x", "teleport": "Go anywhere."})
    with pytest.raises(ConfigError, match=r"tools/teleport\.md: unknown tool 'teleport'"):
        ReferenceHarness(profile=unknown)
    bare = tmp_path / "b"
    (bare / "tools").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"b/system\.md: the profile has no system prompt"):
        ReferenceHarness(profile=bare)
    partial = _profile(tmp_path / "c", {"read_file": "x"})
    with pytest.raises(ConfigError, match=r"c/tools/grep\.md: no description for tool 'grep'"):
        ReferenceHarness(profile=partial, tools=["read_file", "grep"])
    empty = _profile(tmp_path / "d", {"read_file": "  \n"})
    with pytest.raises(ConfigError, match=r"d/tools/read_file\.md: empty file"):
        ReferenceHarness(profile=empty)
    with pytest.raises(ConfigError, match="--profile"):
        ReferenceHarness(profile=tmp_path / "missing")
    with pytest.raises(ConfigError, match="unknown option"):
        ReferenceHarness(temperature=0)


async def test_no_model_and_no_route_is_a_config_error(project: Path) -> None:
    with pytest.raises(ConfigError, match="no model"):
        await ReferenceHarness().run("hi", RunSpec(workdir=project))
    with pytest.raises(ConfigError, match="--workdir"):
        await ReferenceHarness(model="scripted/x.yaml").run("hi", RunSpec(workdir=project / "nope"))


async def test_search_code_finds_code_and_follows_the_agents_edits(project: Path) -> None:
    model = ScriptedModel(
        [
            _call("search_code", query="add", k=2),
            _call(
                "write_file",
                path="geometry.py",
                content="def rectangle_area(width, height):\n    return width * height\n",
            ),
            _call("search_code", query="rectangle_area", k=1),
            {"text": "found it"},
        ]
    )
    harness = ReferenceHarness(model=model, code_embedder="hash")
    result = await harness.run("where is area computed?", RunSpec(workdir=project))
    first, _, second = result.tool_record
    assert first.kind == "search" and first.status == "ok" and first.result_summary.startswith("calc.py:1")
    assert second.status == "ok" and second.result_summary == "geometry.py:1"
    shown = [e.content for e in result.transcript if e.role == "tool"][2]
    assert shown.startswith("geometry.py:1-2 rectangle_area (function)\ndef rectangle_area(width, height):")
    assert sorted(p.name for p in project.iterdir()) == ["calc.py", "geometry.py", "test_calc.py"]
    index_dir = harness.code_search._dir if harness.code_search else None
    assert index_dir is not None and index_dir.is_dir()
    await harness.close()
    assert not index_dir.exists()


class _SlowEmbedder(HashEmbedder):
    def embed(self, texts: Any) -> Any:
        time.sleep(1.5)
        return super().embed(texts)


async def test_wall_clock_cuts_off_a_slow_tool_in_this_process(project: Path) -> None:
    model = ScriptedModel([_call("list_files"), _call("search_code", query="add")])
    harness = ReferenceHarness(model=model, code_embedder=_SlowEmbedder())
    spec = RunSpec(workdir=project, limits=Limits(wall_clock_s=0.5))
    result = await harness.run("go", spec)
    assert result.cut_off == "wall_clock" and result.elapsed_s < 1.4  # 0.5 s + the 0.5 s grace
    assert [(c.name, c.status) for c in result.tool_record] == [
        ("list_files", "ok"),
        ("search_code", "timeout"),
    ]
    assert result.tool_record[1].result_summary == "stopped: the wall clock ran out"
    await harness.close()  # waits for the search still in its thread, then removes the index


async def test_query_documents_searches_the_documents_given(project: Path) -> None:
    documents = DocumentIndex(HashEmbedder())
    documents.index_text("handbook", "Vacation policy. Every employee gets 25 vacation days a year. " * 3)
    documents.index_text("menu", "The canteen serves soup on Mondays and fish on Fridays. " * 3)
    model = ScriptedModel(
        [_call("query_documents", query='"vacation days"', max_chunks=1), {"text": "25 days"}]
    )
    harness = ReferenceHarness(model=model, documents=documents)
    result = await harness.run("how many vacation days?", RunSpec(workdir=project))
    [call] = result.tool_record
    assert (call.name, call.kind, call.status, call.result_summary) == (
        "query_documents",
        "documents",
        "ok",
        "handbook#1",
    )
    assert "25 vacation days" in next(e.content for e in result.transcript if e.role == "tool")
    assert "query_documents" in {t.name for t in model.calls[0]["tools"]}
    with pytest.raises(ConfigError, match="query_documents tool needs documents="):
        ReferenceHarness(tools=["read_file", "query_documents"])
