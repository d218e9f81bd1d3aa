"""Memory scenarios: one person's chats over weeks or months, with probes at points in simulated time.

A scenario is a YAML file under ``eval/memory/``; a malformed one is refused with its path and line.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.errors import ConfigError
from assay.evals._yaml_lines import (
    LineError,
    load_with_lines,
    refuse_duplicate_ids,
    strip_lines,
    validation_error,
)
from assay.memory import Consolidation, Extraction

__all__ = ["PROBE_KINDS", "ChatSpec", "Probe", "Scenario", "load_scenario", "load_scenarios"]

PROBE_KINDS = ("shown_recall", "shown_clean", "store_accuracy", "answer")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    line: int = Field(default=0, alias="__line__")


class DocumentSpec(_Model):
    name: str
    text: str


class ToolSpec(_Model):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    error: str | None = None


class MemoryToolSpec(_Model):
    name: Literal[
        "remember",
        "update_memory",
        "forget",
        "set_reminder",
        "reschedule_reminder",
        "complete_reminder",
        "cancel_reminder",
    ]
    args: dict[str, Any] = Field(default_factory=dict)


class TurnSpec(_Model):
    user: str
    assistant: str = ""
    documents: list[DocumentSpec] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    memory_tools: list[MemoryToolSpec] = Field(default_factory=list)
    #: the answer a plausible extraction model gives for this turn (pr only), mistakes included
    extract: dict[str, Any] | None = None

    @field_validator("extract")
    @classmethod
    def _extraction_shape(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            Extraction.model_validate(strip_lines(value))
        return value


class ChatSpec(_Model):
    id: str
    at: datetime
    turns: list[TurnSpec] = Field(min_length=1)
    consolidate: dict[str, Any] | None = None
    #: earlier chats the agent re-reads with its extraction model before this chat starts
    reread: list[str] = Field(default_factory=list)

    @field_validator("at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    @field_validator("consolidate")
    @classmethod
    def _consolidation_shape(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            Consolidation.model_validate(strip_lines(value))
        return value


class Probe(_Model):
    id: str
    after: str
    days: float = Field(default=0.0, ge=0)
    kind: Literal["shown_recall", "shown_clean", "store_accuracy", "answer"]
    query: str = ""
    expect: list[str] = Field(default_factory=list)
    forbid: list[str] = Field(default_factory=list)
    current: list[str] = Field(default_factory=list)
    not_current: list[str] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    lessons: list[str] = Field(default_factory=list)
    reminders: dict[Literal["open", "done", "cancelled"], list[str]] = Field(default_factory=dict)
    #: strings no reminder (in any state) may hold
    no_reminder: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    note: str = ""

    @field_validator("reminders", mode="before")
    @classmethod
    def _plain_reminders(cls, value: Any) -> Any:
        return strip_lines(value)

    @model_validator(mode="after")
    def _has_checks(self) -> Probe:
        if self.kind in ("shown_recall", "shown_clean", "answer") and not self.query:
            raise ValueError(f"a {self.kind} probe needs a query")
        if self.kind in ("shown_recall", "answer") and not self.expect:
            raise ValueError(f"a {self.kind} probe needs expect: [...]")
        if self.kind == "shown_clean" and not self.forbid:
            raise ValueError("a shown_clean probe needs forbid: [...]")
        if self.kind == "store_accuracy" and not (
            self.current
            or self.not_current
            or self.absent
            or self.lessons
            or self.reminders
            or self.no_reminder
        ):
            raise ValueError("a store_accuracy probe needs current/not_current/absent/lessons/reminders")
        return self


class Scenario(_Model):
    id: str
    theme: str
    person: str = ""
    chats: list[ChatSpec] = Field(min_length=1)
    probes: list[Probe] = Field(min_length=1)
    path: str = ""
    digest: str = ""

    @model_validator(mode="after")
    def _order(self) -> Scenario:
        ids = [c.id for c in self.chats]
        for a, b in zip(self.chats, self.chats[1:], strict=False):
            if b.at <= a.at:
                raise LineError(b.line, f"chat {b.id!r} starts at {b.at} which is not after chat {a.id!r}")
        seen: set[str] = set()
        for p in self.probes:
            if p.after not in ids:
                raise LineError(
                    p.line, f"probe {p.id!r}: after: {p.after!r} names no chat ({', '.join(ids)})"
                )
            if p.id in seen:
                raise LineError(p.line, f"duplicate probe id {p.id!r}")
            seen.add(p.id)
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate chat id")
        for i, chat in enumerate(self.chats):
            for ref in chat.reread:
                if ref not in ids[:i]:
                    raise LineError(chat.line, f"chat {chat.id!r}: reread {ref!r} is not an earlier chat")
        return self

    def probes_after(self, chat_id: str) -> list[Probe]:
        return [p for p in self.probes if p.after == chat_id]

    def scripted_replies(self) -> dict[str, Any]:
        """The extraction/consolidation answers as a script for the ``scripted`` model provider."""
        import json

        from assay.memory.extract import task_marker

        replies: list[dict[str, Any]] = []
        for chat in self.chats:
            for i, turn in enumerate(chat.turns):
                if turn.extract is not None:
                    text = json.dumps(strip_lines(turn.extract), sort_keys=True)
                    replies.append({"match": task_marker("extract", chat.id, i), "text": text})
            if chat.consolidate is not None:
                text = json.dumps(strip_lines(chat.consolidate), sort_keys=True)
                replies.append({"match": task_marker("consolidate", chat.id), "text": text})
        return {"replies": replies, "default": {"text": "{}"}}


def load_scenario(path: Path) -> Scenario:
    """Parse and validate one scenario file; ConfigError names the file and line of the first problem."""
    text = path.read_text(encoding="utf-8")
    data, key_lines = load_with_lines(text, str(path))
    if not isinstance(data, dict):
        raise ConfigError(
            "a memory scenario is a mapping with id, theme, chats and probes", path=str(path), line=1
        )
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, path, data, key_lines) from exc
    scenario.path = str(path)
    scenario.digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return scenario


def load_scenarios(directory: Path) -> list[Scenario]:
    """Every ``*.yaml`` scenario in ``directory``, sorted by file name; ids must be unique."""
    if not directory.is_dir():
        raise ConfigError("memory scenario directory not found (--scenarios DIR)", path=str(directory))
    scenarios = [load_scenario(p) for p in sorted(directory.glob("*.yaml"))]
    if not scenarios:
        raise ConfigError("no *.yaml memory scenarios here", path=str(directory))
    refuse_duplicate_ids(scenarios)
    return scenarios
