"""Agents under test: harnesses, the record they return, the model gateway and the Linux fence."""

from __future__ import annotations

from assay.agents import _builtins  # noqa: F401  (registers the built-in harnesses)
from assay.agents._harness import Harness, Route, RunSpec, get_harness, harness_names, register_harness
from assay.agents._record import (
    AGENT_SCHEMA_VERSION,
    AgentResult,
    Limits,
    ToolCallRecord,
    TranscriptEntry,
)

__all__ = [
    "AGENT_SCHEMA_VERSION",
    "AgentResult",
    "Harness",
    "Limits",
    "Route",
    "RunSpec",
    "ToolCallRecord",
    "TranscriptEntry",
    "get_harness",
    "harness_names",
    "register_harness",
]
