"""A scenario's world as an MCP server: what a harness is given to start it, and the config files it writes.

    world = World(workdir=work, documents=folder, embedder="hash", memory=db)   # server=WorldServer(...): HTTP
    config = world.mcp_config(out / "mcp.json", prompt=prompt, log=out / "world-calls.jsonl")
    # Claude Code: --mcp-config config; a command agent: {mcp_config}; Codex: world.codex_args(...) (stdio)

The server (``python -m assay.agents.world``) serves the reference agent's own tools over stdio, the same
implementation the reference agent calls in process, so a tool call means the same under every harness. Each
agent run starts its own server (the harness writes its config per run): the run's user message, which a memory
call is grounded in, is in a file beside the config; every call served is appended to ``log`` as a
:class:`~assay.agents.record.ToolCallRecord` line, so the world's own record of the run is there to read.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORLD_SERVER = (
    "assay"  # assay.agents.world.kinds.WORLD_SERVER (the reference agent's; a test holds them equal)
)

__all__ = ["WORLD_LOG", "World"]

#: the file name of the world's log of a run's calls, in the folder a harness gives the run
WORLD_LOG = "world-calls.jsonl"

_SOURCES = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class World:
    """Where a scenario's world lives: the workdir, the saved document index and the memory store, and the
    loopback HTTP server of it when the attempt runs one."""

    workdir: Path
    #: a saved ``assay.rag.DocumentIndex`` folder (None: no documents tool)
    documents: Path | None = None
    #: the embedder spec the index and the memory store were built with
    embedder: str | None = None
    #: the memory database (None: no memory tools)
    memory: Path | None = None
    python: str = sys.executable
    #: the world served over loopback HTTP from the attempt's process (a ``WorldServer``); None: stdio only
    server: Any = None

    def stdio(self, *, prompt_file: Path | None = None, log: Path | None = None) -> dict[str, Any]:
        """The stdio server as an MCP client config names it: ``{command, args}``."""
        args = ["-m", "assay.agents.world", "--workdir", str(self.workdir)]
        if self.documents is not None:
            args += ["--documents", str(self.documents)]
        if self.memory is not None:
            args += ["--memory", str(self.memory)]
        if self.embedder is not None:
            args += ["--embedder", self.embedder]
        if prompt_file is not None:
            args += ["--prompt-file", str(prompt_file)]
        if log is not None:
            args += ["--log", str(log)]
        # the server runs the assay this process runs (a checkout's sources, not another install)
        return {"command": self.python, "args": args, "env": {"PYTHONPATH": str(_SOURCES)}}

    def mcp_config(
        self, path: Path, *, prompt: str = "", log: Path | None = None, stdio: bool = False
    ) -> Path:
        """Write Claude Code's ``--mcp-config`` file (``{"mcpServers": {"assay": {...}}}``) for one run: the
        loopback HTTP server's URL for this run when there is one (and not ``stdio``), else the stdio server
        with the run's user message in a file beside the config; ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.server is not None and not stdio:
            server: dict[str, Any] = {"type": "http", "url": self.server.run_url(prompt, log)}
        else:
            prompt_file = path.with_name(path.stem + "-prompt.txt")
            prompt_file.write_text(prompt, encoding="utf-8")
            server = {"type": "stdio", **self.stdio(prompt_file=prompt_file, log=log)}
        path.write_text(json.dumps({"mcpServers": {WORLD_SERVER: server}}, indent=1), encoding="utf-8")
        return path

    def codex_args(self, config: Path) -> list[str]:
        """Codex CLI's ``-c`` options naming the server of an :meth:`mcp_config` file written with ``stdio``."""
        server = json.loads(config.read_text(encoding="utf-8"))["mcpServers"][WORLD_SERVER]
        base = f"mcp_servers.{WORLD_SERVER}"
        return [
            "-c",
            f"{base}.command={json.dumps(server['command'])}",
            "-c",
            f"{base}.args={json.dumps(server['args'])}",
        ]
