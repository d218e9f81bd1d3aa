"""Agents under test: harnesses, the record they return, the model gateway and the Linux fence."""

from __future__ import annotations

from assay.agents import _builtins  # noqa: F401  (registers the built-in harnesses)
from assay.agents._claude_session import final_chain, is_claude_session_file
from assay.agents._harness import Harness, Route, RunSpec, get_harness, harness_names, register_harness
from assay.agents._record import (
    AGENT_SCHEMA_VERSION,
    AgentResult,
    Limits,
    ToolCallRecord,
    TranscriptEntry,
)

#: the model gateway's public names, imported on first use (its server needs the ``gateway`` extra)
_GATEWAY_NAMES = ("CallRecord", "Gateway", "GatewayUsage", "fetch_usage")

__all__ = [
    "AGENT_SCHEMA_VERSION",
    "AgentResult",
    "CallRecord",
    "Gateway",
    "GatewayUsage",
    "Harness",
    "Limits",
    "Route",
    "RunSpec",
    "ToolCallRecord",
    "TranscriptEntry",
    "fetch_usage",
    "final_chain",
    "get_harness",
    "harness_names",
    "is_claude_session_file",
    "register_harness",
]


def __getattr__(name: str) -> object:
    if name in _GATEWAY_NAMES:
        from assay.agents import _gateway

        return getattr(_gateway, name)
    raise AttributeError(f"module 'assay.agents' has no attribute {name!r}")
