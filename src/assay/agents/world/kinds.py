"""The kinds of the world's tools, and how each harness names them (apart from the package: it reads the
reference agent's tool table, which the harness contract must not import)."""

from __future__ import annotations

from assay.agents.record import ToolKind
from assay.agents.reference.harness import ALL_TOOLS, WORLD_SERVER

__all__ = ["WORLD_SERVER", "world_tool", "world_tool_kind"]


#: how harnesses prefix a world tool's name: Claude Code's and Codex's ``mcp__<server>__``, the reference
#: agent's ``<server>__``
_PREFIXES = (f"mcp__{WORLD_SERVER}__", f"{WORLD_SERVER}__")


def world_tool(name: str) -> str | None:
    """The world tool a harness's tool name stands for (``mcp__assay__query_documents`` -> ``query_documents``),
    None when it is not one."""
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return None


def world_tool_kind(tool: str) -> ToolKind:
    """The record's kind of the world tool ``tool`` ("other" when there is no such tool)."""
    spec = ALL_TOOLS.get(tool)
    return spec.kind if spec is not None else "other"
