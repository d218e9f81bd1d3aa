"""The gateway's call log: one JSONL record per model call, and the totals a harness reads back.

Each record says which front was spoken, which model the agent asked for, which upstream answered (and the
model it reported), the tokens it counted, how long the call took inside the gateway and inside the upstream,
and how it ended. ``status`` is ``ok``, ``infra_error`` (the upstream was unreachable or rejected us: the run
is INFRA_ERROR, never the agent's fault), ``refused`` (the upstream refused this request), ``bad_request``
(the agent sent something the gateway cannot translate), ``not_found`` (an endpoint the gateway lacks),
``cut_off`` (the run's step limit was reached: the call was refused, never sent upstream) or ``error`` (the
gateway or its upstream broke).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from assay.errors import ConfigError
from assay.runs import Usage

__all__ = ["CALL_LOG_SCHEMA_VERSION", "CallLog", "CallRecord", "CallStatus", "GatewayUsage", "read_call_log"]

CALL_LOG_SCHEMA_VERSION = 1
CallStatus = Literal["ok", "infra_error", "refused", "bad_request", "not_found", "cut_off", "error"]
Front = Literal["openai", "anthropic", "none"]


class CallRecord(BaseModel):
    """One call through the gateway."""

    schema_version: int = CALL_LOG_SCHEMA_VERSION
    #: UTC ISO time the request arrived
    time: str
    #: the run the call belongs to (the route's run id), None for calls on the bare URLs
    run: str | None = None
    front: Front
    endpoint: str
    stream: bool = False
    #: the model name the agent asked for
    model_asked: str | None = None
    #: the ``assay.models`` spec behind the gateway
    upstream: str
    #: the model the upstream said it ran (``provider/model``), None when no answer came back
    model_ran: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    cost_source: str | None = None
    tool_calls: int = 0
    finish_reason: str | None = None
    #: wall time from the request's arrival to the last byte of the answer
    latency_ms: float = 0.0
    #: time spent waiting on the upstream model
    upstream_ms: float = 0.0
    #: what the gateway itself added: ``latency_ms - upstream_ms`` (translation, SSE framing)
    gateway_ms: float = 0.0
    #: time to the first streamed piece forwarded, for streamed calls
    ttft_ms: float | None = None
    status: CallStatus = "ok"
    http_status: int = 200
    #: ModelInfraError kind (connect, auth, quota, ...) for infra errors
    error_kind: str | None = None
    error: str | None = None

    def usage(self) -> Usage:
        if self.status != "ok":
            return Usage()
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
            calls=1,
            cost_usd=self.cost_usd,
            cost_source=self.cost_source,  # type: ignore[arg-type]
            unpriced_calls=0 if self.cost_usd is not None else 1,
        )


class GatewayUsage(BaseModel):
    """Totals over a run's calls (``GET /assay/usage``): what a harness puts in ``AgentResult.usage``."""

    run: str | None = None
    upstream: str
    #: the model the upstream reported on its last answered call (``AgentResult.model_ran``)
    model_ran: str | None = None
    #: every model the upstream reported, in first-seen order
    models_ran: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    calls: int = 0
    ok_calls: int = 0
    infra_errors: int = 0
    #: the last infrastructure failure, for ``AgentResult.infra_error``
    last_infra_error: str | None = None
    other_errors: int = 0
    #: calls refused because the run had made its step limit of model calls (``--max-steps``)
    cut_off_calls: int = 0
    upstream_ms: float = 0.0
    gateway_ms: float = 0.0

    @classmethod
    def of(cls, records: list[CallRecord], upstream: str, run: str | None = None) -> GatewayUsage:
        out = cls(run=run, upstream=upstream)
        for r in records:
            out.calls += 1
            out.upstream_ms += r.upstream_ms
            out.gateway_ms += r.gateway_ms
            if r.status == "ok":
                out.ok_calls += 1
                out.usage = out.usage + r.usage()
            elif r.status == "infra_error":
                out.infra_errors += 1
                out.last_infra_error = r.error
            elif r.status == "cut_off":
                out.cut_off_calls += 1
            else:
                out.other_errors += 1
            if r.model_ran:
                out.model_ran = r.model_ran
                if r.model_ran not in out.models_ran:
                    out.models_ran.append(r.model_ran)
        return out


class CallLog:
    """The records of one gateway, in memory and (when given a path) appended to a JSONL file as they end."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(record.model_dump_json() + "\n")

    def records(self, run: str | None = None, since: int = 0) -> list[CallRecord]:
        """Records from index ``since`` on, only those of ``run`` when given."""
        with self._lock:
            chosen = self._records[since:]
        return [r for r in chosen if run is None or r.run == run]

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)


def read_call_log(path: Path, run: str | None = None) -> list[CallRecord]:
    """The records of a call-log file (only ``run``'s when given); a torn last line (being written) is skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = CallRecord.model_validate(json.loads(line))
        except ValueError as exc:
            if n == len(lines):
                break
            raise ConfigError(f"not a gateway call record: {exc}", path=str(path), line=n) from exc
        if run is None or record.run == run:
            out.append(record)
    return out
