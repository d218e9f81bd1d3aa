"""The one agent-crash rule (evals._harnessed): what broke decides ERROR or INFRA_ERROR, and ``broken_by``."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay.agents import AgentResult, Harness, RunSpec
from assay.errors import ConfigError, InfraError
from assay.evals._harnessed import HarnessBroke, agent_broke, run_agent_once
from assay.exec import AttemptContext
from assay.runs.records import Attempt, Status


class _Returns(Harness):
    name = "returns"

    def __init__(self, result: AgentResult | BaseException) -> None:
        super().__init__()
        self.result, self.closed = result, False

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result

    async def close(self) -> None:
        self.closed = True


def _once(harness: Harness, details: dict) -> AgentResult:
    ctx = AttemptContext(run_dir="r", iteration=0, seed=0, timeout_s=None)
    return asyncio.run(run_agent_once(harness, "p", RunSpec(workdir=Path(".")), ctx, details, "case c"))


def test_an_agent_that_crashed_is_an_error_broken_by_the_agent() -> None:
    details: dict = {}
    result = _once(_Returns(AgentResult(harness="x", error="segfault", steps=2)), details)
    out = agent_broke(result, details, {"steps": 2.0})
    assert out is not None and out.status is Status.ERROR and out.broken_by == "agent"
    assert out.error is not None and out.error.type == "AgentError" and "segfault" in out.error.message
    assert details["reason"] == "the agent broke: segfault" and out.metrics == {"steps": 2.0}


def test_a_harness_that_raised_is_an_error_broken_by_the_harness_and_is_closed() -> None:
    harness = _Returns(RuntimeError("bug in the harness"))
    with pytest.raises(HarnessBroke) as caught:
        _once(harness, {})
    assert harness.closed
    details: dict = {}
    out = agent_broke(caught.value, details)
    assert out.status is Status.ERROR and out.broken_by == "harness"
    assert out.error is not None and out.error.type == "HarnessError"
    assert details["reason"] == "the harness broke: case c: RuntimeError: bug in the harness"


@pytest.mark.parametrize("exc", [InfraError("gateway down"), ConfigError("no such program")])
def test_an_outage_or_a_bad_setup_passes_through_as_it_is(exc: Exception) -> None:
    with pytest.raises(type(exc)):
        _once(_Returns(exc), {})


def test_an_outage_behind_the_agent_is_infra_never_an_agent_that_broke() -> None:
    with pytest.raises(InfraError, match="case c: the model backend failed: upstream refused"):
        _once(_Returns(AgentResult(harness="x", infra_error="upstream refused", error="also this")), {})


def test_a_run_that_did_not_break_is_left_to_the_benchmark() -> None:
    assert agent_broke(AgentResult(harness="x", answer="done"), {}) is None


def test_a_journal_line_written_before_broken_by_reads_as_before() -> None:
    old = {
        "case_id": "a",
        "status": "ERROR",
        "started_at": datetime.now(UTC).isoformat(),
        "schema_version": 2,
    }
    att = Attempt.model_validate_json(json.dumps(old))
    assert att.broken_by is None and att.schema_version == 2
    assert "broken_by" not in att.model_dump_json()  # a line where nothing broke is written as before
    again = Attempt.model_validate_json(att.model_copy(update={"broken_by": "harness"}).model_dump_json())
    assert again.broken_by == "harness"
