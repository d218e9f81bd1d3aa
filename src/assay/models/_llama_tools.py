"""Tool calls from a llama.cpp model with no tool-calling format of its own (the embedded SmolLM2), server side.

llama-cpp-python's server answers a request with ``tools`` in plain text unless ``tool_choice`` names a tool:
its chat templates never produce a call, so an agent on the embedded model never calls one. Installed in the
server process (:func:`install_tool_calls`, from :mod:`assay.models._llama_serve`), every chat request that
offers tools (or carries tool turns) is served by :func:`tool_chat` instead:

- the conversation is written in a text protocol the model is told in its system message (a tool call is
  ``functions.<name>:`` and the arguments as JSON; an answer is ``message:`` and the text), rendered with the
  model's own chat template (ChatML where it has none): earlier calls as that text, tool results as ``tool`` turns;
- **the model chooses**: the log-probabilities of the two openings (``functions`` / ``message``) at the start
  of its reply decide, the call's side raised by :data:`TOOL_BIAS` (see its note); ``tool_choice`` ``required`` or
  a tool's name skips the choice, ``none`` answers;
- a call's name is held by a grammar to the offered names and its arguments to the tool's JSON schema
  (llama.cpp's GBNF), so the OpenAI ``tool_calls`` it returns always parse; an answer is free text. Streamed or
  not, the response has OpenAI's shapes, so the gateway passes it on as OpenAI or Anthropic tool use.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["TOOL_BIAS", "install_tool_calls", "render_prompt", "tool_chat", "tools_text"]

#: how a reply that calls a tool opens, and how an answer does
CALL_MARK, ANSWER_MARK = "functions", "message"
#: log-probability added to the call's opening before the two are compared, and what each call already made
#: since the user's last message takes off it. SmolLM2-135M, shown its tools in this protocol, favours the
#: call's opening on a fresh question (first turns of 8 documents and shell scenarios: +0.9 to +7.1) and only a
#: little less once a result is in (+0.1 to +3.5 after one): it copies what it saw more than it weighs what it
#: has. Unbiased, with each call made costing 3, it calls on a fresh question and answers once results are in
#: (a second call where it is surer), instead of calling to the step cap.
TOOL_BIAS = 0.0
CALL_COST = 3.0
#: what a call's arguments may run to (a grammar-held JSON object; the request's max_tokens caps it lower)
ARGS_MAX_TOKENS = 256
_CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
_GENERATION = ("temperature", "top_p", "top_k", "min_p", "seed", "repeat_penalty", "presence_penalty",
               "frequency_penalty")  # fmt: skip


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


def render_prompt(llama: Any, messages: list[dict[str, str]]) -> tuple[str, list[str]]:
    """The prompt of ``messages`` by the model's own chat template (ChatML where it has none, or where its
    template refuses a ``tool`` turn), ending where the assistant's reply starts; and its stop strings."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    eos = llama.detokenize([llama.token_eos()], special=True).decode("utf-8", errors="ignore")
    bos = llama.detokenize([llama.token_bos()], special=True).decode("utf-8", errors="ignore")
    template = (getattr(llama, "metadata", None) or {}).get("tokenizer.chat_template") or _CHATML
    for source in dict.fromkeys((template, _CHATML)):
        try:
            done = Jinja2ChatFormatter(template=source, eos_token=eos, bos_token=bos)(messages=messages)
        except Exception:  # a template that insists on user/assistant turns: ChatML then
            continue
        stop = done.stop if isinstance(done.stop, list) else [done.stop] if done.stop else []
        return done.prompt, [*stop, "<|im_end|>"] if source is _CHATML else stop or [eos]
    raise ValueError("no chat template could render the conversation")


def _first_token(llama: Any, text: str) -> int:
    return int(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)[0])


def calls_since_user(messages: Sequence[dict[str, Any]]) -> int:
    """Tool results in the conversation after the user's last message."""
    count = 0
    for m in reversed(messages):
        if m.get("role") == "user":
            break
        count += m.get("role") in ("tool", "function")
    return count


def choose_call(llama: Any, prompt: str, calls_made: int = 0) -> tuple[bool, float]:
    """Whether the model opens its reply with a tool call (``calls_made``: calls since the user's last
    message); and the margin (call minus answer, in log-probability, before :data:`TOOL_BIAS` and
    :data:`CALL_COST`)."""
    import numpy as np

    call, answer = _first_token(llama, CALL_MARK), _first_token(llama, ANSWER_MARK)
    seen: dict[str, float] = {}

    def look(_ids: Any, scores: Any) -> Any:
        if not seen:
            logits = np.asarray(scores, dtype=np.float64)
            seen["margin"] = float(logits[call] - logits[answer])  # the softmax's normaliser cancels
        return scores

    llama.create_completion(prompt=prompt, max_tokens=1, temperature=0.0, logits_processor=[look])
    margin = seen["margin"]
    return margin + TOOL_BIAS - CALL_COST * calls_made > 0, margin


