"""The gateway in front of a cloud provider (a loopback stand-in for the Anthropic API, the only thing mocked):
an OpenAI client's tool loop becomes Messages-API turns, the gateway's own key goes upstream and the agent's
placeholder never does, the reported tokens are priced, and a rejected key is an infra answer."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from gateway_fakes import WEATHER_SCHEMA, CloudStandIn

from assay.agents.gateway import Gateway

SECRET = "gateway-only-key-0123456789"  # not secret-shaped: redacted because it is the key
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "Weather", "parameters": WEATHER_SCHEMA},
    }
]


def message(content: list[dict], stop: str, usage: tuple[int, int]) -> dict:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def test_openai_client_on_an_anthropic_upstream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ASSAY_RATE_CARD", raising=False)
    tool_use = {"type": "tool_use", "id": "toolu_7", "name": "get_weather", "input": {"city": "Rome"}}
    with CloudStandIn(
        (200, message([tool_use], "tool_use", (120, 15))),
        (200, message([{"type": "text", "text": "Rome: sunny."}], "end_turn", (160, 5))),
    ) as cloud:
        up = {"base_url": cloud.url, "api_key": SECRET, "max_retries": 0}
        with Gateway("anthropic/claude-sonnet-4-5", model_options=up) as gw:
            c = openai.OpenAI(base_url=gw.openai_base_url, api_key="placeholder", max_retries=0)
            ask = [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": "Weather in Rome?"},
            ]
            first = c.chat.completions.create(model="gpt-x", messages=ask, tools=TOOLS, max_tokens=50)
            call = first.choices[0].message.tool_calls[0]
            history = [
                *ask,
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
            ]
            second = c.chat.completions.create(model="gpt-x", messages=history, tools=TOOLS, max_tokens=50)
            usage = gw.usage()
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "toolu_7",
        "get_weather",
        {"city": "Rome"},
    )
    assert second.choices[0].message.content == "Rome: sunny."
    (path, headers, body), (_, _, body2) = cloud.requests
    assert path == "/v1/messages" and headers["x-api-key"] == SECRET
    assert all("placeholder" not in str(h) for _, h, _ in cloud.requests)
    assert body["system"] == "Be terse." and body["max_tokens"] == 50
    assert body["tools"] == [
        {"name": "get_weather", "description": "Weather", "input_schema": WEATHER_SCHEMA}
    ]
    assert body2["messages"] == [
        {"role": "user", "content": "Weather in Rome?"},
        {"role": "assistant", "content": [tool_use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_7", "content": "sunny"}]},
    ]
    assert (usage.usage.input_tokens, usage.usage.output_tokens, usage.ok_calls) == (280, 20, 2)
    assert usage.usage.cost_usd is not None and usage.usage.cost_usd > 0
    assert usage.model_ran == "anthropic/claude-sonnet-4-5-20250929"


def test_a_rejected_key_is_an_infra_answer() -> None:
    denied = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    with CloudStandIn((401, denied)) as cloud:
        up = {"base_url": cloud.url, "api_key": SECRET, "max_retries": 0}
        with Gateway("anthropic/claude-sonnet-4-5", model_options=up) as gw:
            c = openai.OpenAI(base_url=gw.openai_base_url, api_key="placeholder")
            with pytest.raises(openai.APIStatusError) as caught:
                c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            (record,) = gw.calls()
    assert caught.value.status_code == 503 and caught.value.response.headers["x-assay-infra-kind"] == "auth"
    assert "credentials rejected (HTTP 401)" in caught.value.body["message"]
    assert SECRET not in json.dumps(caught.value.body)
    assert (record.status, record.error_kind) == ("infra_error", "auth") and len(cloud.requests) == 1


def test_an_upstream_quoting_the_key_never_passes_it_on(tmp_path) -> None:
    echoed = {"type": "error", "error": {"type": "permission_error", "message": f"key {SECRET} is disabled"}}
    log = tmp_path / "calls.jsonl"
    with CloudStandIn((403, echoed)) as cloud:
        up = {"base_url": cloud.url, "api_key": SECRET, "max_retries": 0}
        with Gateway("anthropic/claude-sonnet-4-5", model_options=up, log_path=log) as gw:
            reply = httpx.post(
                f"{gw.anthropic_base_url}/v1/messages",
                json={"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
            )
    assert reply.status_code == 503 and "key [REDACTED] is disabled" in reply.text
    assert SECRET not in reply.text and SECRET not in log.read_text()
