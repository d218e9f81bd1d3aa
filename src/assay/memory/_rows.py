"""SQLite rows of the memory store turned into dataclasses."""

from __future__ import annotations

import json
import sqlite3

from assay.memory._clock import from_ts
from assay.memory._types import KnowledgeItem, Lesson, Reminder, Turn

__all__ = ["item_row", "lesson_row", "reminder_row", "turn_row"]


def item_row(r: sqlite3.Row) -> KnowledgeItem:
    return KnowledgeItem(
        id=int(r["id"]),
        content=r["content"],
        category=r["category"],
        entity=r["entity"],
        attribute=r["attribute"],
        source=r["source"],
        provenance=json.loads(r["provenance"]),
        confidence=float(r["confidence"]),
        use_count=int(r["use_count"]),
        valid_from=from_ts(r["valid_from"]),
        valid_to=None if r["valid_to"] is None else from_ts(r["valid_to"]),
        superseded_by=r["superseded_by"],
        sensitive=bool(r["sensitive"]),
        created_at=from_ts(r["created_at"]),
        updated_at=from_ts(r["updated_at"]),
        last_used_at=None if r["last_used_at"] is None else from_ts(r["last_used_at"]),
    )


def turn_row(r: sqlite3.Row) -> Turn:
    return Turn(
        id=int(r["id"]),
        conversation_id=int(r["conversation_id"]),
        idx=int(r["idx"]),
        user_text=r["user_text"],
        assistant_text=r["assistant_text"],
        tool_record=json.loads(r["tool_record"]),
        created_at=from_ts(r["created_at"]),
        ref=r["ref"],
    )


def lesson_row(r: sqlite3.Row) -> Lesson:
    return Lesson(
        id=int(r["id"]),
        topic=r["topic"],
        content=r["content"],
        tool=r["tool"],
        provenance=json.loads(r["provenance"]),
        confidence=float(r["confidence"]),
        use_count=int(r["use_count"]),
        created_at=from_ts(r["created_at"]),
        updated_at=from_ts(r["updated_at"]),
        superseded_by=r["superseded_by"],
    )


def reminder_row(r: sqlite3.Row) -> Reminder:
    return Reminder(
        id=int(r["id"]),
        content=r["content"],
        due_at=from_ts(r["due_at"]),
        status=r["status"],
        history=json.loads(r["history"]),
        provenance=json.loads(r["provenance"]),
        created_at=from_ts(r["created_at"]),
        updated_at=from_ts(r["updated_at"]),
    )
