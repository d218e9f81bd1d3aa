"""The scenario's world as MCP: the reference agent's tools (documents, memory, files, shell, tests) served over
stdio to any agent that speaks MCP, under the server name ``assay`` (Claude Code sees ``mcp__assay__<tool>``).
Their kinds and names under each harness: :mod:`assay.agents.world.kinds`."""

from __future__ import annotations

from assay.agents.world._http import WorldServer
from assay.agents.world._world import WORLD_LOG, World

__all__ = ["WORLD_LOG", "World", "WorldServer"]
