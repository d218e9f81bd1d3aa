"""``python -m assay.models._llama_serve --model GGUF --port N``: llama.cpp's own server, as assay runs it.

The model is served by llama.cpp's C++ server inside this process (the ``xllamacpp`` wheel: prebuilt, portable),
on a loopback port of its own; a small front on ``--host``/``--port`` passes every request through to it, with
three things on top:

- the installed llama.cpp is checked first (:func:`check_llama_build`): a build that would crash on this CPU
  exits with one line saying how to reinstall it, instead of a segmentation fault on the first request; a file
  llama.cpp cannot load exits with one line naming it;
- a streamed chat completion ends with a usage chunk (``choices: []``, ``usage: {...}``), as OpenAI sends for
  ``stream_options.include_usage``, whether or not the client asked;
- a request that offers tools is served so that the model chooses between a tool call and an answer
  (:mod:`assay.models._llama_tools`).

Requests are served one at a time in arrival order (one slot: a second request waits, none is cut).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["main", "parse_args"]

#: request headers not passed on to llama.cpp (the front sets its own framing)
_HOP = {"host", "connection", "keep-alive", "transfer-encoding", "content-length", "accept-encoding"}
_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="assay-llama-server", description="llama.cpp's server, as assay runs it"
    )
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--alias", default="smollm2", help="the model name the server answers to")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--ctx-size", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--embedding", action="store_true", help="serve /v1/embeddings (mean-pooled) only")
    return parser.parse_args(argv)


def start_native(args: argparse.Namespace) -> Any:
    """llama.cpp's server in this process, on a free loopback port; raises RuntimeError on a bad model file."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_ctx = args.ctx_size
    params.n_parallel = 1  # one slot with the whole window; requests queue for it
    params.port = 0
    params.verbosity = 0
    # generation on half the cores, the prompt on all (as llama-cpp-python did): llama.cpp's own default, every
    # core for both, spins its threads against each other on a shared machine (1 s a token on 2 busy cores)
    cores = os.cpu_count() or 2
    params.cpuparams.n_threads = args.threads or max(1, cores // 2)
    params.cpuparams_batch.n_threads = args.threads or cores
    if args.embedding:
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
    return xllamacpp.Server(params)


def _sse(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


def whole_prompt_usage(data: bytes) -> bytes:
    """A chat response (JSON, or one SSE ``data:`` line) with its usage counting the whole prompt as input.

    llama.cpp reports the part of the prompt its cache held as ``prompt_tokens_details.cached_tokens``, which
    clients take off the input; what it held depends on the requests before (their order, their concurrency),
    so the same call would count differently from run to run. The prompt is counted whole, as before."""
    head, sep, rest = data.partition(b"data: ") if data.startswith(b"data: ") else (b"", b"", data)
    if b'"prompt_tokens_details"' not in rest:
        return data
    body = rest.rstrip()
    try:
        event = json.loads(body)
    except ValueError:
        return data
    if isinstance(event, dict) and isinstance(event.get("usage"), dict):
        event["usage"].pop("prompt_tokens_details", None)
    return head + sep + json.dumps(event, separators=(",", ":")).encode() + rest[len(body) :]


def make_handler(native: Any) -> type[BaseHTTPRequestHandler]:
    """The front's request handler: everything passed through to ``native`` (a :class:`Native`), chat requests
    with tools served by :func:`tool_chat`, streamed chats asked for their usage."""
    from assay.models._llama_tools import NativeError, held_chat, tool_chat, wants_held_json, wants_tools

    class Front(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "assay-llama"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the parent keeps our log
            return

        def do_GET(self) -> None:
            self._relay(b"")

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.split("?")[0] in _CHAT_PATHS:
                try:
                    request = json.loads(body or b"{}")
                except ValueError:
                    request = None
                if isinstance(request, dict):
                    if wants_tools(request):
                        self._native_chat(request, tool_chat)
                        return
                    if wants_held_json(request):
                        self._native_chat(request, held_chat)
                        return
                    if request.get("stream"):
                        request["stream_options"] = {
                            **(request.get("stream_options") or {}),
                            "include_usage": True,
                        }
                        body = json.dumps(request).encode()
            self._relay(body)

        # -- responses ------------------------------------------------------------------------------------
        def _send(self, status: int, data: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _start_stream(self, status: int, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def _write_chunk(self, data: bytes) -> None:
            if data:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

        def _end_stream(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _relay(self, body: bytes) -> None:
            conn = native.connect()
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn.request(self.command, self.path, body or None, headers)
                resp = conn.getresponse()
                content_type = resp.getheader("Content-Type") or "application/json"
                if "text/event-stream" not in content_type:
                    self._send(resp.status, whole_prompt_usage(resp.read()), content_type)
                    return
                self._start_stream(resp.status, content_type)
                while line := resp.readline():  # one event line at a time: each written as it comes
                    self._write_chunk(whole_prompt_usage(line))
                self._end_stream()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client left; closing ours stops the generation
            finally:
                conn.close()

        def _native_chat(self, request: dict[str, Any], serve: Any) -> None:
            """A chat served on llama.cpp's native endpoints (:func:`tool_chat` or :func:`held_chat`)."""
            for unused in ("functions", "function_call", "stream_options"):
                request.pop(unused, None)
            messages = request.pop("messages", None) or []
            try:
                out = serve(native, messages, **request)
                if isinstance(out, dict):
                    self._send(200, json.dumps(out).encode())
                    return
                chunks: Iterator[dict[str, Any]] = out
                first = next(chunks, None)  # a refusal (context overflow) comes before any chunk
            except NativeError as exc:
                self._send(exc.status, exc.body)
                return
            except Exception as exc:  # a bug of this front: the client gets an answer, the log the traceback
                traceback.print_exc()
                error = {
                    "error": {"code": 500, "message": f"assay's llama.cpp front: {type(exc).__name__}: {exc}"}
                }
                self._send(500, json.dumps(error).encode())
                return
            try:
                self._start_stream(200, "text/event-stream")
                if first is not None:
                    self._write_chunk(_sse(first))
                for chunk in chunks:
                    self._write_chunk(_sse(chunk))
                self._write_chunk(b"data: [DONE]\n\n")
                self._end_stream()
            except NativeError as exc:
                self._write_chunk(
                    _sse({"error": {"code": exc.status, "message": exc.body.decode(errors="replace")}})
                )
                self._end_stream()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

    return Front


def main(argv: list[str] | None = None) -> None:
    from assay.errors import AssayError
    from assay.models._llama_build import check_llama_build
    from assay.models._llama_tools import Native

    args = parse_args(argv)
    try:
        check_llama_build()
    except AssayError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    try:
        server = start_native(args)
    except RuntimeError:
        print(
            f"error: llama.cpp could not load {args.model}: not a usable GGUF model (truncated or corrupt?)",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(1) from None
    native = Native(server.listening_address, args.alias)
    front = ThreadingHTTPServer((args.host, args.port), make_handler(native))
    front.daemon_threads = True
    print(
        f"assay-llama-server: {args.alias} on http://{args.host}:{args.port}/v1", file=sys.stderr, flush=True
    )
    try:
        front.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        front.server_close()


if __name__ == "__main__":
    main()