def _grammar(text: str) -> Any:
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


def _args_grammar(parameters: dict[str, Any] | None) -> Any:
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(json.dumps(parameters or {"type": "object"}), verbose=False)
    except Exception:  # a schema the converter cannot hold: any JSON object then
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)


def _options(params: dict[str, Any]) -> dict[str, Any]:
    return {k: params[k] for k in _GENERATION if params.get(k) is not None}


def _call(
    llama: Any, prompt: str, tools: Sequence[dict[str, Any]], name: str | None, params: dict[str, Any]
) -> tuple[str, str, int]:
    """The call the model writes after ``prompt``: (tool name, JSON arguments, tokens written)."""
    by_name = {(t.get("function") or {}).get("name"): t.get("function") or {} for t in tools}
    written = 0
    prompt += f"{CALL_MARK}."
    if name is None:
        names = " | ".join(json.dumps(n) for n in by_name)
        out = llama.create_completion(
            prompt=prompt, max_tokens=64, temperature=0.0, grammar=_grammar(f"root ::= {names}")
        )
        name = out["choices"][0]["text"]
        written += int(out["usage"]["completion_tokens"])
    cap = min(ARGS_MAX_TOKENS, int(params.get("max_tokens") or ARGS_MAX_TOKENS))
    out = llama.create_completion(
        prompt=f"{prompt}{name}:\n",
        max_tokens=cap,
        grammar=_args_grammar(by_name.get(name, {}).get("parameters")),
        **_options(params),
    )
    written += int(out["usage"]["completion_tokens"])
    return str(name), out["choices"][0]["text"].strip(), written


def _head(model: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": model}


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
        delta = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}
        yield {**head, "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}  # fmt: skip
        yield {**head, "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}]}  # fmt: skip
        yield {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}

    return chunks()


def _answer(
    llama: Any, prompt: str, stop: list[str], params: dict[str, Any], stream: bool, model: str
) -> Any:
    from llama_cpp.llama_chat_format import _convert_completion_to_chat

    extra = params.get("stop") or []
    out = llama.create_completion(
        prompt=prompt,
        max_tokens=params.get("max_tokens"),
        stop=[*stop, *([extra] if isinstance(extra, str) else extra)],
        stream=stream,
        model=model,
        **_options(params),
    )
    return _convert_completion_to_chat(out, stream=stream)


def tool_chat(
    llama: Any,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    stream: bool = False,
    model: str | None = None,
    **params: Any,
) -> Any:
    """A chat completion (OpenAI's response or chunks) where the model chooses between a tool call and an
    answer (see the module doc)."""
    offered = [t for t in tools or [] if (t.get("function") or {}).get("name")]
    choice = tool_choice if tool_choice is not None else "auto"
    if choice == "none":
        offered_for_prompt, offered = offered, []
    else:
        offered_for_prompt = offered
    prompt, stop = render_prompt(llama, plain_messages(messages, offered_for_prompt))
    name = None
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
    call = bool(offered) and (
        name is not None or choice == "required" or choose_call(llama, prompt, calls_since_user(messages))[0]
    )
    model_name = model or getattr(llama, "model_path", "") or "local"
    if not call:
        marked = f"{prompt}{ANSWER_MARK}:\n" if offered_for_prompt else prompt
        return _answer(llama, marked, stop, params, stream, model_name)
    prompt_tokens = len(llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))
    tool, arguments, written = _call(llama, prompt, offered, name, params)
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": written,
             "total_tokens": prompt_tokens + written}  # fmt: skip
    return _call_response(_head(model_name), tool, arguments, usage, stream)


def _wants_tools(kwargs: dict[str, Any]) -> bool:
    if kwargs.get("tools") or kwargs.get("functions"):
        return True
    return any(
        m.get("role") in ("tool", "function") or m.get("tool_calls") for m in kwargs.get("messages") or []
    )


def install_tool_calls() -> None:
    """Serve chat requests that offer tools (or carry tool turns) with :func:`tool_chat` (in this process)."""
    import llama_cpp

    original = llama_cpp.Llama.create_chat_completion
    if getattr(original, "_assay_tool_calls", False):
        return

    def create_chat_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args or not _wants_tools(kwargs) or kwargs.get("response_format"):
            return original(self, *args, **kwargs)
        kwargs.pop("functions", None)
        kwargs.pop("function_call", None)
        return tool_chat(self, **kwargs)

    create_chat_completion._assay_tool_calls = True  # type: ignore[attr-defined]
    llama_cpp.Llama.create_chat_completion = create_chat_completion  # type: ignore[method-assign]
