"""MCP tools of the reference agent: the tools of the MCP servers a profile names (``profile/mcp.json``) or the
``mcp_servers`` option gives, each ``{name: {command, args, env}}``, run over stdio with the ``mcp`` SDK.

The servers start on the first turn (their tools are listed then and offered as ``<server>__<tool>``) and end
on :meth:`McpHub.close`. One task owns every server's connection, so turns may run in any task of the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.agents.reference._tools import ToolOutcome
from assay.errors import ConfigError

__all__ = ["McpHub", "McpServer", "McpTool", "load_mcp_servers"]

SEP = "__"
_NAME = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
_TOOL = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: seconds a server gets to start and list its tools
START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class McpServer:
    name: str
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class McpTool:
    """A server's tool as the model is offered it."""

    name: str  # <server>__<tool>
    server: str
    tool: str
    description: str
    parameters: dict[str, Any]


def _server(name: Any, raw: Any, where: str, path: str | None) -> McpServer:
    def bad(why: str) -> ConfigError:
        return ConfigError(f"{where}: MCP server {name!r}: {why}", path=path)

    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise bad("the name should be letters, digits, '-' and single '_' (it prefixes the tool names)")
    if not isinstance(raw, dict):
        raise bad("should be an object {command, args, env}")
    unknown = sorted(set(raw) - {"command", "args", "env"})
    if unknown:
        raise bad(f"unknown key(s) {', '.join(unknown)} (known: command, args, env)")
    command, args, env = raw.get("command"), raw.get("args", []), raw.get("env", {})
    if not isinstance(command, str) or not command.strip():
        raise bad("command should be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise bad("args should be a list of strings")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise bad("env should be an object of strings")
    return McpServer(name, command, list(args), dict(env))


def load_mcp_servers(profile_dir: Path, option: Any = None) -> list[McpServer]:
    """The servers of the ``mcp_servers`` option, or else of ``profile_dir/mcp.json`` (none if neither)."""
    if option is not None:
        where, path, raw = "mcp_servers option", None, option
    else:
        file = profile_dir / "mcp.json"
        if not file.is_file():
            return []
        where, path = "mcp.json", str(file)
        try:
            raw = json.loads(file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"mcp.json is not JSON: {exc}", path=path) from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: should be an object {{name: {{command, args, env}}}}", path=path)
    return [_server(name, spec, where, path) for name, spec in raw.items()]


def _text(result: Any) -> str:
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')}]")
    if not parts and getattr(result, "structured_content", None) is not None:
        parts.append(json.dumps(result.structured_content, sort_keys=True))
    return "\n".join(parts)


class McpHub:
    """The running servers: started once with :meth:`start`, tools called with :meth:`call`."""

    def __init__(self, servers: list[McpServer]) -> None:
        self.servers = servers
        self.tools: dict[str, McpTool] = {}
        self._sessions: dict[str, Any] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._error: BaseException | None = None

    async def start(self, cwd: Path) -> list[McpTool]:
        """Start every server (once) and list its tools; a ConfigError naming the server if one cannot."""
        if self._task is None:
            self._task = asyncio.create_task(self._own(cwd))
            await self._ready.wait()
        if self._error is not None:
            raise self._error
        return list(self.tools.values())

    async def _own(self, cwd: Path) -> None:
        try:
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client
        except ImportError as exc:
            self._error = ConfigError(
                f"MCP servers need the mcp package (pip install 'assay[agents]'): {exc}"
            )
            self._ready.set()
            return
        async with contextlib.AsyncExitStack() as stack:
            for server in self.servers:
                # the server's stderr, shown when it fails to start; the exit stack closes it
                log = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))  # noqa: SIM115
                try:
                    params = StdioServerParameters(
                        command=server.command, args=server.args, env=server.env or None, cwd=cwd
                    )
                    async with asyncio.timeout(START_TIMEOUT_S):
                        read, write = await stack.enter_async_context(stdio_client(params, errlog=log))
                        session = await stack.enter_async_context(ClientSession(read, write))
                        await session.initialize()
                        listed = await session.list_tools()
                except Exception as exc:
                    log.seek(0)
                    tail = log.read()[-1500:].strip()
                    why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                    self._error = ConfigError(
                        f"MCP server {server.name!r} ({server.command}) did not start: {why}"
                        + (f"\nits stderr:\n{tail}" if tail else "")
                    )
                    break
                self._sessions[server.name] = session
                for tool in listed.tools:
                    if not _TOOL.fullmatch(f"{server.name}{SEP}{tool.name}"):
                        self._error = ConfigError(
                            f"MCP server {server.name!r}: tool name {tool.name!r} cannot be offered"
                            " (letters, digits, '_' and '-'; at most 64 with the server's name)"
                        )
                        break
                    name = f"{server.name}{SEP}{tool.name}"
                    schema = dict(tool.input_schema or {"type": "object", "properties": {}})
                    self.tools[name] = McpTool(name, server.name, tool.name, tool.description or "", schema)
                if self._error is not None:
                    break
            self._ready.set()
            if self._error is None:
                await self._stop.wait()
        self._sessions.clear()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        tool = self.tools[name]
        result = await self._sessions[tool.server].call_tool(tool.tool, arguments)
        return ToolOutcome(_text(result), status="error" if result.is_error else "ok")

    async def close(self) -> None:
        """End every server process (the SDK closes stdin, then terminates what is left)."""
        if self._task is None:
            return
        self._stop.set()
        with contextlib.suppress(Exception):
            await self._task
        self._task = None
        self.tools.clear()
        self._ready, self._stop, self._error = asyncio.Event(), asyncio.Event(), None
