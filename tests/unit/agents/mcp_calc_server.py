"""A tiny stdio MCP server for the reference agent's tests: one tool, ``add``. Writes its pid to $CALC_PID_FILE."""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


if __name__ == "__main__":
    Path(os.environ["CALC_PID_FILE"]).write_text(str(os.getpid()))
    server.run()
