"""``python -m assay.agents.world``: the scenario's world served over stdio MCP (see :mod:`._world`).

A small JSON-RPC server of its own (newline-delimited messages: ``initialize``, ``ping``, ``tools/list``,
``tools/call``), so an agent run that starts it pays for no SDK import; the tools are the reference agent's,
called through :meth:`ReferenceHarness.call_tool`, one at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO

from assay.agents._harness import RunSpec
from assay.errors import AssayError, ConfigError

__all__ = ["PROTOCOL_VERSIONS", "main"]

#: the MCP revisions this server speaks, newest first (a client asking for another gets the newest)
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m assay.agents.world", description=__doc__)
    p.add_argument("--workdir", required=True, type=Path)
    p.add_argument(
        "--documents", type=Path, help="a saved document index folder (signed by FOLDER.key if there)"
    )
    p.add_argument("--memory", type=Path, help="a memory database file")
    p.add_argument("--embedder", help="the embedder the index and the memory store were built with")
    p.add_argument(
        "--prompt-file", type=Path, help="the run's user message (memory calls are grounded in it)"
    )
    p.add_argument("--log", type=Path, help="append each call's record here (JSON lines)")
    return p


def _harness(args: argparse.Namespace) -> Any:
    from assay.agents.reference.harness import ReferenceHarness
    from assay.embed import get_embedder

    embedder = get_embedder(args.embedder) if args.embedder else None
    documents = None
    if args.documents is not None:
        from assay.rag import DocumentIndex

        if embedder is None:
            raise ConfigError("--documents needs --embedder (the one the index was built with)")
        key_file = args.documents.with_name(args.documents.name + ".key")  # beside the index, when given one
        key = key_file.read_bytes() if key_file.is_file() else None
        documents = DocumentIndex.load(args.documents, embedder, key=key, cache_dir=None)
    return ReferenceHarness(documents=documents, memory=args.memory, memory_embedder=embedder)


class _World:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.harness = _harness(args)
        self.prompt = args.prompt_file.read_text(encoding="utf-8") if args.prompt_file else ""
        self.spec = RunSpec(workdir=args.workdir.resolve())

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
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
            tools = self.harness.tools
            return {
                "tools": [
                    {"name": t.name, "description": t.description, "inputSchema": t.parameters} for t in tools
                ]
            }
        if method == "tools/call":
            name, arguments = str(params.get("name", "")), params.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise _Bad(-32602, "arguments should be an object")
            record, text = await self.harness.call_tool(name, arguments, self.spec, self.prompt, "world")
            if self.args.log is not None:
                with self.args.log.open("a", encoding="utf-8") as fh:
                    fh.write(record.model_dump_json() + "\n")
            return {"content": [{"type": "text", "text": text}], "isError": record.status != "ok"}
        raise _Bad(-32601, f"method not found: {method}")


class _Bad(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


async def _serve(world: _World, wire: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def send(message: dict[str, Any]) -> None:
        wire.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        wire.flush()

    while line := await reader.readline():
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            send({"id": None, "error": {"code": -32700, "message": f"not JSON: {exc}"}})
            continue
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue  # a notification (initialized, cancelled) or a response: nothing to answer
        try:
            params = message.get("params") or {}
            send({"id": message["id"], "result": await world.answer(str(message["method"]), params)})
        except _Bad as exc:
            send({"id": message["id"], "error": {"code": exc.code, "message": str(exc)}})
        except Exception as exc:  # a tool that broke: the caller's error, the server goes on
            send({"id": message["id"], "error": {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}})


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.workdir.is_dir():
        print(f"--workdir {args.workdir}: not a folder", file=sys.stderr)
        return 1
    # the protocol owns stdout: anything else printed (a library's notice) goes to stderr
    wire = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        world = _World(args)
    except AssayError as exc:
        print(f"assay world: {exc}", file=sys.stderr)
        return 1

    async def run() -> None:
        try:
            await _serve(world, wire)
        finally:
            await world.harness.close()

    asyncio.run(run())
    return 0
