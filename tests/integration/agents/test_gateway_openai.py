"""The gateway's OpenAI front, driven by the official ``openai`` client against scripted upstreams: the exact
translation both ways (text, tool calls, tool results), streaming, token counts, the call log, the
system-role rewrite, and an outage answered as infra (503 + header) and never retried by the client."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest
from gateway_fakes import WEATHER_SCHEMA, BreaksMidStream, closed_port, scripted

from assay.agents import Route
from assay.agents.gateway import Gateway, default_rewrite_system, fetch_usage, read_call_log
from assay.models import Message, Tool, ToolCall

TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "Weather", "parameters": WEATHER_SCHEMA},
    }
]


def client(gw: Gateway | Route) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.openai_base_url, api_key="placeholder")


def test_plain_answer_is_translated_exactly_and_counted() -> None:
    up = scripted({"text": "Hello, Ada.", "usage": {"input_tokens": 12, "output_tokens": 4}, "delay_s": 0.02})
    with Gateway(up) as gw:
        reply = client(gw).chat.completions.create(
            model="gpt-asked",
            messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Greet Ada"}],
            max_tokens=20,
            temperature=0,
        )
        (record,) = gw.calls()
    assert reply.choices[0].message.content == "Hello, Ada."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == "scripted/inline"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (12, 4, 16)
    # what the upstream was asked: the same messages, options translated
    (seen,) = up.calls
    assert seen["messages"] == [Message("system", "Be brief."), Message("user", "Greet Ada")]
    assert seen["options"] == {"max_tokens": 20, "temperature": 0}
    assert record.front == "openai" and record.model_asked == "gpt-asked" and record.status == "ok"
    assert (record.input_tokens, record.output_tokens, record.stream) == (12, 4, False)
    assert record.model_ran == "scripted/inline" and record.upstream == "scripted/inline"
    assert record.upstream_ms >= 20.0
    assert record.gateway_ms == pytest.approx(record.latency_ms - record.upstream_ms, abs=0.01)


def test_tool_calls_round_trip_both_ways() -> None:
    up = scripted(
        {"tool_calls": [{"id": "call_w1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "It is sunny in Paris."},
    )
    with Gateway(up) as gw:
        c = client(gw)
        ask = [{"role": "user", "content": "Weather in Paris?"}]
        first = c.chat.completions.create(model="m", messages=ask, tools=TOOLS, tool_choice="auto")
        msg = first.choices[0].message
        assert first.choices[0].finish_reason == "tool_calls" and msg.content is None
        (call,) = msg.tool_calls
        assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
            "call_w1",
            "get_weather",
            {"city": "Paris"},
        )
        history = [
            *ask,
            msg.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 21C"},
        ]
        second = c.chat.completions.create(model="m", messages=history, tools=TOOLS)
    assert second.choices[0].message.content == "It is sunny in Paris."
    assert up.calls[0]["tools"] == [Tool("get_weather", "Weather", WEATHER_SCHEMA)]
    assert up.calls[0]["options"] == {"tool_choice": "auto"}
    assert up.calls[1]["messages"] == [
        Message("user", "Weather in Paris?"),
        Message("assistant", "", tool_calls=[ToolCall("call_w1", "get_weather", {"city": "Paris"})]),
        Message("tool", "sunny, 21C", tool_call_id="call_w1"),
    ]
    assert [r.tool_calls for r in gw.calls()] == [1, 0]


def test_stream_pieces_tool_call_and_usage_chunk() -> None:
    up = scripted(
        {
            "text": "Let me check the weather.",
            "tool_calls": [{"id": "call_s", "name": "get_weather", "arguments": {"city": "Oslo"}}],
            "usage": {"input_tokens": 30, "output_tokens": 9},
        }
    )
    with Gateway(up) as gw:
        chunks = list(
            client(gw).chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "Oslo?"}],
                tools=TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        (record,) = gw.calls()
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["Let ", "me ", "check ", "the ", "weather."]
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert [(tc.index, tc.id, tc.function.name, tc.function.arguments) for tc in calls] == [
        (0, "call_s", "get_weather", '{"city": "Oslo"}')
    ]
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "tool_calls"
    ]
    assert chunks[-1].choices == [] and (
        chunks[-1].usage.prompt_tokens,
        chunks[-1].usage.completion_tokens,
    ) == (30, 9)
    assert record.stream and record.status == "ok" and (record.input_tokens, record.output_tokens) == (30, 9)
    assert record.ttft_ms is not None and 0 < record.ttft_ms <= record.latency_ms


def test_system_entries_inside_messages_are_rewritten_as_user_entries_when_on() -> None:
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "system", "content": "Now answer in French."},
        {"role": "user", "content": "bye"},
    ]
    on, off = scripted({"text": "salut"}), scripted({"text": "bye"})
    for up, rewrite in ((on, True), (off, False)):
        with Gateway(up, rewrite_system=rewrite) as gw:
            client(gw).chat.completions.create(model="m", messages=messages)
    assert on.calls[0]["messages"] == [
        Message("system", "You are terse."),
        Message("user", "hi"),
        Message("assistant", "hello"),
        Message("user", "Now answer in French."),
        Message("user", "bye"),
    ]
    assert off.calls[0]["messages"][3] == Message("system", "Now answer in French.")
    assert default_rewrite_system(on) is False


def test_outage_upstream_is_an_infra_answer_the_client_does_not_retry() -> None:
    up = f"openai-compat/m@http://127.0.0.1:{closed_port()}/v1"
    with Gateway(up, model_options={"max_retries": 0}) as gw:
        with pytest.raises(openai.APIStatusError) as caught:
            # the SDK retries a 503 twice by default: x-should-retry: false stops it
            client(gw).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        streamed = httpx.post(
            f"{gw.openai_base_url}/chat/completions",
            json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        )
        records = gw.calls()
        usage = gw.usage()
    err = caught.value
    assert err.status_code == 503
    assert err.response.headers["x-assay-infra-error"] == "1"
    assert err.response.headers["x-assay-infra-kind"] == "connect"
    assert err.body["type"] == "assay_infra_error" and "cannot connect" in err.body["message"]
    assert streamed.status_code == 503 and streamed.headers["x-assay-infra-error"] == "1"
    assert [(r.status, r.error_kind, r.http_status) for r in records] == [("infra_error", "connect", 503)] * 2
    assert usage.infra_errors == 2 and usage.ok_calls == 0 and usage.usage.calls == 0
    assert usage.last_infra_error is not None and "cannot connect" in usage.last_infra_error


def test_an_outage_after_the_stream_began_ends_it_with_an_error_event() -> None:
    with Gateway(BreaksMidStream()) as gw:
        with httpx.stream(
            "POST",
            f"{gw.openai_base_url}/chat/completions",
            json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        ) as response:
            events = [line.removeprefix("data: ") for line in response.iter_lines() if line]
        (record,) = gw.calls()
    pieces = [json.loads(e)["choices"][0]["delta"].get("content") for e in events[:3]]
    assert pieces == ["", "Hello ", "wor"]
    assert json.loads(events[3])["error"]["type"] == "assay_infra_error" and events[4] == "[DONE]"
    assert record.status == "infra_error" and record.error_kind == "connect" and record.stream


def test_bad_requests_are_400_in_openai_shape_and_logged() -> None:
    with Gateway(scripted({"text": "never"})) as gw:
        url = f"{gw.openai_base_url}/chat/completions"
        not_json = httpx.post(url, content=b"{nope")
        no_messages = httpx.post(url, json={"model": "m", "messages": []})
        image = httpx.post(
            url,
            json={
                "model": "m",
                "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
            },
        )
        wrong_type = httpx.post(
            url, json={"model": "m", "max_tokens": "many", "messages": [{"role": "user"}]}
        )
        missing = httpx.post(f"{gw.url}/v1/embeddings", json={})
        records = gw.calls()
    assert [r.status_code for r in (not_json, no_messages, image, wrong_type, missing)] == [
        400,
        400,
        400,
        400,
        404,
    ]
    assert "not JSON" in not_json.json()["error"]["message"]
    assert "'messages' must be a non-empty list" in no_messages.json()["error"]["message"]
    assert "messages[0].content[0]" in image.json()["error"]["message"]
    assert "malformed request: ValueError" in wrong_type.json()["error"]["message"]
    assert "POST /v1/embeddings" in missing.json()["error"]["message"]
    assert [r.status for r in records] == ["bad_request"] * 4 + ["not_found"]


def test_runs_are_counted_apart_and_the_log_file_is_readable(tmp_path) -> None:
    log = tmp_path / "calls.jsonl"
    up = scripted({"text": "one two"}, {"text": "three"}, {"text": "four five six"})
    with Gateway(up, log_path=log) as gw:
        a, b = gw.route("asked-a", run="case-a"), gw.route(run="case-b")
        assert a.openai_base_url == f"{gw.url}/run/case-a/v1" and a.upstream == "scripted/inline"
        assert b.model == "scripted/inline"
        client(a).chat.completions.create(model=a.model, messages=[{"role": "user", "content": "x"}])
        client(b).chat.completions.create(model=b.model, messages=[{"role": "user", "content": "y"}])
        client(a).chat.completions.create(model=a.model, messages=[{"role": "user", "content": "z"}])
        import asyncio

        over_http = asyncio.run(fetch_usage(a))
        listed = client(gw).models.list().data
    assert over_http == gw.usage(run="case-a")
    assert (over_http.usage.output_tokens, over_http.ok_calls, over_http.model_ran) == (
        5,
        2,
        "scripted/inline",
    )
    assert gw.usage(run="case-b").usage.output_tokens == 1
    assert gw.usage().usage.calls == 3
    assert (
        read_call_log(log) == gw.calls()
        and [r.run for r in read_call_log(log, run="case-a")] == ["case-a"] * 2
    )
    assert [m.id for m in listed] == ["scripted/inline"]


def test_the_loopback_hop_costs_no_nagle_delay() -> None:
    """Each answer leaves in one go: with Nagle on the gateway's sockets every call waited ~40 ms."""
    with Gateway(scripted({"text": "x"})) as gw, httpx.Client() as c:
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            assert c.get(f"{gw.openai_base_url}/models").status_code == 200
            times.append(time.perf_counter() - t0)
    assert sorted(times)[3] < 0.02


