"""The gateway's ASGI app: both fronts, the call log, usage totals, and upstream failures as HTTP answers.

Routes (each also under ``/run/RUN_ID``, which tags the calls with that run):

    POST /v1/chat/completions          OpenAI front (JSON or SSE)
    POST /v1/responses                 OpenAI Responses front, what Codex CLI speaks (JSON or SSE; logged as openai)
    POST /v1/messages                  Anthropic front (JSON or SSE)
    POST /v1/messages/count_tokens     Anthropic token count (the upstream's tokenizer where it has one)
    GET  /v1/models                    the one model served (Anthropic's shape when ``anthropic-version`` is sent)
    GET  /assay/usage                  totals of the calls (``?since=N`` skips the first N of the gateway)
    GET  /assay/calls                  the call records themselves
    POST /run/RUN_ID/assay/limit       ``{"max_calls": N}``: from now on, the run's calls past N are refused
                                       (``cut_off``, 400) and never reach the upstream; answers ``{"since": I}``,
                                       the call index to read that run's usage from (``null`` lifts it)
    GET  /                             that the gateway is up (clients probe the base URL with HEAD)

An upstream that is unreachable or rejects the gateway (``InfraError``) is answered 503 with the front's error
body and ``x-assay-infra-error: 1``; every error answer carries ``x-should-retry: false`` (the upstream's own
retry loop already ran), so an agent stops at once and its harness records INFRA_ERROR.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import math
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from assay.errors import ConfigError, InfraError, MissingDependencyError, SubjectError

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - the extra is part of every install that runs tests
    raise MissingDependencyError("starlette", "gateway") from exc

from assay._util import Scrubber
from assay.agents.gateway._anthropic_front import (
    AnthropicStream,
    anthropic_error,
    anthropic_response,
    count_text,
    new_message_id,
    parse_anthropic,
)
from assay.agents.gateway._common import BadRequest, FrontCall, rewrite_system
from assay.agents.gateway._log import CallLog, CallRecord, GatewayUsage
from assay.agents.gateway._openai_front import OpenAIStream, openai_error, openai_response, parse_openai
from assay.agents.gateway._responses_front import (
    ResponsesStream,
    new_response_id,
    parse_responses,
    responses_response,
)
from assay.models import ChatModel, ModelOutput, StreamChunk
from assay.models.cost import is_loopback_url
from assay.models.server_tokens import server_tokenizer

__all__ = ["build_app"]

INFRA_HEADER = "x-assay-infra-error"
_NO_RETRY = {"x-should-retry": "false"}


class _Failure(Exception):
    """A request that ends in an error answer: what to log and what to send."""

    def __init__(self, status: str, http: int, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.http = http
        self.message = message
        self.kind = kind


def _classify(exc: BaseException) -> _Failure:
    if isinstance(exc, _Failure):
        return exc
    if isinstance(exc, BadRequest):
        return _Failure("bad_request", 400, str(exc))
    if isinstance(exc, InfraError):
        return _Failure("infra_error", 503, str(exc), getattr(exc, "kind", None) or "infra")
    if isinstance(exc, SubjectError):
        status = getattr(exc, "status", None)
        return _Failure(
            "refused", status if isinstance(status, int) and 400 <= status < 500 else 400, str(exc)
        )
    if isinstance(exc, asyncio.CancelledError):
        return _Failure(
            "error", 499, "cancelled before the upstream answered (gateway stopping or client gone)"
        )
    if isinstance(exc, ConfigError):
        return _Failure("error", 500, f"gateway upstream misconfigured: {exc}")
    return _Failure("error", 500, f"gateway error: {type(exc).__name__}: {exc}")


def _error_body(front: str, failure: _Failure) -> dict[str, Any]:
    if front == "anthropic":
        kind = {"infra_error": "api_error", "error": "api_error", "not_found": "not_found_error"}.get(
            failure.status, "invalid_request_error"
        )
        return anthropic_error(failure.message, kind)
    kind = {"infra_error": "assay_infra_error", "error": "server_error", "not_found": "not_found"}.get(
        failure.status, "invalid_request_error"
    )
    return openai_error(failure.message, kind, failure.kind)


def _error_headers(failure: _Failure) -> dict[str, str]:
    headers = dict(_NO_RETRY)
    if failure.status == "infra_error":
        headers[INFRA_HEADER] = "1"
        headers["x-assay-infra-kind"] = failure.kind or "infra"
    return headers


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _upstream_keys(upstream: ChatModel) -> list[str]:
    """The credentials the upstream sends (its Authorization / x-api-key headers)."""
    headers = getattr(getattr(upstream, "http", None), "headers", None) or {}
    keys = [str(v) for k, v in headers.items() if k.lower() in ("authorization", "x-api-key")]
    return [k.removeprefix("Bearer ") for k in keys]


class _Gateway:
    def __init__(self, upstream: ChatModel, log: CallLog, rewrite_system: bool) -> None:
        self.upstream = upstream
        self.log = log
        self.rewrite_system = rewrite_system
        self.provider = str(getattr(upstream, "provider", "") or upstream.name.partition("/")[0])
        # an upstream's error text may quote a key: never pass one to the agent or the log
        self.scrubber = Scrubber(extra_values=_upstream_keys(upstream))
        #: run -> (the call index its limit counts from, the model calls it may make)
        self.step_limits: dict[str, tuple[int, int]] = {}

    def _classify(self, exc: BaseException) -> _Failure:
        failure = _classify(exc)
        failure.message = self.scrubber.scrub_text(failure.message)
        return failure

    def _ran(self, out: ModelOutput) -> str:
        return f"{self.provider}/{out.model}" if out.model else self.upstream.name

    def _record(self, request: Request, front: str, t0: float, **fields: Any) -> CallRecord:
        latency = (time.perf_counter() - t0) * 1000.0
        upstream_ms = fields.pop("upstream_ms", 0.0)
        record = CallRecord(
            time=fields.pop("time"),
            run=request.path_params.get("run"),
            front="openai" if front == "responses" else front,  # type: ignore[arg-type]
            endpoint=request.url.path,
            upstream=self.upstream.name,
            latency_ms=round(latency, 3),
            upstream_ms=round(upstream_ms, 3),
            gateway_ms=round(max(0.0, latency - upstream_ms), 3),
            **fields,
        )
        self.log.add(record)
        return record

    @staticmethod
    def _outcome(out: ModelOutput) -> dict[str, Any]:
        u = out.usage
        return {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
            "cost_usd": u.cost_usd,
            "cost_source": u.cost_source,
            "tool_calls": len(out.tool_calls),
            "finish_reason": out.finish_reason,
        }

    # -- the chat endpoints ---------------------------------------------------------------------------
    async def chat(self, request: Request, front: str) -> Response:
        t0 = time.perf_counter()
        started = _utc_now()
        call: FrontCall | None = None
        upstream_ms = 0.0
        try:
            call = await self._parse(request, front)
            self._check_steps(request.path_params.get("run"))
            messages = rewrite_system(call.messages) if self.rewrite_system else call.messages
            tools = call.tools or None
            if call.stream:
                stream = self.upstream.stream(messages, tools, **call.options)
                pieces = aiter(stream)
                t_up = time.perf_counter()
                try:
                    first: StreamChunk | None = await anext(pieces)
                except StopAsyncIteration:
                    first = None
                upstream_ms = (time.perf_counter() - t_up) * 1000.0
                body = self._stream(request, front, call, stream, pieces, first, t0, started, upstream_ms)
                return StreamingResponse(
                    body, media_type="text/event-stream", headers={"cache-control": "no-cache"}
                )
            t_up = time.perf_counter()
            out = await self.upstream.generate(messages, tools, **call.options)
            upstream_ms = (time.perf_counter() - t_up) * 1000.0
        except (Exception, asyncio.CancelledError) as exc:
            failure = self._classify(exc)
            self._record(
                request,
                front,
                t0,
                time=started,
                stream=bool(call and call.stream),
                model_asked=call.model_asked if call else None,
                upstream_ms=upstream_ms,
                status=failure.status,
                http_status=failure.http,
                error_kind=failure.kind,
                error=failure.message,
            )
            if isinstance(exc, asyncio.CancelledError):
                raise
            return JSONResponse(_error_body(front, failure), failure.http, headers=_error_headers(failure))
        name = self.upstream.name
        if front == "anthropic":
            payload = anthropic_response(out, name, new_message_id())
        elif front == "responses":
            payload = responses_response(out, name, new_response_id())
        else:
            payload = openai_response(out, name, f"chatcmpl-{uuid.uuid4().hex[:24]}")
        response = JSONResponse(payload)
        self._record(
            request,
            front,
            t0,
            time=started,
            model_asked=call.model_asked,
            model_ran=self._ran(out),
            upstream_ms=upstream_ms,
            **self._outcome(out),
        )
        return response

    def _check_steps(self, run: str | None) -> None:
        """A call past the run's step limit is refused before it reaches the upstream."""
        if run is None or run not in self.step_limits:
            return
        since, cap = self.step_limits[run]
        made = sum(r.status != "cut_off" for r in self.log.records(run=run, since=since))
        if made >= cap:
            raise _Failure(
                "cut_off",
                400,
                f"the run's step limit is reached: {cap} model call(s) per agent run (--max-steps)",
            )

    async def limit(self, request: Request) -> Response:
        run = request.path_params["run"]
        try:
            cap = json.loads(await request.body() or b"{}").get("max_calls")
            if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 1):
                raise ValueError(f"max_calls={cap!r}: a whole number of 1 or more, or null")
        except (ValueError, AttributeError) as exc:
            return JSONResponse(openai_error(f"malformed limit: {exc}", "invalid_request_error"), 400)
        since = len(self.log)
        if cap is None:
            self.step_limits.pop(run, None)
        else:
            self.step_limits[run] = (since, cap)
        return JSONResponse({"run": run, "max_calls": cap, "since": since})

    async def _parse(self, request: Request, front: str) -> FrontCall:
        try:
            body = json.loads(await request.body())
        except ValueError as exc:
            raise BadRequest(f"the request body is not JSON: {exc}") from exc
        try:
            if front == "responses":
                return parse_responses(body)
            return parse_anthropic(body) if front == "anthropic" else parse_openai(body)
        except (TypeError, ValueError, AttributeError) as exc:  # a field of the wrong type
            raise BadRequest(f"malformed request: {type(exc).__name__}: {exc}") from exc

    async def _stream(
        self,
        request: Request,
        front: str,
        call: FrontCall,
        stream: Any,
        pieces: AsyncIterator[StreamChunk],
        first: StreamChunk | None,
        t0: float,
        started: str,
        upstream_ms: float,
    ) -> AsyncIterator[str]:
        name = self.upstream.name
        sse: AnthropicStream | OpenAIStream | ResponsesStream = (
            AnthropicStream(name, new_message_id())
            if front == "anthropic"
            else ResponsesStream(name, new_response_id())
            if front == "responses"
            else OpenAIStream(name, f"chatcmpl-{uuid.uuid4().hex[:24]}", call.include_usage)
        )
        fields: dict[str, Any] = {"status": "error", "error": "the client went away mid-stream"}
        ttft: float | None = None
        texts: list[str] = []
        calls = []
        logged = False

        def record() -> None:
            nonlocal logged
            if not logged:
                logged = True
                self._record(
                    request,
                    front,
                    t0,
                    time=started,
                    stream=True,
                    model_asked=call.model_asked,
                    upstream_ms=upstream_ms,
                    ttft_ms=None if ttft is None else round(ttft, 3),
                    **fields,
                )

        try:
            # the opening events go out with the first piece (already in hand): one write, one wake-up fewer
            opening = sse.start()
            chunk = first
            while chunk is not None:
                if ttft is None:
                    ttft = (time.perf_counter() - t0) * 1000.0
                piece = ""
                if chunk.tool_call is not None:
                    calls.append(chunk.tool_call)
                    piece = sse.tool_call(chunk.tool_call)
                elif chunk.text:
                    texts.append(chunk.text)
                    piece = sse.text(chunk.text)
                if opening or piece:
                    yield opening + piece
                    opening = ""
                t_up = time.perf_counter()
                try:
                    chunk = await anext(pieces)
                except StopAsyncIteration:
                    chunk = None
                except Exception as exc:
                    upstream_ms += (time.perf_counter() - t_up) * 1000.0
                    failure = self._classify(exc)
                    fields = {"status": failure.status, "error_kind": failure.kind, "error": failure.message}
                    body = _error_body(front, failure)
                    if isinstance(sse, AnthropicStream):
                        yield sse.error(failure.message, body["error"]["type"])
                    else:
                        yield sse.error(failure.message, body["error"]["type"], failure.kind)
                    return
                upstream_ms += (time.perf_counter() - t_up) * 1000.0
            out = getattr(stream, "output", None)
            if not isinstance(out, ModelOutput):  # a ChatModel whose stream keeps no output
                out = ModelOutput(text="".join(texts), tool_calls=calls)
            fields = {"status": "ok", "model_ran": self._ran(out), **self._outcome(out)}
            # logged before the last event: a client that has read the whole stream finds its call in the log
            record()
            yield opening + sse.finish(out)
        finally:
            record()

    # -- the other endpoints --------------------------------------------------------------------------
    async def count_tokens(self, request: Request) -> Response:
        try:
            call = await self._parse(request, "anthropic")
        except BadRequest as exc:
            failure = self._classify(exc)
            return JSONResponse(_error_body("anthropic", failure), 400, headers=_NO_RETRY)
        text = count_text(call)
        counted = await self._tokenizer_count(text)
        how = "tokenizer" if counted is not None else "estimate"
        n = counted if counted is not None else math.ceil(len(text) / 4)
        return JSONResponse({"input_tokens": n}, headers={"x-assay-token-count": how})

    async def _tokenizer_count(self, text: str) -> int | None:
        """The upstream's own count where it is a server on loopback with a tokenizer endpoint; None otherwise."""
        if getattr(self.upstream, "server", False) is None:  # a local model not started yet
            await self.upstream.preflight()  # type: ignore[attr-defined]
        server = getattr(self.upstream, "server", None)
        base = getattr(server, "base_url", None) or getattr(self.upstream, "base_url", None)
        if not isinstance(base, str) or not is_loopback_url(base):
            return None
        return await server_tokenizer(base, getattr(self.upstream, "model", "") or "").count(text)

    async def models(self, request: Request) -> Response:
        name = self.upstream.name
        if "anthropic-version" in request.headers:
            entry = {"type": "model", "id": name, "display_name": name, "created_at": "1970-01-01T00:00:00Z"}
            return JSONResponse({"data": [entry], "has_more": False, "first_id": name, "last_id": name})
        return JSONResponse(
            {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "assay"}]}
        )

    def _since(self, request: Request) -> int:
        raw = request.query_params.get("since", "0")
        if not raw.isdigit():
            raise BadRequest(f"since={raw!r}: a call index (0 or more)")
        return int(raw)

    async def usage(self, request: Request) -> Response:
        try:
            since = self._since(request)
        except BadRequest as exc:
            return JSONResponse(openai_error(str(exc), "invalid_request_error"), 400)
        run = request.path_params.get("run") or request.query_params.get("run")
        records = self.log.records(run=run, since=since)
        return JSONResponse(GatewayUsage.of(records, self.upstream.name, run).model_dump(mode="json"))

    async def calls(self, request: Request) -> Response:
        try:
            since = self._since(request)
        except BadRequest as exc:
            return JSONResponse(openai_error(str(exc), "invalid_request_error"), 400)
        run = request.path_params.get("run") or request.query_params.get("run")
        records = self.log.records(run=run, since=since)
        return JSONResponse({"calls": [r.model_dump(mode="json") for r in records], "total": len(self.log)})

    async def root(self, request: Request) -> Response:
        """Clients probe the base URL before the first call (Claude Code sends ``HEAD``): the gateway is up."""
        return JSONResponse({"gateway": "assay", "upstream": self.upstream.name})

    async def unknown(self, request: Request) -> Response:
        t0 = time.perf_counter()
        front = "anthropic" if "anthropic-version" in request.headers else "none"
        message = f"the gateway has no endpoint {request.method} {request.url.path}"
        failure = _Failure("not_found", 404, message)
        self._record(request, front, t0, time=_utc_now(), status="not_found", http_status=404, error=message)
        return JSONResponse(_error_body(front, failure), 404, headers=_NO_RETRY)


