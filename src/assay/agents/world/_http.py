"""The scenario's world over loopback HTTP MCP, served from the process that runs the attempt.

    async with WorldServer(ReferenceHarness(documents=index, memory=db)) as server:
        world = World(workdir=work, server=server)   # harnesses then write {"type": "http", "url": ...}

One server per attempt, its tools the harness's (the index already in memory, the store already open), so an
agent run starts no process for it. Each run gets its own URL (``/mcp/<token>``), which carries what the run's
calls need: the user's message a memory call is grounded in, and where the calls are logged. The transport is
MCP's streamable HTTP in its plain form: a POSTed JSON-RPC request is answered with one JSON response, a
notification with 202; there is no event stream (GET is 405).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.agents._harness import RunSpec
from assay.agents.world._rpc import answer_rpc

__all__ = ["WorldServer"]

_MAX_BODY = 64 * 1024 * 1024


@dataclass
class _Run:
    prompt: str
    log: Path | None


class WorldServer:
    """A loopback HTTP MCP server of ``harness``'s tools (a ``ReferenceHarness``) over ``workdir``."""

    def __init__(self, harness: Any, workdir: Path) -> None:
        self.harness = harness
        self.spec = RunSpec(workdir=workdir.resolve())
        self._runs: dict[str, _Run] = {}
        self._server: asyncio.base_events.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self.base_url = ""

    async def __aenter__(self) -> WorldServer:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/mcp"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(
                self._open
            ):  # an agent's kept-alive connection ends here, not at the loop's shutdown
                writer.close()
            await self._server.wait_closed()
            self._server = None
        await self.harness.close()

    def run_url(self, prompt: str, log: Path | None = None) -> str:
        """A URL of its own for one agent run: its calls are grounded in ``prompt`` and logged to ``log``."""
        token = secrets.token_urlsafe(16)
        self._runs[token] = _Run(prompt, log)
        return f"{self.base_url}/{token}"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, path, body = request
                status, payload = await self._handle(method, path, body)
                _write_response(writer, status, payload)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            # The loop is shutting down with this connection open. Ending quietly is all there is to do, and
            # re-raising makes Python 3.11's stream callback print a traceback (``task.exception()`` on a cancelled
            # task raises).
            pass
        finally:
            self._open.discard(writer)
            writer.close()

    async def _handle(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any] | None]:
        run = self._runs.get(path.rstrip("/").rsplit("/", 1)[-1]) if path.startswith("/mcp/") else None
        if run is None:
            return 404, {"error": "no such run"}
        if method != "POST":
            return 405, None
        try:
            message = json.loads(body)
        except json.JSONDecodeError as exc:
            return 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": str(exc)}}
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            return 202, None  # a notification or a response: accepted, nothing to answer
        answer = await answer_rpc(self.harness, self.spec, message, run.prompt, run.log)
        return 200, answer


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while (size := int((await reader.readline()).strip() or b"0", 16)) > 0:
            body += await reader.readexactly(size)
            await reader.readline()
            if len(body) > _MAX_BODY:
                raise ValueError("request too large")
        await reader.readline()
    else:
        length = int(headers.get("content-length") or 0)
        if length > _MAX_BODY:
            raise ValueError("request too large")
        body = await reader.readexactly(length)
    return method, path, body


_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}


def _write_response(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any] | None) -> None:
    body = b"" if payload is None else json.dumps(payload).encode()
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", f"Content-Length: {len(body)}"]
    if payload is not None:
        head.append("Content-Type: application/json")
    if status == 405:
        head.append("Allow: POST")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
