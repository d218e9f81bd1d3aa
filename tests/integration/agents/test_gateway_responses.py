"""The gateway's OpenAI Responses front (``POST /v1/responses``): the ``openai`` client's ``responses.create``
and its stream helper against a scripted upstream, an outage as INFRA, and (slow) Codex CLI through it."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest

from assay.agents import Limits, RunSpec, get_harness
from assay.agents.gateway import Gateway
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel

TOOL = {
    "type": "function",
    "name": "shell",
    "description": "run a command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}
SCRIPT = [
    {
        "tool_calls": [{"name": "shell", "arguments": {"cmd": "ls"}, "id": "call_1"}],
        "usage": {"input_tokens": 30, "output_tokens": 6},
    },
    {"text": "two files", "usage": {"input_tokens": 45, "output_tokens": 2}},
]


def _client(gw: Gateway, run: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.route(run=run).openai_base_url, api_key="x", max_retries=0)


def test_create_round_trip_with_a_tool_call() -> None:
    upstream = ScriptedModel(SCRIPT)
    with Gateway(upstream) as gw:
        run = gw.new_run_id()
        client = _client(gw, run)
        first = client.responses.create(
            model="gpt-5", instructions="be brief", input="list the files", tools=[TOOL], max_output_tokens=50
        )
        (call,) = first.output
        assert (call.type, call.name, call.arguments, call.call_id) == (
            "function_call",
            "shell",
            '{"cmd": "ls"}',
            "call_1",
        )
        second = client.responses.create(
            model="gpt-5",
            input=[
                {"role": "user", "content": "list the files"},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": '{"cmd": "ls"}'},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.py\nb.py"},
            ],
            tools=[TOOL, {"type": "web_search"}],
        )
        counted = gw.usage(run=run)
        calls = gw.calls(run=run)
    assert second.output_text == "two files" and second.status == "completed"
    assert (first.usage.input_tokens, first.usage.output_tokens, second.usage.total_tokens) == (30, 6, 47)
    assert (counted.usage.input_tokens, counted.usage.output_tokens, counted.calls) == (75, 8, 2)
    assert [(c.front, c.endpoint.rsplit("/", 2)[-2:], c.status) for c in calls] == [
        ("openai", ["v1", "responses"], "ok")
    ] * 2
    sent = upstream.calls
    assert [m.role for m in sent[0]["messages"]] == ["system", "user"]
    assert sent[0]["options"]["max_tokens"] == 50 and sent[0]["messages"][0].content == "be brief"
    # the reasoning item is left out; the web_search tool is not offered to the chat model
    assert [m.role for m in sent[1]["messages"]] == ["user", "assistant", "tool"]
    assert sent[1]["messages"][1].tool_calls[0].arguments == {"cmd": "ls"}
    assert sent[1]["messages"][2].tool_call_id == "call_1" and sent[1]["messages"][2].content == "a.py\nb.py"
    assert [t.name for t in sent[1]["tools"]] == ["shell"]


def test_stream_events_and_the_final_response() -> None:
    with Gateway(ScriptedModel(SCRIPT)) as gw:
        run = gw.new_run_id()
        client = _client(gw, run)
        events = list(client.responses.create(model="gpt-5", input="list", tools=[TOOL], stream=True))
        with client.responses.stream(model="gpt-5", input="list", tools=[TOOL]) as stream:
            text_events = list(stream)
            deltas = [e.delta for e in text_events if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
        counted = gw.usage(run=run)
    kinds = [e.type for e in events]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[-1].response.output[0].name == "shell" and events[-1].response.usage.input_tokens == 30
    assert "".join(deltas) == final.output_text == "two files"
    text_kinds = [e.type for e in text_events if e.type != "response.output_text.delta"]
    assert text_kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert final.usage.output_tokens == 2
    assert (counted.usage.input_tokens, counted.usage.output_tokens, counted.calls) == (75, 8, 2)


def test_outage_and_bad_requests() -> None:
    with Gateway(ScriptedModel({"replies": [{"error": "infra"}], "loop": True})) as gw:
        url = gw.route().openai_base_url + "/responses"
        down = httpx.post(url, json={"model": "m", "input": "hi"})
        stale = httpx.post(url, json={"model": "m", "input": "hi", "previous_response_id": "resp_1"})
        odd = httpx.post(url, json={"model": "m", "input": [{"type": "computer_call"}]})
    assert down.status_code == 503 and down.headers["x-assay-infra-error"] == "1"
    assert down.json()["error"]["type"] == "assay_infra_error"
    assert stale.status_code == 400 and "previous_response_id" in stale.json()["error"]["message"]
    assert odd.status_code == 400 and "input[0]: item type 'computer_call'" in odd.json()["error"]["message"]


@pytest.mark.slow
async def test_codex_through_the_gateway(tmp_path: Path) -> None:
    harness = get_harness("command", agent="codex")
    try:
        harness.program({"PATH": ""})
    except ConfigError as exc:  # .ci/run installs it; without it this fails loudly rather than skipping
        pytest.fail(str(exc), pytrace=False)
    script = [
        {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "printf 'x = 1\\n' > a.py"}}]},
        {"text": "a.py is written."},
    ]
    with Gateway(ScriptedModel(script)) as gw:
        run = gw.new_run_id()
        spec = RunSpec(workdir=tmp_path, route=gw.route("gpt-5", run=run), limits=Limits(wall_clock_s=90))
        r = await harness.run("write a.py", spec)
        counted = gw.usage(run=run)
        calls = gw.calls(run=run)
    assert r.error is None and r.infra_error is None and r.exit_code == 0, r
    assert r.answer == "a.py is written." and r.record_level == "full"
    (call,) = r.tool_record
    assert call.kind == "shell" and call.exit_code == 0
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
    assert [c.endpoint.endswith("/responses") and c.stream and c.status == "ok" for c in calls] == [
        True,
        True,
    ]
    assert counted.usage.input_tokens > 0 and counted.usage.output_tokens > 0
    assert r.usage.input_tokens == counted.usage.input_tokens
    assert r.usage.output_tokens == counted.usage.output_tokens
