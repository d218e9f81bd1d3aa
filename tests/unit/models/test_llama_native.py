"""assay's llama.cpp server on llama.cpp's native endpoints, without the model: the choice read from the two
openings' probabilities, the grammars a call is held to, the ChatML fallback, and the usage its front passes on
(the model's part is tested in tests/integration/models/test_models_llama_server.py)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from assay.models._llama_serve import whole_prompt_usage
from assay.models._llama_tools import (
    CALL_COST,
    Native,
    NativeError,
    closed_schema,
    render_prompt,
    tool_chat,
    wants_tools,
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CALL_ID, ANSWER_ID = 11, 22


class FakeNative(Native):
    """llama.cpp's endpoints as assay's tool protocol uses them, answering from a script."""

    def __init__(self, margin: float, template_ok: bool = True) -> None:
        super().__init__("http://127.0.0.1:9", "smollm2")
        self.margin, self.template_ok = margin, template_ok
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.sent.append((path, body))
        if path == "/apply-template":
            if not self.template_ok:
                raise NativeError(500, b'{"error": "roles must alternate"}')
            return {
                "prompt": "|".join(f"{m['role']}:{m['content']}" for m in body["messages"]) + "|assistant:"
            }
        if path == "/tokenize":
            if body.get("parse_special") is False:
                return {"tokens": [CALL_ID if body["content"] == "functions" else ANSWER_ID]}
            return {"tokens": list(range(len(body["content"].split())))}
        if path == "/completion" and "logit_bias" in body:
            p_call = 1 / (1 + math.exp(-self.margin))
            probs = [{"id": CALL_ID, "prob": p_call}, {"id": ANSWER_ID, "prob": 1 - p_call}]
            return {"completion_probabilities": [{"top_probs": probs}]}
        if path == "/completion" and "grammar" in body:
            return {"content": "get_weather", "tokens_predicted": 3}
        if path == "/completion":
            return {"content": ' {"city": "Paris"} ', "tokens_predicted": 7}
        if path == "/v1/completions":
            choice = {"text": "It is sunny.", "finish_reason": "stop"}
            return {"choices": [choice], "usage": {"prompt_tokens": 30, "completion_tokens": 4}}
        raise AssertionError(path)


ASK = [{"role": "user", "content": "Weather in Paris?"}]


def test_the_model_calls_when_the_calls_opening_is_likelier() -> None:
    native = FakeNative(margin=2.0)
    out = tool_chat(native, ASK, tools=[WEATHER])
    (call,) = out["choices"][0]["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert out["choices"][0]["finish_reason"] == "tool_calls" and out["usage"]["completion_tokens"] == 10
    choose = next(b for p, b in native.sent if "logit_bias" in b)
    # both openings lifted alike, then only they are left: their probabilities' log-ratio is the margin
    assert choose["logit_bias"] == [[CALL_ID, 100.0], [ANSWER_ID, 100.0]] and choose["top_k"] == 2
    assert choose["post_sampling_probs"] is True and choose["samplers"] == ["top_k"]
    name = next(b for p, b in native.sent if "grammar" in b)
    assert name["grammar"] == 'root ::= "get_weather"' and name["prompt"].endswith("|assistant:functions.")
    args = next(b for p, b in native.sent if "json_schema" in b)
    assert args["json_schema"]["additionalProperties"] is False
    assert args["prompt"].endswith("functions.get_weather:\n")


def test_the_model_answers_when_the_margin_is_below_the_cost_of_the_calls_made() -> None:
    result = {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    call = {"id": "c1", "function": {"name": "get_weather", "arguments": "{}"}}
    after_one = [*ASK, {"role": "assistant", "content": None, "tool_calls": [call]}, result]
    native = FakeNative(margin=CALL_COST - 0.5)  # would call on a fresh question, not after one result
    assert (
        "tool_calls"
        in tool_chat(FakeNative(margin=CALL_COST - 0.5), ASK, tools=[WEATHER])["choices"][0]["message"]
    )
    out = tool_chat(native, after_one, tools=[WEATHER])
    assert out["choices"][0]["message"] == {"role": "assistant", "content": "It is sunny."}
    assert out["usage"] == {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}
    answer = next(b for p, b in native.sent if p == "/v1/completions")
    assert answer["prompt"].endswith("|assistant:message:\n") and answer["stop"] == []


def test_a_streamed_call_has_openais_chunks_and_ends_with_usage() -> None:
    chunks = list(tool_chat(FakeNative(margin=5.0), ASK, tools=[WEATHER], stream=True))
    assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert chunks[1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 10


def test_a_template_that_refuses_the_turns_falls_back_to_chatml() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "tool", "content": "Result of f():\nok"}]
    assert render_prompt(FakeNative(0.0), messages) == ("user:hi|tool:Result of f():\nok|assistant:", [])
    prompt, stop = render_prompt(FakeNative(0.0, template_ok=False), messages)
    assert (
        prompt
        == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>tool\nResult of f():\nok<|im_end|>\n<|im_start|>assistant\n"
    )
    assert stop == ["<|im_end|>"]


def test_a_calls_arguments_take_only_the_named_properties_unless_the_schema_says() -> None:
    assert closed_schema(WEATHER["function"]["parameters"])["additionalProperties"] is False
    assert closed_schema({"type": "object", "additionalProperties": True})["additionalProperties"] is True
    assert closed_schema(None) == {"type": "object", "additionalProperties": False}
    assert "additionalProperties" not in WEATHER["function"]["parameters"]  # the request's schema untouched


def test_which_chat_requests_the_tool_protocol_serves() -> None:
    assert wants_tools({"messages": ASK, "tools": [WEATHER]})
    assert wants_tools({"messages": [*ASK, {"role": "tool", "content": "x", "tool_call_id": "1"}]})
    assert not wants_tools({"messages": ASK})
    assert not wants_tools({"messages": ASK, "tools": [WEATHER], "response_format": {"type": "json_object"}})


@pytest.mark.parametrize("framing", ["json", "sse"])
def test_usage_counts_the_whole_prompt_not_what_the_cache_held(framing: str) -> None:
    event = {"choices": [], "usage": {"prompt_tokens": 25, "completion_tokens": 8, "total_tokens": 33,
                                      "prompt_tokens_details": {"cached_tokens": 24}}}  # fmt: skip
    raw = json.dumps(event).encode()
    data = raw if framing == "json" else b"data: " + raw + b"\n"
    out = whole_prompt_usage(data)
    body = json.loads(out.removeprefix(b"data: "))
    assert body["usage"] == {"prompt_tokens": 25, "completion_tokens": 8, "total_tokens": 33}
    if framing == "sse":
        assert out.startswith(b"data: {") and out.endswith(b"}\n")
    honest = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n'
    assert whole_prompt_usage(honest) is honest and whole_prompt_usage(b"data: [DONE]\n") == b"data: [DONE]\n"


def test_a_json_answer_is_held_compact_to_the_requests_schema() -> None:
    from assay.models._llama_tools import held_chat, response_schema, wants_held_json

    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    native = FakeNative(0.0)
    out = held_chat(native, ASK, response_format={"type": "json_object", "schema": schema}, max_tokens=9)
    assert out["choices"][0]["message"]["role"] == "assistant" and out["object"] == "chat.completion"
    (sent,) = [b for p, b in native.sent if p == "/v1/completions"]
    # no free whitespace between JSON tokens (a small model fills it with newlines until the cap)
    assert sent["json_schema"] == {**schema, "x-guidance": {"whitespace_flexible": False}}
    assert sent["max_tokens"] == 9 and sent["prompt"] == "user:Weather in Paris?|assistant:"
    own = {"type": "object", "x-guidance": {"whitespace_flexible": True}}
    held_chat(native, ASK, response_format={"type": "json_schema", "json_schema": {"schema": own}})
    assert native.sent[-1][1]["json_schema"] == own  # a schema that says how is held as it says
    assert response_schema({"type": "json_object"}) == {"type": "object"}
    assert wants_held_json({"response_format": {"type": "json_object"}})
    assert not wants_held_json({"response_format": {"type": "text"}}) and not wants_held_json({})
