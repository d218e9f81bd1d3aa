"""What one scenario attempt records: the conversation, the code checks, the judgement and the cost per role.

Saved in the attempt's ``details`` (``ScenarioRecord.model_dump(mode="json")``), so the report, ``health`` and
the judge controls read the same record.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.agents import ToolCallRecord
from assay.agents.record import RecordLevel
from assay.models import Usage

__all__ = ["CheckResult", "ConversationTurn", "Message", "NotMeasured", "RoleCost", "ScenarioRecord"]

Role = Literal["simulator", "agent", "judge"]
#: how the conversation ended
EndedBy = Literal["objectives_done", "stop_marker", "max_user_messages", "agent_error", "cut_off"]


class Message(BaseModel):
    """One message of the conversation, as the judge and the report see it."""

    role: Literal["user", "assistant"]
    text: str
    #: the assistant's tool calls made while writing this answer
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    #: how much the harness could record of this answer's run ("answer_only": its tool use is unknown)
    record_level: RecordLevel = "full"


class ConversationTurn(BaseModel):
    """One objective of the scenario: the user's messages and the agent's answers, in order."""

    index: int  # 1-based, as the judge numbers turns
    objective: str
    messages: list[Message] = Field(default_factory=list)
    #: the limit that stopped the agent on this turn, or its error / infrastructure failure
    cut_off: str | None = None
    agent_error: str | None = None
    new_session: bool = False
    #: how the agent's process was held on this turn's runs: the limits, which stopped it, what was killed
    #: (:class:`~assay.agents.record.Containment`, the last run's; None: no process of its own)
    containment: dict[str, Any] | None = None

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        return [c for m in self.messages for c in m.tool_calls]

    @property
    def answers(self) -> list[str]:
        return [m.text for m in self.messages if m.role == "assistant"]


class CheckResult(BaseModel):
    """One check made in code. ``turn`` None: over the whole scenario."""

    #: expected_tool | forbidden_tool | fact | number | abstained | canary | secret | file_contains |
    #: file_unchanged | tests_pass
    name: str
    passed: bool
    detail: str = ""
    turn: int | None = None


class NotMeasured(BaseModel):
    """A code check the record cannot settle (a tool check over answers only): neither passed nor failed."""

    name: str  # expected_tool | forbidden_tool
    detail: str = ""


class RoleCost(BaseModel):
    calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    #: False when a role's spend could not be read (a harness that reports none, a call cut off mid-way)
    complete: bool = True


class ScenarioRecord(BaseModel):
    scenario: str
    category: str
    turns: list[ConversationTurn] = Field(default_factory=list)
    ended_by: EndedBy | None = None
    checks: list[CheckResult] = Field(default_factory=list)
    #: the checks the record could not settle; the verdict rests on the others and the judge
    not_measured: list[NotMeasured] = Field(default_factory=list)
    #: the judge's parsed answer and the verdict re-derived from it (``_verdict.Judgement``)
    judgement: dict | None = None
    cost: dict[Role, RoleCost] = Field(default_factory=dict)
    agent_model: str | None = None
    #: the model the agent reported running (``AgentResult.model_ran``, read back per scenario)
    model_ran: str | None = None
    judge_model: str | None = None
    simulator_model: str | None = None
    #: the first turn that went wrong (code check or judge), 1-based; None when none did
    failed_turn: int | None = None
    #: one line saying why the scenario did not pass
    reason: str = ""
