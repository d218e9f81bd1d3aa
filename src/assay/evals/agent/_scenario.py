"""Agent scenarios: a persona, a setup (documents, memory, workdir files) and turns, each with an objective.

A scenario is a YAML file under ``eval/scenarios/<category>/``; :func:`load_scenarios` refuses a malformed
one naming its file and line, refuses duplicate ids, and warns on a non-draft scenario without ``source``
or ``difficulty_rationale``. ``script`` says what each role answers in the offline ``pr`` suite.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "CATEGORIES",
    "DocumentRef",
    "EndState",
    "FileContains",
    "GroundTruth",
    "NumberFact",
    "RoleScript",
    "Scenario",
    "ScenarioSetup",
    "ScenarioSource",
    "Turn",
]

#: the categories the shipped suite covers (a scenario may name another; the loader warns, never refuses)
CATEGORIES = (
    "document_qa",
    "not_in_documents",
    "tool_choice",
    "context",
    "memory",
    "error_recovery",
    "injection_document",
    "injection_tool",
    "refusal",
    "security",
    "cost_aware",
)
Severity = Literal["low", "medium", "high", "critical"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    #: the YAML line of this mapping (set by the loader; 0 when built in code)
    line: int = Field(default=0, alias="__line__", exclude=True)


class DocumentRef(_Model):
    """A document to index: a file under the scenarios folder's ``_documents/``, or inline text."""

    name: str
    text: str | None = None  # None: read ``_documents/<name>``


class ScenarioSetup(_Model):
    documents: list[DocumentRef] = Field(default_factory=list)
    #: facts put in the agent's memory store before the first turn (each as one ``remember`` call)
    memory: list[str] = Field(default_factory=list)
    #: files written into the workdir before the first turn (path relative to the workdir -> content)
    files: dict[str, str] = Field(default_factory=dict)
    #: strings that must never appear in an answer or a tool call's arguments (an injection's payload)
    canaries: list[str] = Field(default_factory=list)
    #: secret values planted in the setup (a file, a document) that the agent must never echo
    secrets: list[str] = Field(default_factory=list)


class NumberFact(_Model):
    value: float
    #: absolute tolerance; ``relative`` makes it a fraction of ``value``
    tolerance: float = 0.0
    relative: bool = False
    #: what the number counts; its first word must be written beside it (``%``: as a percentage, ``USD``: a
    #: dollar sign or code, ``days``: ``60 days``); empty: any number that is not a label such as ``Q4``
    unit: str = ""


class FileContains(_Model):
    """A workdir file that must hold ``text`` after the conversation (spacing aside, every other character
    counts)."""

    path: str
    text: str


class EndState(_Model):
    """What the workdir must be after the conversation, checked in code once the agent is done."""

    #: files that must hold a phrase
    file_contains: list[FileContains] = Field(default_factory=list)
    #: ``setup.files`` paths that must be as the setup wrote them (not edited, not deleted)
    file_unchanged: list[str] = Field(default_factory=list)
    #: pytest run in the workdir must pass: ``true`` (the whole workdir) or pytest's arguments
    tests_pass: bool | list[str] = False


class GroundTruth(_Model):
    """What a correct answer to the turn contains, checked in code first, then judged."""

    document: str | None = None
    #: phrases that must appear in the answer (case- and space-insensitive)
    facts: list[str] = Field(default_factory=list)
    numbers: list[NumberFact] = Field(default_factory=list)
    expected_answer: str | None = None


class Turn(_Model):
    objective: str
    #: the literal first message of the turn; None: the simulator writes it from persona + objective
    user_message: str | None = None
    #: null (written out) means "not in the documents: the agent must say so"; absent means no ground truth
    ground_truth: GroundTruth | None = None
    success_criteria: str | None = None
    #: start a new agent session before this turn (the memory store is kept; the conversation is not)
    new_session: bool = False

    @property
    def expects_abstention(self) -> bool:
        """``ground_truth: null``: the answer is not in the documents and the agent must say so."""
        return "ground_truth" in self.model_fields_set and self.ground_truth is None

    @model_validator(mode="after")
    def _graded(self) -> Turn:
        if "ground_truth" not in self.model_fields_set and not self.success_criteria:
            raise ValueError("a turn needs ground_truth (null: not in the documents) or success_criteria")
        return self


class ScenarioSource(_Model):
    kind: Literal["session", "issue", "hand", "synthetic"]
    link: str | None = None


class RoleScript(_Model):
    """What each role answers in ``pr`` (scripted-provider replies: ``{text, tool_calls, error, ...}``).

    ``agent``: one list of model replies per turn (tool calls, then the answer). ``simulator``: the
    simulator's replies after each agent answer, per turn (default: the "objective done" marker).
    ``judge``: the judge's successive answers (a mapping is sent as JSON; a string as written, so an
    unparseable answer can be scripted; more than one models retries).
    """

    agent: list[list[dict[str, Any]]] = Field(default_factory=list)
    simulator: list[list[str]] | None = None
    judge: list[dict[str, Any] | str] = Field(default_factory=list)


class Scenario(_Model):
    id: str
    category: str
    persona: str
    #: facts the simulated user knows and reveals only when the agent asks (never invented beyond these)
    user_knowledge: dict[str, str] = Field(default_factory=dict)
    setup: ScenarioSetup = Field(default_factory=ScenarioSetup)
    turns: list[Turn] = Field(min_length=1)
    #: tool names (``query_documents``) or kinds (``kind:documents``) that must be called in the scenario
    expected_tools: list[str] = Field(default_factory=list)
    forbidden_tools: list[str] = Field(default_factory=list)
    #: what the workdir must hold after the conversation (``file_contains``, ``file_unchanged``, ``tests_pass``)
    end_state: EndState = Field(default_factory=EndState)
    tags: list[str] = Field(default_factory=list)
    severity: Severity = "medium"
    source: ScenarioSource | None = None
    difficulty_rationale: str | None = None
    draft: bool = False
    script: RoleScript | None = None
    #: set by the loader
    path: str = Field(default="", exclude=True)
    digest: str = Field(default="", exclude=True)
