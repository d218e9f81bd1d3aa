"""The ``scripted`` provider: answers read from a YAML/JSON script, for ``pr`` suites and tests.

A script is a list of replies (or a mapping with ``replies:`` plus optional ``default:`` and ``loop:``)::

    replies:
      - match: weather            # keyed: case-insensitive substring of the last user message
        tool_calls: [{name: get_weather, arguments: {city: Paris}}]
      - regex: "^add (\\d+)"     # keyed: regular expression searched in the last user message
        text: "added"
        times: 1                  # a keyed reply may be limited to N uses
      - text: "Hello!"            # ordered: used one per call, in order, when no keyed reply matches
      - error: rate_limit         # scripted failures: infra | dns | auth | quota | not_found | rate_limit
        retry_after: 0.01         #   | server | timeout (all InfraError) | subject (a refused request)
      - text: "after the retry"
        usage: {input_tokens: 12, output_tokens: 3}
        delay_s: 0.05             # simulated latency before the first token
    default: {text: "I don't know."}  # when nothing else applies; without it an exhausted script fails
    loop: false                        # start the ordered replies again when used up

Token counts, when a reply does not give them, are word counts (priced at 0 by the rate card).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from assay.errors import ConfigError
from assay.models._base import BaseChatModel, Emit, now
from assay.models._errors import ModelInfraError, ModelResponseError, parse_reset_time
from assay.models._types import Message, ModelOutput, StreamChunk, Timings, Tool, ToolCall
from assay.runs import Usage

__all__ = ["Script", "ScriptedModel", "ScriptedReply", "load_script"]

ErrorKind = Literal[
    "infra", "connect", "dns", "auth", "quota", "not_found", "rate_limit", "server", "timeout", "subject"
]


class ScriptedToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class ScriptedReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    match: str | None = None
    regex: str | None = None
    times: int | None = Field(default=None, ge=1)
    finish_reason: str | None = None
    error: ErrorKind | None = None
    message: str | None = None
    retry_after: float | None = None
    usage: ScriptedUsage | None = None
    delay_s: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _check(self) -> ScriptedReply:
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"bad regex {self.regex!r}: {exc}") from exc
        return self

    @property
    def keyed(self) -> bool:
        return self.match is not None or self.regex is not None

    def matches(self, text: str) -> bool:
        if self.match is not None and self.match.lower() not in text.lower():
            return False
        return not (self.regex is not None and not re.search(self.regex, text))


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replies: list[ScriptedReply] = Field(default_factory=list)
    default: ScriptedReply | None = None
    loop: bool = False


def load_script(source: str | Path | dict[str, Any] | list[Any]) -> tuple[Script, str]:
    """Parse a script from a path or an in-memory value; returns it and a name to report it by."""
    where = "<script>"
    data: Any = source
    if isinstance(source, str | Path):
        path = Path(source)
        where = str(path)
        if not path.is_file():
            raise ConfigError("scripted model file not found (model string scripted/FILE)", path=where)
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: {exc.msg}", path=where, line=exc.lineno) from exc
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise ConfigError(f"invalid YAML: {getattr(exc, 'problem', exc)}", path=where, line=line) from exc
    if isinstance(data, list):
        data = {"replies": data}
    if not isinstance(data, dict):
        raise ConfigError("a script is a list of replies or a mapping with 'replies:'", path=where)
    try:
        script = Script.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"bad script entry {loc}: {first['msg']}", path=where) from exc
    if not script.replies and script.default is None:
        raise ConfigError("script has no replies and no default", path=where)
    return script, where


def _words(text: str) -> int:
    return len(text.split())


class ScriptedModel(BaseChatModel):
    """A chat model that plays back a script. Deterministic; keeps its position per instance."""

    provider = "scripted"
    default_concurrency = 64

    def __init__(self, script: str | Path | dict[str, Any] | list[Any], **kw: Any) -> None:
        parsed, where = load_script(script)
        kw.setdefault("backoff_s", 0.0)
        super().__init__(where if isinstance(script, str | Path) else "inline", **kw)
        self.script = parsed
        self.where = where
        self._ordered = [r for r in parsed.replies if not r.keyed]
        self._keyed = [r for r in parsed.replies if r.keyed]
        self._uses: dict[int, int] = {}
        self._next = 0
        self.calls: list[dict[str, Any]] = []

    def reset(self) -> None:
        self._next = 0
        self._uses.clear()
        self.calls.clear()

    def _pick(self, last_user: str) -> ScriptedReply:
        for i, reply in enumerate(self._keyed):
            if reply.matches(last_user) and (reply.times is None or self._uses.get(i, 0) < reply.times):
                self._uses[i] = self._uses.get(i, 0) + 1
                return reply
        if self._ordered:
            if self._next >= len(self._ordered) and self.script.loop:
                self._next = 0
            if self._next < len(self._ordered):
                reply = self._ordered[self._next]
                self._next += 1
                return reply
        if self.script.default is not None:
            return self.script.default
        raise ConfigError(
            f"script ran out of replies after {len(self.calls) - 1} calls (add more, a 'default:' or 'loop: true'); "
            f"last user message: {last_user[:80]!r}",
            path=self.where,
        )

    async def _call(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None,
        stream: bool,
        options: dict[str, Any],
        emit: Emit | None,
    ) -> ModelOutput:
        timings = Timings(request_start=now())
        last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        self.calls.append({"messages": list(messages), "tools": list(tools or []), "options": dict(options)})
        reply = self._pick(last_user)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.error is not None:
            self._raise(reply)
        calls = [
            ToolCall(id=tc.id or f"call_{len(self.calls)}_{i}", name=tc.name, arguments=dict(tc.arguments))
            for i, tc in enumerate(reply.tool_calls)
        ]
        chunks: list[StreamChunk] = []
        if stream:
            pieces = re.findall(r"\S+\s*|\s+", reply.text)
            for piece in pieces:
                t = now()
                timings.first_token = timings.first_token or t
                timings.last_token = t
                chunk = StreamChunk(text=piece, t=t)
                chunks.append(chunk)
                if emit is not None:
                    emit(chunk)
                await asyncio.sleep(0)
            for call in calls:
                t = now()
                timings.first_token = timings.first_token or t
                timings.last_token = t
                chunk = StreamChunk(text="", t=t, tool_call=call)
                chunks.append(chunk)
                if emit is not None:
                    emit(chunk)
        timings.end = now()
        u = reply.usage or ScriptedUsage()
        prompt_words = sum(_words(m.content) for m in messages)
        out_words = _words(reply.text) + sum(_words(json.dumps(c.arguments)) + 1 for c in calls)
        usage = Usage(
            input_tokens=u.input_tokens if u.input_tokens is not None else prompt_words,
            output_tokens=u.output_tokens if u.output_tokens is not None else out_words,
            cache_read_tokens=u.cache_read_tokens,
            cache_write_tokens=u.cache_write_tokens,
            calls=1,
        )
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        out = ModelOutput(
            text=reply.text,
            tool_calls=calls,
            finish_reason=finish,
            usage=usage,
            timings=timings,
            chunks=chunks,
            model=self.model,
        )
        return self._priced(out, tokens_reported=True)

    def _raise(self, reply: ScriptedReply) -> None:
        kind = reply.error or "infra"
        message = reply.message or f"scripted {kind} error"
        if kind == "subject":
            raise ModelResponseError(message, provider=self.provider, status=400)
        retryable = kind in ("rate_limit", "server", "timeout")
        raise ModelInfraError(
            message,
            provider=self.provider,
            kind="connect" if kind == "infra" else kind,
            status={"auth": 401, "quota": 402, "not_found": 404, "rate_limit": 429, "server": 503}.get(kind),
            retryable=retryable,
            retry_after=reply.retry_after,
            # a scripted quota error says when it resets, as a provider's reset header would
            resets_at=parse_reset_time({"retry-after": str(reply.retry_after)})
            if kind == "quota" and reply.retry_after is not None
            else None,
        )