def test_base_url_probe_answers_and_is_not_a_call() -> None:
    with Gateway(scripted({"text": "x"})) as gw:
        route = gw.route(run="probe")
        probes = [httpx.head(gw.url), httpx.head(route.anthropic_base_url), httpx.get(gw.url)]
        assert gw.calls() == []
    assert [p.status_code for p in probes] == [200, 200, 200]
    assert probes[2].json() == {"gateway": "assay", "upstream": "scripted/inline"}


def test_a_call_in_flight_when_the_gateway_stops_is_logged_as_cut_short() -> None:
    import threading

    gw = Gateway(scripted({"text": "late", "delay_s": 5.0})).start()
    url = f"{gw.openai_base_url}/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    outcome: list[object] = []

    def ask() -> None:
        try:
            outcome.append(httpx.post(url, json=body, timeout=10).status_code)
        except httpx.HTTPError as exc:
            outcome.append(type(exc).__name__)

    worker = threading.Thread(target=ask)
    worker.start()
    deadline = time.monotonic() + 5
    while not gw.upstream.calls and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.01)
    t0 = time.monotonic()
    gw.stop(timeout_s=0.2)
    worker.join(10)
    assert time.monotonic() - t0 < 3.0
    (record,) = gw.calls()
    assert (record.status, record.http_status) == ("error", 499) and "cancelled" in (record.error or "")
    assert outcome and outcome[0] != 200  # the agent got no answer: never a made-up one
