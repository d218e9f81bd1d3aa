"""The gateway's Anthropic front: requests shaped like Claude Code's (system blocks with cache_control,
content blocks, tool_use / tool_result, ``?beta=true``) over plain HTTP, and the official ``anthropic``
client; exact translation both ways, the SSE event sequence, token counts, count_tokens and the outage."""

from __future__ import annotations

import math
from typing import Any

import anthropic
import httpx
import pytest
from gateway_fakes import HEADERS, closed_port, scripted, sse

from assay.agents.gateway import Gateway
from assay.models import Message, Tool, ToolCall

SYSTEM = [
    {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
    {"type": "text", "text": "Work in the current directory.", "cache_control": {"type": "ephemeral"}},
]
TOOLS = [
    {
        "name": "Read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {}}},
    },
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
]


def claude_code_body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5-20250929",
        "max_tokens": 32000,
        "system": SYSTEM,
        "messages": messages,
        "tools": TOOLS,
        "metadata": {"user_id": "user_abc_session_1"},
        **extra,
    }


def post(gw: Gateway, body: dict[str, Any], path: str = "/v1/messages?beta=true") -> httpx.Response:
    return httpx.post(f"{gw.anthropic_base_url}{path}", json=body, headers=HEADERS)


def test_claude_code_shaped_request_translated_exactly() -> None:
    up = scripted({"text": "I will read it.", "usage": {"input_tokens": 41, "output_tokens": 5}})
    turn = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>Be careful.</system-reminder>"},
                {"type": "text", "text": "Read main.py", "cache_control": {"type": "ephemeral"}},
            ],
        }
    ]
    with Gateway(up) as gw:
        response = post(gw, claude_code_body(turn, temperature=1))
        (record,) = gw.calls()
    assert response.status_code == 200
    body = response.json()
    assert body["content"] == [{"type": "text", "text": "I will read it."}]
    assert (body["type"], body["role"], body["stop_reason"], body["model"]) == (
        "message",
        "assistant",
        "end_turn",
        "scripted/inline",
    )
    assert body["id"].startswith("msg_")
    assert body["usage"] == {
        "input_tokens": 41,
        "output_tokens": 5,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    (seen,) = up.calls
    assert seen["messages"] == [
        Message(
            "system",
            "You are Claude Code, Anthropic's official CLI for Claude.\n\nWork in the current directory.",
        ),
        Message("user", "<system-reminder>Be careful.</system-reminder>\nRead main.py"),
    ]
    # the provider-side web search tool is left out: only the agent runs tools here
    assert seen["tools"] == [Tool("Read", "Read a file", {"type": "object", "properties": {"path": {}}})]
    assert seen["options"] == {"temperature": 1, "max_tokens": 32000}
    assert record.front == "anthropic" and record.model_asked == "claude-sonnet-4-5-20250929"
    assert (record.input_tokens, record.output_tokens, record.endpoint) == (41, 5, "/v1/messages")


def test_tool_use_round_trip_and_thinking_dropped() -> None:
    up = scripted(
        {
            "text": "Reading.",
            "tool_calls": [{"id": "toolu_01", "name": "Read", "arguments": {"path": "main.py"}}],
        },
        {"text": "It prints hi."},
    )
    ask = {"role": "user", "content": "What does main.py do?"}
    with Gateway(up) as gw:
        first = post(gw, claude_code_body([ask])).json()
        assert first["stop_reason"] == "tool_use"
        assert first["content"] == [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"path": "main.py"}},
        ]
        history = [
            ask,
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}, *first["content"]],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": [{"type": "text", "text": "print('hi')"}],
                    },
                    {"type": "text", "text": "Answer briefly."},
                ],
            },
        ]
        second = post(gw, claude_code_body(history)).json()
    assert second["content"] == [{"type": "text", "text": "It prints hi."}]
    assert up.calls[1]["messages"][1:] == [
        Message("user", "What does main.py do?"),
        Message("assistant", "Reading.", tool_calls=[ToolCall("toolu_01", "Read", {"path": "main.py"})]),
        Message("tool", "print('hi')", tool_call_id="toolu_01"),
        Message("user", "Answer briefly."),
    ]


def test_stream_events_in_anthropic_order() -> None:
    up = scripted(
        {
            "text": "Checking now.",
            "tool_calls": [{"id": "toolu_9", "name": "Read", "arguments": {"path": "a.py"}}],
            "usage": {"input_tokens": 100, "output_tokens": 12, "cache_read_tokens": 40},
        }
    )
    with Gateway(up) as gw:
        response = post(gw, claude_code_body([{"role": "user", "content": "go"}], stream=True))
        (record,) = gw.calls()
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse(response)
    assert [name for name, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0][1]["message"]
    assert (start["role"], start["content"], start["model"]) == ("assistant", [], "scripted/inline")
    assert events[2][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    assert [e[1]["delta"] for e in events[3:5]] == [
        {"type": "text_delta", "text": "Checking "},
        {"type": "text_delta", "text": "now."},
    ]
    assert events[6][1]["content_block"] == {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {}}
    assert events[7][1] == {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"path": "a.py"}'},
    }
    assert events[9][1]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert events[9][1]["usage"] == {
        "input_tokens": 100,
        "output_tokens": 12,
        "cache_read_input_tokens": 40,
        "cache_creation_input_tokens": 0,
    }
    assert record.stream and (record.input_tokens, record.output_tokens, record.cache_read_tokens) == (
        100,
        12,
        40,
    )


