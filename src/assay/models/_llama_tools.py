"""Tool calls from a llama.cpp model with no tool-calling format of its own (the embedded SmolLM2), server side.

llama.cpp's server answers a request with ``tools`` in its own generic format, which a 135M model rarely keeps
to. In assay's server (:mod:`assay.models._llama_serve`) every chat request that offers tools (or carries tool
turns) is served by :func:`tool_chat` instead, on llama.cpp's native endpoints (:class:`Native`):

- the conversation is written in a text protocol the model is told in its system message (a tool call is
  ``functions.<name>:`` and the arguments as JSON; an answer is ``message:`` and the text), rendered with the
  model's own chat template (``/apply-template``; ChatML where it has none or refuses a turn): earlier calls as
  that text, tool results as ``tool`` turns;
- **the model chooses**: the log-probabilities of the two openings (``functions`` / ``message``) at the start
  of its reply decide (``/completion`` with ``n_probs``), the call's side raised by :data:`TOOL_BIAS` (see its
  note); ``tool_choice`` ``required`` or a tool's name skips the choice, ``none`` answers;
- a call's name is held by a grammar to the offered names (GBNF) and its arguments to the tool's JSON schema
  (``json_schema``), so the OpenAI ``tool_calls`` it returns always parse; an answer is free text
  (``/v1/completions``). Streamed or not, the response has OpenAI's chat shapes, so the gateway passes it on as
  OpenAI or Anthropic tool use.
"""

from __future__ import annotations

import http.client
import json
import math
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "TOOL_BIAS",
    "Native",
    "NativeError",
    "held_chat",
    "render_prompt",
    "tool_chat",
    "tools_text",
    "wants_held_json",
    "wants_tools",
]

#: how a reply that calls a tool opens, and how an answer does
CALL_MARK, ANSWER_MARK = "functions", "message"
#: log-probability added to the call's opening before the two are compared, and what each call already made
#: since the user's last message takes off it. SmolLM2-135M, shown its tools in this protocol, favours the
#: call's opening on most fresh questions and only a little less once a result is in: it copies what it saw more
#: than it weighs what it has. Measured on llama.cpp b11549 (xllamacpp 2026.10.11549), 8 documents and shell
#: scenarios, 3 steps (the server logs each choice): first turns +1.2 to +5.9 in 8 of 11 choices,
#: -3.1 to -4.6 in the other 3; after one result +0.6 to +3.7 (8 choices), after two +2.9 (on b11312 under
#: llama-cpp-python: +0.9 to +7.1 and +0.1 to +3.5). Unbiased, with each call made costing 3, it calls on a
#: fresh question and answers once results are in (a second call where it is surer), instead of calling to the
#: step cap.
TOOL_BIAS = 0.0
CALL_COST = 3.0
#: what a call's arguments may run to (a grammar-held JSON object; the request's max_tokens caps it lower)
ARGS_MAX_TOKENS = 256
#: added to both openings' logits when they are read: it lifts the two above every other token, so the
#: sampler's two candidates are exactly them, and leaves their difference (the margin) as the model gave it
_LIFT = 100.0
_CHATML_STOP = "<|im_end|>"
_GENERATION = ("temperature", "top_p", "top_k", "min_p", "seed", "repeat_penalty", "presence_penalty",
               "frequency_penalty")  # fmt: skip


class NativeError(Exception):
    """llama.cpp's server refused a request: its HTTP status and JSON body, passed on to the client."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}: {body[:200]!r}")
        self.status = status
        self.body = body


class Native:
    """llama.cpp's own server (the xllamacpp ``Server`` of this process), reached on its loopback listener.

    One connection per request: the native listener closes idle keep-alive connections on its own schedule.
    """

    def __init__(self, base_url: str, alias: str) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", int(parts.port or 80)
        self.alias = alias

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=None)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        conn = self.connect()
        try:
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        if resp.status != 200:
            raise NativeError(resp.status, data)
        out: dict[str, Any] = json.loads(data)
        return out

    def stream(self, path: str, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The ``data:`` events of a streamed response, parsed (``[DONE]`` ends it)."""
        conn = self.connect()
        try:
            conn.request(
                "POST", path, json.dumps({**body, "stream": True}), {"Content-Type": "application/json"}
            )
            resp = conn.getresponse()
            if resp.status != 200:
                raise NativeError(resp.status, resp.read())
            while line := resp.readline():
                text = line.strip()
                if not text.startswith(b"data:"):
                    continue
                payload = text[5:].strip()
                if payload == b"[DONE]":
                    return
                event: dict[str, Any] = json.loads(payload)
                if "error" in event:
                    raise NativeError(500, payload)
                yield event
        finally:
            conn.close()

    def template(self, messages: list[dict[str, str]]) -> str:
        return str(self.post("/apply-template", {"messages": messages})["prompt"])

    def count(self, text: str) -> int:
        """Tokens of ``text`` as the model reads it (special tokens parsed, no BOS added)."""
        return len(self.post("/tokenize", {"content": text, "add_special": False})["tokens"])

    def first_token(self, text: str) -> int:
        tokens = self.post("/tokenize", {"content": text, "add_special": False, "parse_special": False})[
            "tokens"
        ]
        return int(tokens[0])


