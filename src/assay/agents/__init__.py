"""Agents under test: harnesses, the record they return, the model gateway and the Linux fence."""

from __future__ import annotations

from assay.agents import _builtins  # noqa: F401  (registers the built-in harnesses)
from assay.agents._claude_session import final_chain, is_claude_session_file
from assay.agents._harness import Harness, Route, RunSpec, get_harness, harness_names, register_harness
from assay.agents.record import (
    AGENT_SCHEMA_VERSION,
    AgentResult,
    Limits,
    ToolCallRecord,
    TranscriptEntry,
)

#: names imported on first use: the gateway's server needs the ``gateway`` extra; the reference agent and the
#: toolchain helpers are not needed to read a record
_LAZY = {
    **dict.fromkeys(("CallRecord", "Gateway", "GatewayUsage", "fetch_usage"), "assay.agents.gateway"),
    **dict.fromkeys(("agent_env", "bare_venv", "is_secret_env_name"), "assay.agents._env"),
    "install_gh": "assay.agents._gh",
    "ReferenceHarness": "assay.agents.reference",
    **dict.fromkeys(("DEFAULT_PROFILE", "load_profile", "profile_option"), "assay.agents.reference._profile"),
    "parse_pytest_summary": "assay.agents.reference._tools",
    **dict.fromkeys(("run_step_capped", "step_cap_applies"), "assay.agents._steps"),
}

__all__ = [
    "AGENT_SCHEMA_VERSION", "DEFAULT_PROFILE", "AgentResult", "CallRecord", "Gateway", "GatewayUsage", "Harness",
    "Limits", "ReferenceHarness", "Route", "RunSpec", "ToolCallRecord", "TranscriptEntry", "agent_env",
    "bare_venv", "fetch_usage", "final_chain", "get_harness", "harness_names", "install_gh",
    "is_claude_session_file", "is_secret_env_name", "load_profile", "parse_pytest_summary", "profile_option",
    "register_harness", "run_step_capped", "step_cap_applies",
]  # fmt: skip


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay.agents' has no attribute {name!r}")
