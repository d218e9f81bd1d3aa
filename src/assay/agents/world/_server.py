"""``python -m assay.agents.world``: the scenario's world served over stdio MCP (see :mod:`._world`).

A small JSON-RPC server of its own (newline-delimited messages, :mod:`._rpc`), so an agent run that starts it
pays for no SDK import; the tools are the reference agent's, called through :meth:`ReferenceHarness.call_tool`,
one at a time.
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
from assay.agents.world._rpc import answer_rpc
from assay.errors import AssayError, ConfigError

__all__ = ["main"]


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


async def _serve(harness: Any, spec: RunSpec, prompt: str, log: Path | None, wire: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def send(message: dict[str, Any]) -> None:
        wire.write(json.dumps(message).encode() + b"\n")
        wire.flush()

    while line := await reader.readline():
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"not JSON: {exc}"}})
            continue
        if isinstance(message, dict) and "method" in message and "id" in message:
            send(await answer_rpc(harness, spec, message, prompt, log))
        # else a notification (initialized, cancelled) or a response: nothing to answer


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.workdir.is_dir():
        print(f"--workdir {args.workdir}: not a folder", file=sys.stderr)
        return 1
    # the protocol owns stdout: anything else printed (a library's notice) goes to stderr
    wire = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        harness = _harness(args)
    except AssayError as exc:
        print(f"assay world: {exc}", file=sys.stderr)
        return 1
    prompt = args.prompt_file.read_text(encoding="utf-8") if args.prompt_file else ""
    spec = RunSpec(workdir=args.workdir.resolve())

    async def run() -> None:
        try:
            await _serve(harness, spec, prompt, args.log, wire)
        finally:
            await harness.close()

    asyncio.run(run())
    return 0