def tools_text(tools: Sequence[dict[str, Any]]) -> str:
    """The tools and the reply protocol, as the system message tells them."""
    lines = ["## Tools", ""]
    for tool in tools:
        fn = tool.get("function") or {}
        schema = fn.get("parameters") or {}
        required = set(schema.get("required") or [])
        # described in words: a JSON sketch ({"path": "string"}) is copied as is by a small model
        args = "; ".join(
            f"{k} ({(v or {}).get('type', 'any')}{'' if k in required else ', optional'})"
            + (f": {(v or {})['description']}" if (v or {}).get("description") else "")
            for k, v in (schema.get("properties") or {}).items()
        )
        told = f"functions.{fn.get('name')}: {(fn.get('description') or '').strip()}"
        lines.append(f"{told} Arguments: {args or 'none'}.")
    lines += [
        "",
        "Start each reply with either",
        "functions.<tool name>: and the arguments as JSON on the next line, to call a tool (its result comes "
        "back to you), or",
        "message: and your answer to the user.",
    ]
    return "\n".join(lines)


def _content(value: Any) -> str:
    if isinstance(value, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in value if isinstance(p, dict))
    return "" if value is None else str(value)


def plain_messages(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
) -> list[dict[str, str]]:
    """The conversation in the text protocol: role and content only, tools told in the system message.

    A call and its result are one ``tool`` turn (``Result of NAME(ARGS):`` and the text): a small model copies
    the opening it saw last, so a call written in the protocol (as an assistant turn, or ``functions.NAME`` in
    the result) makes it call again and again (SmolLM2-135M: +5 in log-probability for the call after such a
    result, against +0.2 after this one)."""
    out: list[dict[str, str]] = []
    calls: dict[str, str] = {}
    for m in messages:
        role, text = m.get("role", "user"), _content(m.get("content"))
        if role == "assistant" and m.get("tool_calls"):
            for c in m["tool_calls"]:
                fn = c.get("function") or {}
                calls[str(c.get("id"))] = f"{fn.get('name')}({fn.get('arguments') or ''})"
            if not text.strip():
                continue
            text = f"message:\n{text}"
        elif role == "assistant":
            text = f"message:\n{text}"
        elif role in ("tool", "function"):
            called = calls.pop(str(m.get("tool_call_id")), None) or f"{m.get('name') or 'a tool'}()"
            role, text = "tool", f"Result of {called}:\n{text}"
        out.append({"role": role, "content": text})
    if tools:
        told = tools_text(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content'].rstrip()}\n\n{told}"}
        else:
            out.insert(0, {"role": "system", "content": told})
    return out


def chatml(messages: list[dict[str, str]]) -> str:
    """``messages`` in ChatML, ending where the assistant's reply starts."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}{_CHATML_STOP}\n" for m in messages)
    return f"{turns}<|im_start|>assistant\n"


def render_prompt(native: Native, messages: list[dict[str, str]]) -> tuple[str, list[str]]:
    """The prompt of ``messages`` by the model's own chat template (ChatML where its template refuses the
    conversation), ending where the assistant's reply starts; and the stop strings beyond the model's own
    end-of-turn token (which llama.cpp stops on by itself)."""
    try:
        return native.template(messages), []
    except NativeError:  # a template that insists on user/assistant turns: ChatML then
        return chatml(messages), [_CHATML_STOP]


def calls_since_user(messages: Sequence[dict[str, Any]]) -> int:
    """Tool results in the conversation after the user's last message."""
    count = 0
    for m in reversed(messages):
        if m.get("role") == "user":
            break
        count += m.get("role") in ("tool", "function")
    return count


