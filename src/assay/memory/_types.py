"""In-memory values of the memory store (dataclasses; what SQLite rows turn into)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

__all__ = ["KnowledgeItem", "Lesson", "Recalled", "Reminder", "Source", "Tombstone", "ToolCallRecord", "Turn"]

Source = Literal["user", "assistant", "tool", "document", "third_party"]
SOURCES: tuple[str, ...] = ("user", "assistant", "tool", "document", "third_party")


@dataclass
class KnowledgeItem:
    id: int
    content: str
    category: str
    entity: str
    attribute: str | None
    source: Source
    provenance: dict[str, Any]
    confidence: float
    use_count: int
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: int | None
    sensitive: bool
    created_at: datetime
    updated_at: datetime
    last_used_at: datetime | None = None

    @property
    def current(self) -> bool:
        return self.superseded_by is None and self.valid_to is None


@dataclass
class ToolCallRecord:
    """One tool call the agent made in a turn. ``result`` is what the tool returned; it is not stored."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    result: str = ""
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass
class Turn:
    id: int
    conversation_id: int
    idx: int
    user_text: str
    assistant_text: str
    tool_record: list[dict[str, Any]]
    created_at: datetime
    #: where the turn came from when it was imported (a LoCoMo ``dia_id``); None for a live turn
    ref: str | None = None


@dataclass
class Lesson:
    id: int
    topic: str
    content: str
    tool: str | None
    provenance: dict[str, Any]
    confidence: float
    use_count: int
    created_at: datetime
    updated_at: datetime
    superseded_by: int | None


@dataclass
class Reminder:
    id: int
    content: str
    due_at: datetime
    status: Literal["open", "done", "cancelled"]
    history: list[dict[str, Any]]
    provenance: dict[str, Any]
    created_at: datetime
    updated_at: datetime


@dataclass
class Tombstone:
    id: int
    kind: Literal["entity", "term", "content"]
    value: str
    reason: str
    created_at: datetime


@dataclass
class Recalled:
    """One thing recall found, with the parts of its score."""

    kind: Literal["item", "turn"]
    id: int
    text: str
    score: float
    vector: float = 0.0
    fts: float = 0.0
    recency: float = 0.0
    confidence: float = 0.0
    when: datetime | None = None
