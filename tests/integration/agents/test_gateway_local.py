"""The gateway in front of the embedded SmolLM2 (llama.cpp): plumbing on both fronts, streamed and not. The
text comes back, tokens are counted from the upstream's own usage, the model that ran is read back, the
system-role rewrite is on by default, and count_tokens uses the model's tokenizer."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest
from gateway_fakes import HEADERS, sse

from assay.agents.gateway import Gateway

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="module")
def gw() -> Iterator[Gateway]:
    with Gateway(
        "local/smollm2", model_options={"ctx_size": 1024, "defaults": {"temperature": 0, "seed": 7}}
    ) as g:
        yield g


def test_openai_front_plain_and_streamed(gw: Gateway) -> None:
    assert gw.rewrite_system  # on by default for the embedded llama.cpp
    c = openai.OpenAI(base_url=gw.openai_base_url, api_key="placeholder", max_retries=0)
    ask = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Say hello to Ada."},
    ]
    mark = gw.mark()
    plain = c.chat.completions.create(model="anything", messages=ask, max_tokens=16)
    chunks = list(
        c.chat.completions.create(
            model="anything", messages=ask, max_tokens=16, stream=True, stream_options={"include_usage": True}
        )
    )
    plain_rec, stream_rec = gw.calls(since=mark)
    assert plain.choices[0].message.content.strip()
    assert plain.usage.prompt_tokens > 5 and 0 < plain.usage.completion_tokens <= 16
    streamed = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert streamed == plain.choices[0].message.content  # greedy: the same answer either way
    assert chunks[-1].usage.completion_tokens == plain.usage.completion_tokens
    for record in (plain_rec, stream_rec):
        assert record.status == "ok" and record.input_tokens > 5 and record.output_tokens > 0
        assert record.model_ran is not None and record.model_ran.startswith("local/")
        assert record.upstream == "local/smollm2" and record.upstream_ms > record.gateway_ms


def test_anthropic_front_plain_and_streamed(gw: Gateway) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16,
        "system": [{"type": "text", "text": "You are helpful."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Say hello to Ada."}]}],
    }
    mark = gw.mark()
    plain = httpx.post(f"{gw.anthropic_base_url}/v1/messages", json=body, headers=HEADERS, timeout=120).json()
    streamed = httpx.post(
        f"{gw.anthropic_base_url}/v1/messages", json={**body, "stream": True}, headers=HEADERS, timeout=120
    )
    events = sse(streamed)
    text = "".join(d["delta"]["text"] for name, d in events if name == "content_block_delta")
    assert plain["content"][0]["text"].strip() and text == plain["content"][0]["text"]
    assert plain["usage"]["input_tokens"] > 5 and plain["usage"]["output_tokens"] > 0
    (delta,) = [d for name, d in events if name == "message_delta"]
    assert delta["usage"]["output_tokens"] == plain["usage"]["output_tokens"]
    usage = gw.usage(since=mark)
    assert usage.ok_calls == 2 and usage.usage.output_tokens == 2 * plain["usage"]["output_tokens"]
    assert usage.model_ran is not None and usage.model_ran.startswith("local/")
    count = httpx.post(f"{gw.anthropic_base_url}/v1/messages/count_tokens", json=body, headers=HEADERS)
    assert count.headers["x-assay-token-count"] == "tokenizer"
    assert 0 < count.json()["input_tokens"] < plain["usage"]["input_tokens"]  # the template adds a few