def opening_margin(native: Native, prompt: str) -> float:
    """log P(call's opening) - log P(answer's opening) at the start of the reply after ``prompt``.

    Read as the probabilities of the sampler's two candidates when only they are left (both lifted by the same
    :data:`_LIFT`, then top-k 2 at temperature 1): their log-ratio is the difference of the model's logits."""
    call, answer = native.first_token(CALL_MARK), native.first_token(ANSWER_MARK)
    out = native.post(
        "/completion",
        {
            "prompt": prompt,
            "n_predict": 1,
            "n_probs": 2,
            "post_sampling_probs": True,
            "samplers": ["top_k"],
            "top_k": 2,
            "temperature": 1.0,
            "seed": 0,
            "logit_bias": [[call, _LIFT], [answer, _LIFT]],
            "cache_prompt": True,
        },
    )
    probs = {int(p["id"]): float(p["prob"]) for p in out["completion_probabilities"][0]["top_probs"]}
    tiny = 1e-45  # a probability float32 rounds to 0: the margin is beyond any bias anyway
    return math.log(max(probs.get(call, 0.0), tiny)) - math.log(max(probs.get(answer, 0.0), tiny))


def choose_call(native: Native, prompt: str, calls_made: int = 0) -> tuple[bool, float]:
    """Whether the model opens its reply with a tool call (``calls_made``: calls since the user's last
    message); and the margin (call minus answer, in log-probability, before :data:`TOOL_BIAS` and
    :data:`CALL_COST`)."""
    margin = opening_margin(native, prompt)
    call = margin + TOOL_BIAS - CALL_COST * calls_made > 0
    # one line a choice in the server's log: what the note on TOOL_BIAS was measured from
    print(f"tool choice: margin {margin:+.2f} after {calls_made} call(s): {'call' if call else 'answer'}",
          file=sys.stderr, flush=True)  # fmt: skip
    return call, margin


def _options(params: dict[str, Any]) -> dict[str, Any]:
    return {k: params[k] for k in _GENERATION if params.get(k) is not None}


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as llama.cpp's grammar engine (LLGuidance) holds it: JSON without free whitespace between
    tokens, unless the schema says otherwise (``x-guidance``). With whitespace free, SmolLM2-135M writes
    newline after newline where a value should come until its token cap cuts the JSON."""
    return schema if "x-guidance" in schema else {**schema, "x-guidance": {"whitespace_flexible": False}}


def closed_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's parameters as the grammar holds them: an object that does not say ``additionalProperties``
    takes only the properties it names (a small model otherwise pads its call with invented keys until the
    token cap cuts the JSON)."""
    held = dict(schema or {"type": "object"})
    if held.get("type") == "object" and "additionalProperties" not in held:
        held["additionalProperties"] = False
    return held


def _call(
    native: Native, prompt: str, tools: Sequence[dict[str, Any]], name: str | None, params: dict[str, Any]
) -> tuple[str, str, int]:
    """The call the model writes after ``prompt``: (tool name, JSON arguments, tokens written)."""
    by_name = {(t.get("function") or {}).get("name"): t.get("function") or {} for t in tools}
    written = 0
    prompt += f"{CALL_MARK}."
    if name is None:
        names = " | ".join(json.dumps(n) for n in by_name)
        out = native.post(
            "/completion",
            {"prompt": prompt, "n_predict": 64, "temperature": 0.0, "grammar": f"root ::= {names}"},
        )
        name = str(out["content"])
        written += int(out["tokens_predicted"])
    cap = min(ARGS_MAX_TOKENS, int(params.get("max_tokens") or ARGS_MAX_TOKENS))
    out = native.post(
        "/completion",
        {
            "prompt": f"{prompt}{name}:\n",
            "n_predict": cap,
            "json_schema": compact(closed_schema(by_name.get(name, {}).get("parameters"))),
            **_options(params),
        },
    )
    written += int(out["tokens_predicted"])
    return str(name), str(out["content"]).strip(), written


