"""The ``http`` harness: an agent behind an endpoint, and assay's turn protocol.

Two protocols:

- ``turn`` (assay's own; ``assay agent serve`` speaks it): ``POST {url}/turn`` with a :class:`TurnRequest`, answered
  with an :class:`AgentResult` as JSON. The server keeps the conversation under ``session_id``; it returns the
  session id to send with the next turn. Both sides use these models.
- ``openai``: an agent that looks like a chat model (``POST {url}/chat/completions``). The conversation is sent as
  ``messages`` every turn: ``RunSpec.history`` when given, else what this harness kept for the session. The record
  is "answer only" (the agent's tools are inside it); tokens come from the reply's ``usage``.

Options: ``url`` (or ``target``, as in ``http:URL``), ``protocol`` (``turn``, or ``openai``; default ``openai`` for a
URL ending in ``/v1``, else ``turn``), ``model`` (for ``openai``: the name to ask for; default the route's), ``headers``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field, ValidationError

from assay.agents._cliproc import refuse_fence, summarize
from assay.agents._harness import Harness, RunSpec
from assay.agents.record import AgentResult, Limits, TranscriptEntry
from assay.errors import ConfigError
from assay.models import ssl_context
from assay.runs import Usage

TURN_PROTOCOL_VERSION = 1
TURN_PATH = "/turn"


class TurnRequest(BaseModel):
    """One turn sent to an agent server (``POST /turn``)."""

    protocol_version: int = TURN_PROTOCOL_VERSION
    prompt: str
    #: None starts a new conversation; the server answers with the id to send next time
    session_id: str | None = None
    workdir: str
    limits: Limits = Field(default_factory=Limits)
    #: the conversation so far, for servers that keep none (OpenAI-style roles)
    history: list[dict[str, Any]] = Field(default_factory=list)
    #: the model name to ask the route for, and the gateway's URLs (never a key)
    model: str | None = None
    openai_base_url: str | None = None
    anthropic_base_url: str | None = None
    #: folders the agent's commands get first on PATH (``RunSpec.toolchain``; for a server on this machine)
    toolchain: list[str] = Field(default_factory=list)


#: what ``POST /turn`` answers
TurnResponse = AgentResult


class HttpHarness(Harness):
    name = "http"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        known = {"url", "target", "protocol", "model", "headers"}
        unknown = set(options) - known
        if unknown:
            raise ConfigError(f"http harness: unknown option(s) {sorted(unknown)} (known: {sorted(known)})")
        url = str(options.get("url") or options.get("target") or "")
        if not url.startswith(("http://", "https://")):
            raise ConfigError(
                f"http harness url={url!r}: expected http://HOST:PORT (e.g. http:http://127.0.0.1:8765)"
            )
        self.url = url.rstrip("/")
        protocol = options.get("protocol") or ("openai" if self.url.endswith("/v1") else "turn")
        if protocol not in ("turn", "openai"):
            raise ConfigError(f"http harness protocol={protocol!r}: expected 'turn' or 'openai'")
        self.protocol: Literal["turn", "openai"] = protocol
        self.headers = dict(options.get("headers") or {})
        self._sessions: dict[str, list[dict[str, Any]]] = {}

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        refuse_fence(spec.fence, self.name)
        started = time.monotonic()
        try:
            # the wall clock bounds the whole turn, not each read
            async with httpx.AsyncClient(timeout=None, headers=self.headers, verify=ssl_context()) as client:
                call = (
                    self._turn(client, prompt, spec)
                    if self.protocol == "turn"
                    else self._openai(client, prompt, spec)
                )
                result = await asyncio.wait_for(call, timeout=spec.limits.wall_clock_s)
        except TimeoutError:
            result = AgentResult(
                harness=self.name,
                cut_off="wall_clock",
                record_level="answer_only",
                session_id=spec.session_id,
            )
        except httpx.HTTPError as exc:
            result = AgentResult(
                harness=self.name,
                error=f"http agent at {self.url}: {type(exc).__name__}: {exc}",
                record_level="answer_only",
            )
        result.elapsed_s = result.elapsed_s or time.monotonic() - started
        return result

    def _failed(self, reply: httpx.Response) -> AgentResult | None:
        if reply.is_success:
            return None
        return AgentResult(
            harness=self.name,
            record_level="answer_only",
            error=f"http agent at {self.url}: {reply.status_code} {summarize(reply.text, 300)}",
        )

    async def _turn(self, client: httpx.AsyncClient, prompt: str, spec: RunSpec) -> AgentResult:
        route = spec.route
        request = TurnRequest(
            prompt=prompt,
            session_id=spec.session_id,
            workdir=str(Path(spec.workdir).resolve()),
            limits=spec.limits,
            history=list(spec.history),
            model=route.model if route else None,
            openai_base_url=route.openai_base_url if route else None,
            anthropic_base_url=route.anthropic_base_url if route else None,
            toolchain=[str(Path(t).absolute()) for t in spec.toolchain],
        )
        reply = await client.post(
            self.url + TURN_PATH,
            content=request.model_dump_json(),
            headers={"content-type": "application/json"},
        )
        failed = self._failed(reply)
        if failed is not None:
            return failed
        try:
            result = TurnResponse.model_validate_json(reply.content)
        except ValidationError as exc:
            return AgentResult(
                harness=self.name, error=f"http agent at {self.url}: not an AgentResult: {exc}"
            )
        return result.model_copy(update={"harness": self.name})

    async def _openai(self, client: httpx.AsyncClient, prompt: str, spec: RunSpec) -> AgentResult:
        model = self.options.get("model") or (spec.route.model if spec.route else None)
        if not model:
            raise ConfigError("http harness (openai): no model name: give model= or a route")
        session = spec.session_id or uuid.uuid4().hex
        history = list(spec.history) if spec.history else list(self._sessions.get(session, []))
        messages = [*history, {"role": "user", "content": prompt}]
        reply = await client.post(f"{self.url}/chat/completions", json={"model": model, "messages": messages})
        failed = self._failed(reply)
        if failed is not None:
            return failed
        try:
            body = reply.json()
            message = body["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            return AgentResult(
                harness=self.name, error=f"http agent at {self.url}: not a chat completion: {exc!r}"
            )
        answer = message.get("content") or ""
        self._sessions[session] = [*messages, {"role": "assistant", "content": answer}]
        u = body.get("usage") or {}
        usage = Usage(
            input_tokens=int(u.get("prompt_tokens") or 0),
            output_tokens=int(u.get("completion_tokens") or 0),
            calls=1,
            cost_source="harness_counts" if u else None,
        )
        transcript = [
            TranscriptEntry(role=m["role"], content=str(m.get("content") or ""))
            for m in messages
            if m.get("role") in ("system", "user", "assistant", "tool")
        ]
        transcript.append(TranscriptEntry(role="assistant", content=answer))
        return AgentResult(
            harness=self.name,
            answer=answer,
            record_level="answer_only",
            usage=usage,
            model_ran=body.get("model"),
            transcript=transcript,
            session_id=session,
            steps=1,
        )
