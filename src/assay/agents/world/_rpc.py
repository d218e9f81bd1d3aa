"""The world's MCP methods as JSON-RPC: one request in, one response out, for the stdio and HTTP servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.agents._harness import RunSpec

__all__ = ["PROTOCOL_VERSIONS", "answer_rpc"]

#: the MCP revisions the world speaks, newest first (a client asking for another gets the newest)
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")


class _Bad(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


async def _result(
    harness: Any, spec: RunSpec, method: str, params: dict[str, Any], prompt: str, log: Path | None
) -> dict[str, Any]:
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "assay", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        tools = harness.tools
        return {
            "tools": [
                {"name": t.name, "description": t.description, "inputSchema": t.parameters} for t in tools
            ]
        }
    if method == "tools/call":
        name, arguments = str(params.get("name", "")), params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise _Bad(-32602, "arguments should be an object")
        record, text = await harness.call_tool(name, arguments, spec, prompt, "world")
        if log is not None:
            with log.open("a", encoding="utf-8") as fh:
                fh.write(record.model_dump_json() + "\n")
        return {"content": [{"type": "text", "text": text}], "isError": record.status != "ok"}
    raise _Bad(-32601, f"method not found: {method}")


async def answer_rpc(
    harness: Any, spec: RunSpec, message: dict[str, Any], prompt: str = "", log: Path | None = None
) -> dict[str, Any]:
    """The response to the JSON-RPC request ``message`` (it has an ``id``): ``initialize``, ``ping``,
    ``tools/list`` or ``tools/call`` of ``harness``'s tools (a ``ReferenceHarness``); each call's record is
    appended to ``log``."""
    params = message.get("params") or {}
    try:
        result = await _result(harness, spec, str(message["method"]), params, prompt, log)
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}
    except _Bad as exc:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": exc.code, "message": str(exc)}}
    except Exception as exc:  # a tool that broke: the caller's error, the server goes on
        error = {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