def _head(model: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": model}


def _chunk(head: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**head, "object": "chat.completion.chunk", "choices": [choice]}


def _usage_chunk(head: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    return {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}


def _call_response(
    head: dict[str, Any], name: str, arguments: str, usage: dict[str, int], stream: bool
) -> Any:
    call = {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
            "function": {"name": name, "arguments": arguments}}  # fmt: skip
    if not stream:
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls"}
        return {**head, "object": "chat.completion", "choices": [choice], "usage": usage}

    def chunks() -> Iterator[dict[str, Any]]:
        yield _chunk(head, {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}, None)
        yield _chunk(head, {}, "tool_calls")
        yield _usage_chunk(head, usage)

    return chunks()


def _usage(raw: dict[str, Any] | None) -> dict[str, int]:
    raw = raw or {}
    prompt, completion = int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _answer(
    native: Native,
    prompt: str,
    stop: list[str],
    params: dict[str, Any],
    stream: bool,
    model: str,
    schema: dict[str, Any] | None = None,
) -> Any:
    """The model's reply after ``prompt`` (free text, or JSON held to ``schema``), in OpenAI's chat shapes (a
    text completion, rewritten)."""
    extra = params.get("stop") or []
    body: dict[str, Any] = {
        "prompt": prompt,
        "stop": [*stop, *([extra] if isinstance(extra, str) else extra)],
    }
    if schema is not None:
        body["json_schema"] = compact(schema)
    if params.get("max_tokens") is not None:
        body["max_tokens"] = params["max_tokens"]
    body.update(_options(params))
    head = _head(model)
    if not stream:
        out = native.post("/v1/completions", body)
        choice = (out.get("choices") or [{}])[0]
        message = {"role": "assistant", "content": choice.get("text") or ""}
        done = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": choice.get("finish_reason"),
        }
        return {**head, "object": "chat.completion", "choices": [done], "usage": _usage(out.get("usage"))}

    def chunks() -> Iterator[dict[str, Any]]:
        yield _chunk(head, {"role": "assistant", "content": ""}, None)
        usage = None
        for event in native.stream("/v1/completions", {**body, "stream_options": {"include_usage": True}}):
            for choice in event.get("choices") or []:
                if choice.get("text"):
                    yield _chunk(head, {"content": choice["text"]}, None)
                if choice.get("finish_reason"):
                    yield _chunk(head, {}, choice["finish_reason"])
            usage = event.get("usage") or usage
        yield _usage_chunk(head, _usage(usage))

    return chunks()


def tool_chat(
    native: Native,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    stream: bool = False,
    model: str | None = None,
    **params: Any,
) -> Any:
    """A chat completion (OpenAI's response, or an iterator of its chunks) where the model chooses between a
    tool call and an answer (see the module doc). Raises :class:`NativeError` where llama.cpp refuses."""
    offered = [t for t in tools or [] if (t.get("function") or {}).get("name")]
    choice = tool_choice if tool_choice is not None else "auto"
    if choice == "none":
        offered_for_prompt, offered = offered, []
    else:
        offered_for_prompt = offered
    prompt, stop = render_prompt(native, plain_messages(messages, offered_for_prompt))
    name = None
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
    call = bool(offered) and (
        name is not None or choice == "required" or choose_call(native, prompt, calls_since_user(messages))[0]
    )
    model_name = model or native.alias
    if not call:
        marked = f"{prompt}{ANSWER_MARK}:\n" if offered_for_prompt else prompt
        return _answer(native, marked, stop, params, stream, model_name)
    prompt_tokens = native.count(prompt)
    tool, arguments, written = _call(native, prompt, offered, name, params)
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": written,
             "total_tokens": prompt_tokens + written}  # fmt: skip
    return _call_response(_head(model_name), tool, arguments, usage, stream)


def response_schema(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema a chat request's ``response_format`` asks for (``json_object`` with or without a
    ``schema``, or OpenAI's ``json_schema``); None for plain text."""
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        inner = response_format.get("json_schema") or {}
        schema = inner.get("schema") if isinstance(inner, dict) else None
        return dict(schema) if isinstance(schema, dict) else {"type": "object"}
    if kind == "json_object":
        schema = response_format.get("schema")
        return dict(schema) if isinstance(schema, dict) else {"type": "object"}
    return None


def held_chat(
    native: Native,
    messages: Sequence[dict[str, Any]],
    response_format: Any = None,
    stream: bool = False,
    model: str | None = None,
    **params: Any,
) -> Any:
    """A chat completion whose answer is JSON held to the request's ``response_format`` schema, decoded on the
    conversation rendered by the model's template. llama.cpp's own chat endpoint refuses schemas its template
    parser cannot take (a boolean ``items``, as JSON Schema allows) and lets the JSON sprawl in whitespace."""
    params.pop("tools", None)
    params.pop("tool_choice", None)
    turns = [{"role": str(m.get("role", "user")), "content": _content(m.get("content"))} for m in messages]
    prompt, stop = render_prompt(native, turns)
    schema = response_schema(response_format) or {"type": "object"}
    return _answer(native, prompt, stop, params, stream, model or native.alias, schema)


def wants_held_json(body: dict[str, Any]) -> bool:
    """Whether a chat request asks for JSON (``response_format``): served by :func:`held_chat`."""
    return response_schema(body.get("response_format")) is not None


def wants_tools(body: dict[str, Any]) -> bool:
    """Whether a chat request is served by :func:`tool_chat`: it offers tools or carries tool turns (and asks
    for no ``response_format``, which llama.cpp holds to by itself)."""
    if body.get("response_format"):
        return False
    if body.get("tools") or body.get("functions"):
        return True
    return any(
        isinstance(m, dict) and (m.get("role") in ("tool", "function") or m.get("tool_calls"))
        for m in body.get("messages") or []
    )
