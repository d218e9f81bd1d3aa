"""The scenario's world as MCP: the reference agent's tools (documents, memory, files, shell, tests) served over
stdio to any agent that speaks MCP, under the server name ``assay`` (Claude Code sees ``mcp__assay__<tool>``)."""

from __future__ import annotations

from assay.agents.world._kinds import WORLD_SERVER, world_tool, world_tool_kind

__all__ = ["WORLD_SERVER", "world_tool", "world_tool_kind"]
