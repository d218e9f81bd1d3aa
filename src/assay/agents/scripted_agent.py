"""A scripted external agent (a test double): replays a script's replies, calling its tools through MCP.

    python -P .../assay/agents/scripted_agent.py --script replies.json --mcp-config mcp.json "the user's message"
    python -P .../assay/agents/scripted_agent.py --script replies.json -p "..." --output-format stream-json ...

It imports nothing of assay (the standard library only), so a run costs a bare interpreter's start: run it by
its path (``-P``: its folder is not put on ``sys.path``), not with ``-m``, which would import ``assay.agents``.

The script is ``{"replies": [{"tool_calls": [{name, arguments}]} | {"text": ...}, ...]}``, the replies a
scripted model would give, used one per step in order across every run of the conversation (the position is
kept in ``<script>.cursor``), as :class:`~assay.models.scripted.ScriptedModel` gives them to the reference
agent. A reply with tool calls has each called on the ``assay`` server of the MCP config (the scenario's
world), then the next reply is taken; a reply without is the answer. ``--max-turns`` caps the steps.

Two ways out, one per harness path: plain (the answer on stdout, for the ``command`` harness) and Claude Code's
``-p ... --output-format stream-json`` (the events Claude Code prints, for the ``claude-code`` harness, which
runs this program as its ``claude`` binary and passes its own flags).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

__all__ = ["STEPS_CUT_OFF", "main"]

#: Claude Code's answer to a call of a tool it was not given
NO_SUCH_TOOL = "Error: No such tool available:"
#: what it writes to stderr when ``--max-turns`` stopped it (the ``assay-world`` parser reads it)
STEPS_CUT_OFF = "stopped: the step cap (--max-turns) was reached"

MODEL = "scripted-external-agent"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m assay.agents.scripted_agent", description=__doc__)
    p.add_argument("prompt", nargs="?", default=None)
    p.add_argument("--script", required=True, type=Path)
    p.add_argument("--mcp-config", type=Path)
    p.add_argument("-p", "--print", dest="print_prompt", default=None)
    p.add_argument("--output-format", default="text", choices=["text", "stream-json"])
    p.add_argument("--max-turns", type=int, default=None)
    p.add_argument("--resume", default=None)
    p.add_argument("--model", default=None)
    return p


class _Out:
    """Claude Code's stream-json events, or nothing but the answer."""

    def __init__(self, stream: bool, session: str, model: str) -> None:
        self.stream, self.session, self.model = stream, session, model
        self.messages = 0

    def emit(self, event: dict[str, Any]) -> None:
        if self.stream:
            print(json.dumps({**event, "session_id": self.session}), flush=True)

    def assistant(self, content: list[dict[str, Any]]) -> None:
        self.messages += 1
        usage = {"input_tokens": 0, "output_tokens": 0}
        message = {"id": f"msg-{self.messages}", "model": self.model, "content": content, "usage": usage}
        self.emit({"type": "assistant", "message": message})


async def _replay(args: argparse.Namespace, prompt: str, out: _Out) -> tuple[str, str | None]:
    """Replay from the cursor until an answer: (answer, the cut-off or error subtype or None)."""
    replies: list[dict[str, Any]] = json.loads(args.script.read_text(encoding="utf-8"))["replies"]
    cursor_file = args.script.with_name(args.script.name + ".cursor")
    cursor = int(cursor_file.read_text()) if cursor_file.is_file() else 0
    session: _Client | None = None
    steps = 0
    async with contextlib.AsyncExitStack() as stack:
        try:
            while True:
                if (
                    args.max_turns and steps >= args.max_turns
                ):  # 0: no cap (the command harness's {max_steps})
                    return "", "error_max_turns"
                if cursor >= len(replies):
                    return f"the script has no reply left (used {len(replies)})", "error_during_execution"
                reply = replies[cursor]
                cursor += 1
                steps += 1
                calls = reply.get("tool_calls") or []
                text = str(reply.get("text") or "")
                if not calls:
                    out.assistant([{"type": "text", "text": text}])
                    return text, None
                if session is None:
                    session = await _connect(stack, args.mcp_config)
                uses = [{"id": f"toolu_{uuid.uuid4().hex[:12]}", **c} for c in calls]
                content = [{"type": "text", "text": text}] if text else []
                content += [
                    {
                        "type": "tool_use",
                        "id": u["id"],
                        "name": f"mcp__assay__{u['name']}",
                        "input": u["arguments"],
                    }
                    for u in uses
                ]
                out.assistant(content)
                for use in uses:
                    if out.stream and use["name"] not in await session.tools():  # as Claude Code answers it
                        body, failed = (
                            f"<tool_use_error>{NO_SUCH_TOOL} mcp__assay__{use['name']}</tool_use_error>",
                            True,
                        )
                    else:
                        body, failed = await session.call_tool(use["name"], use.get("arguments") or {})
                    block = {"type": "tool_result", "tool_use_id": use["id"], "content": body}
                    if failed:
                        block["is_error"] = True
                    out.emit({"type": "user", "message": {"role": "user", "content": [block]}})
        finally:
            cursor_file.write_text(str(cursor))