def build_app(upstream: ChatModel, log: CallLog, *, rewrite_system: bool) -> Starlette:
    """The ASGI app serving ``upstream``, appending every call to ``log``."""
    gw = _Gateway(upstream, log, rewrite_system)

    async def openai_chat(request: Request) -> Response:
        return await gw.chat(request, "openai")

    async def anthropic_messages(request: Request) -> Response:
        return await gw.chat(request, "anthropic")

    async def openai_responses(request: Request) -> Response:
        return await gw.chat(request, "responses")

    routes = []
    for prefix in ("", "/run/{run}"):
        routes += [
            Route(prefix or "/", gw.root, methods=["GET", "HEAD"]),
            Route(f"{prefix}/v1/chat/completions", openai_chat, methods=["POST"]),
            Route(f"{prefix}/v1/responses", openai_responses, methods=["POST"]),
            Route(f"{prefix}/v1/messages", anthropic_messages, methods=["POST"]),
            Route(f"{prefix}/v1/messages/count_tokens", gw.count_tokens, methods=["POST"]),
            Route(f"{prefix}/v1/models", gw.models, methods=["GET"]),
            Route(f"{prefix}/assay/usage", gw.usage, methods=["GET"]),
            Route(f"{prefix}/assay/calls", gw.calls, methods=["GET"]),
        ]
    routes.append(Route("/run/{run}/assay/limit", gw.limit, methods=["POST"]))
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes.append(Route("/{path:path}", gw.unknown, methods=methods))
    return Starlette(routes=routes)
