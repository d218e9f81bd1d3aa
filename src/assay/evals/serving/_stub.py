"""A stub OpenAI-compatible streaming server with exact, known delays: assay's test double for serving.

Each streamed answer sends its first token ``ttft_s`` after the request arrived and every further token
``itl_s`` after the previous one, scheduled against absolute times so lateness never accumulates. With
both delays at zero the whole reply is written at once (a "fast stub" that measures the client's own
overhead). The server records when each request arrived and when each token was written.

Run it alone (for ``benchmarks/client_overhead.py``)::

    python -m assay.evals.serving._stub --port 8123 --tokens 32
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["StubConfig", "StubServer"]

_perf = time.perf_counter
#: how early a delayed send is woken, to be exact despite the event loop's millisecond wake-ups
_EARLY_S = 0.002


@dataclass
class StubConfig:
    ttft_s: float = 0.0
    itl_s: float = 0.0
    #: tokens per answer; a request's max_tokens lowers it
    tokens: int = 32
    #: report token usage in the stream (when the request asks for it) and in JSON answers
    usage: bool = True
    #: what /props and /v1/models report: llama.cpp style, vLLM style, llama-cpp-python style (no usage in
    #: streams, /extras/tokenize/count, the window named only when a prompt is refused) or nothing
    flavor: Literal["llamacpp", "vllm", "llama-cpp-python", "plain"] = "llamacpp"
    n_ctx: int = 4096
    model: str = "stub"
    #: answer every request with HTTP 500 (to test error accounting)
    fail: bool = False
    #: answer every Nth completion request (the Nth, 2Nth, ...) with HTTP 500; 0: never
    fail_every: int = 0
    #: requests served at once (a queue in front of N slots); None: every request at once
    parallel: int | None = None
    #: fixed reply text (cycled per token); default "tok0 tok1 ..."
    reply: list[str] | None = None
    #: with zero delays, still write each token separately (one event-loop turn apart) instead of at once
    per_token_writes: bool = False


@dataclass
class StubRecord:
    arrived: float
    token_times: list[float] = field(default_factory=list)
    prompt: str = ""
    #: the request's ``response_format``, as sent
    response_format: dict[str, Any] | None = None


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class _StubProtocol(asyncio.Protocol):
    def __init__(self, server: StubServer) -> None:
        self.server = server
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        t = _perf()
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buf[:end]).decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if len(self.buf) < end + 4 + length:
                return
            body = bytes(self.buf[end + 4 : end + 4 + length])
            del self.buf[: end + 4 + length]
            method, path = head.split(" ", 2)[:2]
            self.server._handle(self, method, path, body, t)

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)


class StubServer:
    """The stub on a loopback port, served by its own event loop in a background thread."""

    def __init__(self, config: StubConfig | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config or StubConfig()
        self.host = host
        self.port = port
        self.records: list[StubRecord] = []
        self._completions = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._fast_cache: dict[tuple[int, bool, bool], bytes] = {}
        self._proc: subprocess.Popen[str] | None = None
        self._slots = [0.0] * (self.config.parallel or 0)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- lifecycle -------------------------------------------------------------------------------------
    async def serve(self) -> None:
        """Listen on the current loop (until cancelled)."""
        self._loop = asyncio.get_running_loop()
        self._server = await self._loop.create_server(lambda: _StubProtocol(self), self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    def start(self) -> StubServer:
        ready = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self.serve())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=main, name="assay-stub", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("stub server did not start")
        return self

    def start_process(self) -> StubServer:
        """Serve from a child process instead (no GIL shared with the client being measured)."""
        config = json.dumps(dataclasses.asdict(self.config))
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from assay.evals.serving._stub import main; main(sys.argv[1:])",
                "--host",
                self.host,
                "--port",
                str(self.port),
                "--config",
                config,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()
        if not line.startswith("listening "):
            self._proc.kill()
            raise RuntimeError(f"stub process did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])
        return self

    def fetch_records(self) -> list[StubRecord]:
        """The records, also from a stub in a child process (``GET /_stub/records``)."""
        if self._proc is None:
            return list(self.records)
        with urllib.request.urlopen(f"{self.base_url}/_stub/records", timeout=10) as resp:
            return [StubRecord(**r) for r in json.loads(resp.read())]

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)
            self._proc = None
            return
        loop = self._loop
        if loop is None or self._thread is None:
            return

        def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            loop.stop()

        loop.call_soon_threadsafe(shutdown)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- requests --------------------------------------------------------------------------------------
    def _handle(self, proto: _StubProtocol, method: str, path: str, body: bytes, t: float) -> None:
        cfg = self.config
        path = path.split("?", 1)[0]
        if method == "GET":
            if path == "/props" and cfg.flavor == "llamacpp":
                doc: Any = {"default_generation_settings": {"n_ctx": cfg.n_ctx}, "total_slots": 1}
            elif path == "/v1/models":
                owner = "me" if cfg.flavor == "llama-cpp-python" else "assay-stub"
                entry: dict[str, Any] = {"id": cfg.model, "object": "model", "owned_by": owner}
                if cfg.flavor == "vllm":
                    entry["max_model_len"] = cfg.n_ctx
                doc = {"object": "list", "data": [entry]}
            elif path == "/_stub/records":
                doc = [dataclasses.asdict(r) for r in self.records]
            elif path == "/health":
                doc = {"status": "ok"}
            else:
                self._send_json(proto, 404, {"error": {"message": f"no route {path}"}})
                return
            self._send_json(proto, 200, doc)
            return
        if path == "/extras/tokenize/count" and cfg.flavor == "llama-cpp-python":
            text = json.loads(body or b"{}").get("input", "")
            self._send_json(proto, 200, {"count": 1 + len(text.split())})  # BOS + one token a word
            return
        if path not in ("/v1/chat/completions", "/v1/completions"):
            self._send_json(proto, 404, {"error": {"message": f"no route {path}"}})
            return
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            self._send_json(proto, 400, {"error": {"message": "bad json"}})
            return
        self._completions += 1
        if cfg.fail or (cfg.fail_every and self._completions % cfg.fail_every == 0):
            self._send_json(proto, 500, {"error": {"message": "stub told to fail"}})
            return
        chat = path == "/v1/chat/completions"
        n = cfg.tokens
        if isinstance(req.get("max_tokens"), int):
            n = max(1, min(n, req["max_tokens"]))
        with_usage = cfg.usage and bool((req.get("stream_options") or {}).get("include_usage"))
        prompt = _prompt_text(req)
        if cfg.flavor == "llama-cpp-python":
            with_usage = False
            words = 1 + len(prompt.split())
            if words >= cfg.n_ctx:
                msg = f"This model's maximum context length is {cfg.n_ctx} tokens, however you requested {words} tokens"
                self._send_json(proto, 400, {"error": {"message": msg, "code": "context_length_exceeded"}})
                return
        rf = req.get("response_format")
        record = StubRecord(arrived=t, prompt=prompt, response_format=rf if isinstance(rf, dict) else None)
        self.records.append(record)
        prompt_tokens = max(1, len(prompt.split()))
        begin = t
        if cfg.parallel:
            # the earliest free slot serves this request from when it frees up
            slot = min(range(len(self._slots)), key=self._slots.__getitem__)
            begin = max(t, self._slots[slot])
            self._slots[slot] = begin + cfg.ttft_s + cfg.itl_s * (n - 1)
        if not req.get("stream"):
            text = "".join(self._piece(i) for i in range(n))
            choice: dict[str, Any] = {"index": 0, "finish_reason": "length"}
            if chat:
                choice["message"] = {"role": "assistant", "content": text}
            else:
                choice["text"] = text
            doc = {"id": "stub", "object": "chat.completion", "model": cfg.model, "choices": [choice]}
            if cfg.usage:
                doc["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": n}
            loop = asyncio.get_running_loop()
            delay = begin - t + cfg.ttft_s + cfg.itl_s * (n - 1)
            loop.call_at(loop.time() + delay, self._send_json, proto, 200, doc)
            return
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        if cfg.ttft_s <= 0 and cfg.itl_s <= 0 and not cfg.per_token_writes:
            key = (n, chat, with_usage)
            reply = self._fast_cache.get(key)
            if reply is None:
                events = [self._event(i, chat) for i in range(n)]
                events.append(self._tail(chat, n, prompt_tokens if with_usage else None))
                reply = head + b"".join(_chunk(e) for e in events) + b"0\r\n\r\n"
                if cfg.reply is None:
                    self._fast_cache[key] = reply
            record.token_times.extend([_perf()] * n)
            proto.write(reply)
            return
        proto.write(head + _chunk(self._role_event(chat)))
        loop = asyncio.get_running_loop()
        if cfg.ttft_s <= 0 and cfg.itl_s <= 0:
            usage_prompt = prompt_tokens if with_usage else None

            def next_token(i: int) -> None:
                self._send_token(proto, record, i, n, chat, usage_prompt)
                if i + 1 < n:
                    loop.call_soon(next_token, i + 1)

            loop.call_soon(next_token, 0)
            return
        usage_prompt = prompt_tokens if with_usage else None
        for i in range(n):
            self._at(
                begin + cfg.ttft_s + cfg.itl_s * i, self._send_token, proto, record, i, n, chat, usage_prompt
            )

    def _at(self, when: float, fn: Any, *args: Any) -> None:
        """Call ``fn`` at ``perf_counter() == when``, not up to a millisecond late.

        The event loop wakes with millisecond granularity (epoll), so the callback is scheduled 2 ms early
        and waits out the rest with short sleeps that release the GIL.
        """
        loop = asyncio.get_running_loop()

        def fire() -> None:
            while _perf() < when - 0.0002:
                time.sleep(0.0001)
            while _perf() < when:
                pass
            fn(*args)

        loop.call_at(loop.time() + (when - _perf()) - _EARLY_S, fire)

    def _send_token(
        self, proto: _StubProtocol, record: StubRecord, i: int, n: int, chat: bool, usage_prompt: int | None
    ) -> None:
        data = _chunk(self._event(i, chat))
        if i == n - 1:
            data += _chunk(self._tail(chat, n, usage_prompt)) + b"0\r\n\r\n"
        record.token_times.append(_perf())  # before the write: a client may finish before we return
        proto.write(data)

    def _piece(self, i: int) -> str:
        reply = self.config.reply
        return reply[i % len(reply)] if reply else f"tok{i} "

    def _event(self, i: int, chat: bool) -> bytes:
        piece = self._piece(i)
        choice = {"index": 0, "delta": {"content": piece}} if chat else {"index": 0, "text": piece}
        return b"data: " + json.dumps({"choices": [choice], "model": self.config.model}).encode() + b"\n\n"

    def _role_event(self, chat: bool) -> bytes:
        choice = (
            {"index": 0, "delta": {"role": "assistant", "content": ""}} if chat else {"index": 0, "text": ""}
        )
        return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"

    def _tail(self, chat: bool, n: int, usage_prompt: int | None) -> bytes:
        final: dict[str, Any] = {"index": 0, "finish_reason": "length"}
        final.update({"delta": {}} if chat else {"text": ""})
        out = b"data: " + json.dumps({"choices": [final]}).encode() + b"\n\n"
        if usage_prompt is not None:
            usage = {"prompt_tokens": usage_prompt, "completion_tokens": n, "total_tokens": usage_prompt + n}
            out += b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n"
        return out + b"data: [DONE]\n\n"

    def _send_json(self, proto: _StubProtocol, status: int, doc: Any) -> None:
        body = json.dumps(doc).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}[status]
        proto.write(
            b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (status, reason.encode(), len(body), body)
        )


def _prompt_text(req: dict[str, Any]) -> str:
    if "messages" in req:
        return "\n".join(str(m.get("content") or "") for m in req["messages"] if isinstance(m, dict))
    prompt = req.get("prompt", "")
    return prompt if isinstance(prompt, str) else json.dumps(prompt)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="assay's stub OpenAI-compatible streaming server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--ttft-ms", type=float, default=0.0)
    parser.add_argument("--itl-ms", type=float, default=0.0)
    parser.add_argument(
        "--per-token-writes", action="store_true", help="one write per token even without delays"
    )
    parser.add_argument("--config", default=None, help="a StubConfig as JSON (overrides the other flags)")
    args = parser.parse_args(argv)
    config = (
        StubConfig(**json.loads(args.config))
        if args.config
        else StubConfig(
            ttft_s=args.ttft_ms / 1000,
            itl_s=args.itl_ms / 1000,
            tokens=args.tokens,
            per_token_writes=args.per_token_writes,
        )
    )

    async def run() -> None:
        stub = StubServer(config, args.host, args.port)
        await stub.serve()
        print(f"listening {stub.base_url}", flush=True)
        await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