class _Client:
    """A minimal MCP client over stdio (newline-delimited JSON-RPC): initialize, then tools/call."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self._tools: set[str] | None = None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the MCP server closed the connection (exit {await self.proc.wait()})")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error'].get('message')}")
                return dict(answer["result"])

    async def tools(self) -> set[str]:
        if self._tools is None:
            self._tools = {
                str(t.get("name")) for t in (await self.request("tools/list", {})).get("tools") or []
            }
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        result = await self.request("tools/call", {"name": name, "arguments": arguments})
        text = "\n".join(str(b.get("text", "")) for b in result.get("content") or [] if isinstance(b, dict))
        return text, bool(result.get("isError"))


class _HttpClient(_Client):
    """The same over MCP's streamable HTTP, in its plain form (one JSON response a request)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.next_id = 0
        self._tools = None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        answer = self._post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error'].get('message')}")
        return dict(answer["result"])

    def _post(self, message: dict[str, Any]) -> dict[str, Any]:
        import urllib.request

        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        request = urllib.request.Request(self.url, json.dumps(message).encode(), headers, method="POST")
        with urllib.request.urlopen(request, timeout=600) as response:
            body = response.read()
        return json.loads(body) if body else {}


async def _connect(stack: contextlib.AsyncExitStack, config: Path | None) -> _Client:
    if config is None:
        raise SystemExit("scripted agent: a tool call, and no --mcp-config to reach the tools by")
    server = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["assay"]
    if server.get("type") == "http":
        client: _Client = _HttpClient(server["url"])
        await client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "scripted-agent", "version": "1"},
            },
        )
        return client
    proc = await asyncio.create_subprocess_exec(
        server["command"],
        *server["args"],
        env={**os.environ, **server.get("env", {})},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )

    async def stop() -> None:
        assert proc.stdin is not None
        proc.stdin.close()  # the server ends at the end of its input
        try:
            await asyncio.wait_for(proc.wait(), timeout=10)
        except TimeoutError:
            proc.kill()
            await proc.wait()

    stack.push_async_callback(stop)
    client = _Client(proc)
    await client.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "scripted-agent", "version": "1"},
        },
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    return client


def main(argv: list[str] | None = None) -> int:
    args, _ = _parser().parse_known_args(argv)  # Claude Code's other flags (--verbose, --allowedTools, ...)
    prompt = args.print_prompt if args.print_prompt is not None else args.prompt
    if prompt is None:
        prompt = sys.stdin.read()
    stream = args.output_format == "stream-json"
    out = _Out(stream, args.resume or uuid.uuid4().hex, args.model or MODEL)
    out.emit({"type": "system", "subtype": "init", "model": out.model, "tools": []})
    try:
        answer, failed = asyncio.run(_replay(args, prompt, out))
    except Exception as exc:  # one line naming what broke (the SDK raises exception groups)
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]  # type: ignore[assignment]
        print(f"scripted agent: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if stream:
        out.emit(
            {
                "type": "result",
                "subtype": failed or "success",
                "is_error": failed is not None,
                "result": answer,
                "num_turns": out.messages,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
        )
        return 0 if failed in (None, "error_max_turns") else 1
    if failed == "error_max_turns":
        print(STEPS_CUT_OFF, file=sys.stderr)
        return 0
    if failed is not None:
        print(answer, file=sys.stderr)
        return 1
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
