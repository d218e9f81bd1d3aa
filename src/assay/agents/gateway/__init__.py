"""The model gateway: a loopback HTTP server every harness talks to instead of a provider.

It alone holds the upstream (any ``assay.models`` spec and its key), speaks OpenAI chat completions and
Anthropic Messages on its front (JSON and SSE, tools both ways), counts the tokens of every call, keeps a call
log, and turns an unreachable upstream into a 503 marked ``x-assay-infra-error: 1``.
"""

from __future__ import annotations

from assay.agents.gateway._app import INFRA_HEADER, build_app
from assay.agents.gateway._common import rewrite_system
from assay.agents.gateway._log import (
    CALL_LOG_SCHEMA_VERSION,
    CallLog,
    CallRecord,
    GatewayUsage,
    read_call_log,
)
from assay.agents.gateway._overhead import (
    CallOverhead,
    OverheadSummary,
    measure_overhead,
    summarize_overhead,
)
from assay.agents.gateway.server import (
    Gateway,
    default_rewrite_system,
    fetch_calls,
    fetch_usage,
    limit_steps,
)

__all__ = [
    "CALL_LOG_SCHEMA_VERSION",
    "INFRA_HEADER",
    "CallLog",
    "CallOverhead",
    "CallRecord",
    "Gateway",
    "GatewayUsage",
    "OverheadSummary",
    "build_app",
    "default_rewrite_system",
    "fetch_calls",
    "fetch_usage",
    "limit_steps",
    "measure_overhead",
    "read_call_log",
    "rewrite_system",
    "summarize_overhead",
]
