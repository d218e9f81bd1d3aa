"""Harnesses that break, for the one agent-crash rule of the four agent benchmarks (agent, tasks, code,
sessions): the agent crashing or the harness itself failing is ERROR with ``broken_by`` saying which; an outage
of the model backend behind the agent is INFRA_ERROR."""

from __future__ import annotations

from typing import Any

import pytest

from assay.agents import AgentResult, Harness, RunSpec, register_harness


class _AgentCrashes(Harness):
    name = "crashes-for-tests"

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        return AgentResult(harness=self.name, error="the agent process died (signal 11)")


class _HarnessRaises(Harness):
    name = "raises-for-tests"

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        raise RuntimeError("a bug in the harness itself")


class _BackendDown(Harness):
    name = "outage-for-tests"

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        return AgentResult(harness=self.name, infra_error="the gateway's upstream refused the connection")


#: what breaks -> the harness that breaks so; "outage" is the model backend behind the agent
BREAKING = {"agent": _AgentCrashes, "harness": _HarnessRaises, "outage": _BackendDown}


@pytest.fixture
def breaking_harness() -> dict[str, str]:
    """Register the harnesses of :data:`BREAKING`; what breaks -> the registered name."""
    for cls in BREAKING.values():

        def make(_cls: type[Harness] = cls, **_: Any) -> Harness:
            return _cls()

        register_harness(cls.name, make)
    return {what: cls.name for what, cls in BREAKING.items()}
