"""Long-term memory for an agent: a SQLite store, the per-chat and per-turn pipeline, and hybrid recall.

memory = init_memory("mem.db", embedder=HashEmbedder(), model=None, clock=ManualClock())
chat, _ = await memory.start_chat("c1")          # upkeep: reconcile, consolidate, prune
result = await memory.process_query(chat, "I moved to Portland")
result.shown.text                                 # what the agent was shown for this turn
"""

from __future__ import annotations

from assay.memory._clock import Clock, ManualClock, SystemClock
from assay.memory._pipeline import Memory, init_memory
from assay.memory._recall import RecallWeights, recall
from assay.memory._store import ItemDraft, MemoryStore
from assay.memory._tools import TOOL_NAMES
from assay.memory._turn import Chat, Evidence, MemoryConfig, Rejection, Shown, TurnResult
from assay.memory._types import KnowledgeItem, Lesson, Recalled, Reminder, Tombstone, ToolCallRecord, Turn
from assay.memory._upkeep import UpkeepReport
from assay.memory.extract import (
    CandidateFact,
    CandidateLesson,
    CandidateReminder,
    Consolidation,
    Extraction,
    ExtractionError,
)
from assay.memory.rules import looks_like_instruction, redact_secrets

__all__ = [
    "TOOL_NAMES", "CandidateFact", "CandidateLesson", "CandidateReminder", "Chat", "Clock", "Consolidation",
    "Evidence", "Extraction", "ExtractionError", "ItemDraft", "KnowledgeItem", "Lesson", "ManualClock",
    "Memory", "MemoryConfig", "MemoryStore", "RecallWeights", "Recalled", "Rejection", "Reminder", "Shown",
    "SystemClock", "Tombstone", "ToolCallRecord", "Turn", "TurnResult", "UpkeepReport", "init_memory",
    "looks_like_instruction", "recall", "redact_secrets",
]  # fmt: skip
