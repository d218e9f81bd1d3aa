"""What one turn of the memory pipeline reads and returns: its config, chat, evidence, shown context, result.

Below the pipeline (``_pipeline``) and its mixins (``_tools``, ``_upkeep``), which all use these types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from assay.memory._recall import RecallWeights
from assay.memory._types import ToolCallRecord
from assay.memory.extract import CandidateLesson
from assay.runs import Usage

__all__ = ["Chat", "Evidence", "MemoryConfig", "Rejection", "Shown", "TurnResult"]


@dataclass(frozen=True)
class MemoryConfig:
    recall_items: int = 6
    #: past user turns shown per query (0: knowledge items only); LongMemEval import turns this on
    recall_turns: int = 0
    profile_items: int = 12
    lessons_shown: int = 10
    reminder_horizon: timedelta = timedelta(days=3)
    consolidate_after: timedelta = timedelta(days=7)
    prune_after: timedelta = timedelta(days=90)
    prune_below_confidence: float = 0.4
    #: items this close are one fact said twice (relatedness, ``assay.embed.relatedness``: cosine for MiniLM)
    duplicate_cosine: float = 0.92
    weights: RecallWeights = field(default_factory=RecallWeights)


@dataclass
class Chat:
    conversation_id: int
    ref: str | None
    turns: int = 0


@dataclass
class Rejection:
    kind: str  # fact, lesson, reminder, tool
    content: str
    reason: str


@dataclass
class Shown:
    """What the agent is shown: a system-prompt section and the context recalled for this turn."""

    system: str
    context: str
    item_ids: list[int] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"{self.system}\n\n{self.context}".strip()


@dataclass
class TurnResult:
    turn_id: int
    shown: Shown
    stored: list[int] = field(default_factory=list)
    lessons: list[int] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    extraction_error: str | None = None


class Evidence:
    """Everything a turn's candidates may be grounded in, sorted by whose words they are."""

    def __init__(
        self,
        user_text: str,
        assistant_text: str,
        tool_calls: Sequence[ToolCallRecord],
        documents: Sequence[tuple[str, str]],
    ) -> None:
        self.user_text = user_text
        self.assistant_text = assistant_text
        self.tool_calls = list(tool_calls)
        self.documents = list(documents)

    def others(self) -> dict[str, list[str]]:
        return {
            "document": [t for _, t in self.documents],
            "tool": [c.result for c in self.tool_calls if c.result]
            + [c.error or "" for c in self.tool_calls],
            "assistant": [self.assistant_text] if self.assistant_text else [],
        }

    def trusted_not(self) -> list[str]:
        return [t for _, t in self.documents] + [
            c.result for c in self.tool_calls if not c.failed and c.result
        ]

    def failure_texts(self) -> list[str]:
        texts: list[str] = []
        for i, c in enumerate(self.tool_calls):
            if c.failed:
                texts.append(f"{c.name} {_args_text(c.arguments)} {c.error}")
                fix = next((d for d in self.tool_calls[i + 1 :] if d.name == c.name and not d.failed), None)
                if fix is not None:
                    texts.append(f"{fix.name} {_args_text(fix.arguments)}")
        return texts

    def derived_lessons(self) -> list[CandidateLesson]:
        """Lessons read straight off the tool record: a failed call later retried successfully."""
        out: list[CandidateLesson] = []
        for i, c in enumerate(self.tool_calls):
            if not c.failed:
                continue
            fix = next((d for d in self.tool_calls[i + 1 :] if d.name == c.name and not d.failed), None)
            if fix is None:
                continue
            err = (c.error or "").strip().splitlines()[0][:160] if c.error else "error"
            out.append(
                CandidateLesson(
                    topic=f"{c.name} {_args_text(c.arguments)}"[:120],
                    tool=c.name,
                    content=f"{c.name}: {_args_text(c.arguments)} failed ({err}); "
                    f"{_args_text(fix.arguments)} worked",
                )
            )
        return out


def _args_text(args: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(args.items()))
