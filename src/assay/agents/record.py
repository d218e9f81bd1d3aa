"""What a harness returns: the answer, the tool record, the transcript, usage, cut-off and the model that ran.

Saved (in an attempt's ``details`` or on its own) as versioned pydantic: ``AGENT_SCHEMA_VERSION`` changes when a
field changes meaning. Every harness fills the same record, so every benchmark scores every agent the same way.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.runs import Usage

AGENT_SCHEMA_VERSION = 1

#: how a tool call is classified, so scorers need not know each agent's tool names
ToolKind = Literal[
    "read", "list", "search", "edit", "write", "shell", "test", "documents", "memory", "mcp", "other"
]
#: which limit stopped the agent, if any
CutOff = Literal["wall_clock", "steps", "tokens", "memory", "processes", "disk"]
#: the limits that stop an agent that broke them: the attempt is ERROR with the reason (the others keep its work)
RESOURCE_CUT_OFFS = ("memory", "processes", "disk")
#: how much of the record a harness could recover from the agent
RecordLevel = Literal["full", "answer_only"]


#: the status of a call to a tool the harness does not offer: an attempt, not a use of that tool
NOT_OFFERED = "not_offered"


class ToolCallRecord(BaseModel):
    """One tool call the agent made."""

    name: str
    kind: ToolKind = "other"
    arguments: dict[str, Any] = Field(default_factory=dict)
    #: a short summary of the result (capped; never the whole output)
    result_summary: str = ""
    #: seconds since the harness started the agent (None where the agent's log has no times)
    started_s: float | None = None
    ended_s: float | None = None
    #: "ok", "error", :data:`NOT_OFFERED` (a tool the agent was not given), or the refusal of a guardrail
    #: ("refused: <why>")
    status: str = "ok"
    #: files the call created or changed, relative to the workdir
    edited_paths: list[str] = Field(default_factory=list)
    #: for shell and test calls: the command and its exit code
    command: str | None = None
    exit_code: int | None = None
    #: for test calls whose summary was parsed: counts by outcome (``passed``, ``failed``, ``errors``, ...)
    test_counts: dict[str, int] | None = None


class TranscriptEntry(BaseModel):
    """One message of the conversation as the agent saw it (roles as in OpenAI chat)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    tool_call_id: str | None = None


class Limits(BaseModel):
    """The caps every harness is held to. None means no cap.

    ``memory_mb``, ``max_procs`` and ``disk_mb`` hold the agent's whole process tree (resident memory summed,
    processes running, bytes added under the workdir): over one, the tree is killed and the run says which
    (:mod:`assay.agents._inside`). ``output_kb``: the agent's stdout kept; the rest is counted, not kept."""

    wall_clock_s: float | None = 600.0
    max_steps: int | None = 50
    max_tokens: int | None = None
    memory_mb: int | None = 4096
    max_procs: int | None = 512
    disk_mb: int | None = 2048
    output_kb: int | None = 10240


class Containment(BaseModel):
    """How one agent process was held: fenced or not, the limits applied, which one stopped it, what was killed."""

    fenced: bool = False
    #: why it ran unfenced, or what isolation it lacked (None: nothing to say)
    note: str | None = None
    limits: dict[str, float | int | None] = Field(default_factory=dict)
    #: the limit that stopped it (``memory``, ``processes``, ``disk``, ``wall_clock``, ``tokens``) and why
    stopped_by: str | None = None
    reason: str | None = None
    #: processes of the agent's tree still running when its attempt ended (all of them ended): their names
    killed: list[str] = Field(default_factory=list)
    #: those of ``killed`` that ignored SIGTERM and got SIGKILL after the grace period
    killed_hard: list[str] = Field(default_factory=list)
    peak_procs: int | None = None
    peak_rss_mb: float | None = None
    disk_added_mb: float | None = None
    output_bytes: int = 0
    #: stdout bytes over ``Limits.output_kb``: counted, not kept
    output_dropped_bytes: int = 0


class AgentResult(BaseModel):
    """What one run (or one turn) of an agent under test produced."""

    schema_version: int = AGENT_SCHEMA_VERSION
    harness: str
    answer: str = ""
    tool_record: list[ToolCallRecord] = Field(default_factory=list)
    #: how many of ``tool_record``'s calls came before the agent's first answer ended (the first message
    #: that ended its turn with text); None: no answer, or a harness that cannot tell (its after-answer
    #: checks are then not measured)
    answer_at: int | None = None
    record_level: RecordLevel = "full"
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    #: tokens and cost with its source (``metered``, ``api_equivalent``, ``harness_counts``); cost None = n/a
    usage: Usage = Field(default_factory=Usage)
    #: the limit that stopped the agent (everything it did until then is kept)
    cut_off: CutOff | None = None
    #: the model the agent actually ran, read back from the agent or the gateway; None when nothing said
    model_ran: str | None = None
    steps: int = 0
    elapsed_s: float = 0.0
    exit_code: int | None = None
    #: the harness's own conversation id (Claude Code's session id, ...), for the next turn
    session_id: str | None = None
    #: an infrastructure failure behind the agent (the gateway's upstream down): the run is INFRA_ERROR
    infra_error: str | None = None
    #: the agent itself broke (crashed, unparseable output, over a resource limit): the run is ERROR
    error: str | None = None
    #: how its process was held (None: a harness that runs no process of its own)
    containment: Containment | None = None

    @property
    def edited_paths(self) -> list[str]:
        seen: dict[str, None] = {}
        for call in self.tool_record:
            for p in call.edited_paths:
                seen.setdefault(p, None)
        return list(seen)

    def calls(self, kind: ToolKind | None = None, name: str | None = None) -> list[ToolCallRecord]:
        return [
            c
            for c in self.tool_record
            if (kind is None or c.kind == kind) and (name is None or c.name == name)
        ]