def test_official_client_streams_and_parses_the_answer() -> None:
    up = scripted(
        {"text": "Sure.", "tool_calls": [{"id": "toolu_x", "name": "Read", "arguments": {"path": "b.py"}}]},
        {"text": "Plain answer", "usage": {"input_tokens": 8, "output_tokens": 2}},
    )
    with Gateway(up) as gw:
        c = anthropic.Anthropic(base_url=gw.anthropic_base_url, api_key="placeholder", max_retries=0)
        with c.messages.stream(
            model="claude-haiku-4-5",
            max_tokens=64,
            tools=[TOOLS[0]],
            messages=[{"role": "user", "content": "read b"}],
        ) as stream:
            final = stream.get_final_message()
        plain = c.messages.create(
            model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": "x"}]
        )
        usage = gw.usage()
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[0].text == "Sure."
    assert (final.content[1].id, final.content[1].name, final.content[1].input) == (
        "toolu_x",
        "Read",
        {"path": "b.py"},
    )
    assert final.stop_reason == "tool_use"
    assert plain.content[0].text == "Plain answer" and plain.usage.input_tokens == 8
    assert usage.ok_calls == 2 and usage.usage.output_tokens == 2 + final.usage.output_tokens


def test_count_tokens_without_a_tokenizer_is_an_estimate() -> None:
    with Gateway(scripted({"text": "unused"})) as gw:
        body = claude_code_body([{"role": "user", "content": "count these words please"}])
        response = post(gw, body, "/v1/messages/count_tokens?beta=true")
        assert gw.calls() == []  # not a model call
    assert response.headers["x-assay-token-count"] == "estimate"
    system = "You are Claude Code, Anthropic's official CLI for Claude.\n\nWork in the current directory."
    text = "\n".join(
        [
            system,
            "count these words please",
            'Read Read a file {"type": "object", "properties": {"path": {}}}',
        ]
    )
    assert response.json() == {"input_tokens": math.ceil(len(text) / 4)}


def test_outage_is_503_in_anthropic_shape_and_the_client_stops() -> None:
    up = f"openai-compat/m@http://127.0.0.1:{closed_port()}/v1"
    with Gateway(up, model_options={"max_retries": 0}) as gw:
        c = anthropic.Anthropic(
            base_url=gw.anthropic_base_url, api_key="placeholder"
        )  # retries 2x by default
        with pytest.raises(anthropic.APIStatusError) as caught:
            c.messages.create(model="claude", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
        streamed = post(gw, claude_code_body([{"role": "user", "content": "hi"}], stream=True))
        records = gw.calls()
    err = caught.value
    assert err.status_code == 503 and err.response.headers["x-assay-infra-error"] == "1"
    assert err.body["type"] == "error" and err.body["error"]["type"] == "api_error"
    assert "cannot connect" in err.body["error"]["message"]
    assert streamed.status_code == 503 and streamed.json()["error"]["type"] == "api_error"
    assert [(r.front, r.status) for r in records] == [("anthropic", "infra_error")] * 2


def test_unsupported_blocks_are_refused_by_name() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    with Gateway(scripted({"text": "never"})) as gw:
        response = post(gw, claude_code_body([{"role": "user", "content": [image]}]))
        models = httpx.get(f"{gw.anthropic_base_url}/v1/models", headers=HEADERS).json()
    assert response.status_code == 400
    err = response.json()
    assert err["type"] == "error" and err["error"]["type"] == "invalid_request_error"
    assert "messages[0].content[0]" in err["error"]["message"] and "'image'" in err["error"]["message"]
    assert models["data"][0]["type"] == "model" and models["data"][0]["id"] == "scripted/inline"


@pytest.mark.parametrize("rewrite", [True, False])
def test_a_system_turn_inside_messages_is_taken_and_rewritten_for_backends_that_drop_it(
    rewrite: bool,
) -> None:
    """Claude Code sends {"role": "system"} turns inside ``messages`` for a model name it does not know
    (``local/smollm2``); they were refused with a 400."""
    up = scripted({"text": "ok", "usage": {"input_tokens": 9, "output_tokens": 1}})
    turns = [
        {"role": "user", "content": "Read main.py"},
        {"role": "system", "content": [{"type": "text", "text": "Keep answers short."}]},
    ]
    with Gateway(up, rewrite_system=rewrite) as gw:
        response = post(gw, claude_code_body(turns))
    assert response.status_code == 200, response.text
    (seen,) = up.calls
    late = seen["messages"][-1]
    assert late == Message("user" if rewrite else "system", "Keep answers short.")
