"""The memory tools of the reference agent: :mod:`assay.memory`'s own agent tools over a store given with
``memory=PATH``, plus ``recall_memory`` (the store's hybrid recall). Offered only when there is a store.

A fact the agent remembers is grounded in the user's words of the current turn (the prompt), by the same rules
as everywhere in :mod:`assay.memory`; what they refuse is the call's result, with the reason.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.agents.reference._tools import ToolOutcome, ToolSpec
from assay.errors import AssayError, ConfigError

__all__ = ["MEMORY_TOOLS", "MemoryAccess", "MemoryTurn", "open_memory"]


class MemoryAccess:
    """An open memory store (:class:`assay.memory.Memory`) and the calls the agent makes on it."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory

    def call(self, name: str, args: dict[str, Any], turn: MemoryTurn) -> ToolOutcome:
        from assay.memory import Evidence, Shown, TurnResult

        into = TurnResult(turn_id=-1, shown=Shown("", ""))
        evidence = Evidence(turn.user_text, "", [], [])
        prov = {"agent": "reference", "session": turn.session_id}
        answer = self.memory.call_tool(name, args, prov=prov, evidence=evidence, into=into)
        if not answer.get("ok"):
            why = "; ".join(f"{r.reason}" for r in into.rejected) or answer.get("error") or "refused"
            answer = {**answer, "ok": False, "error": answer.get("error") or why}
            return ToolOutcome(json.dumps(answer, sort_keys=True), status="error")
        return ToolOutcome(json.dumps(answer, sort_keys=True))

    def recall(self, query: str, k: int) -> ToolOutcome:
        from assay.memory import recall

        found = recall(self.memory.store, query, k=k, kinds=("item",), weights=self.memory.config.weights)
        self.memory.store.touch([r.id for r in found])
        lines = [f"[{r.id}] {r.text}" for r in found]
        return ToolOutcome("\n".join(lines) if lines else "nothing remembered matches")

    def close(self) -> None:
        self.memory.store.db.close()


@dataclass(frozen=True)
class MemoryTurn:
    """What a memory call of one turn is grounded in."""

    access: MemoryAccess
    user_text: str
    session_id: str


def open_memory(path: str | os.PathLike[str], embedder: Any = None) -> MemoryAccess:
    """Open (creating if needed) the memory database at ``path``; a ConfigError naming ``memory=`` if unusable."""
    from assay.embed import get_embedder
    from assay.memory import init_memory

    where = Path(path)
    if where.is_dir():
        raise ConfigError(
            "reference harness: memory= is a folder, not a memory database file", path=str(where)
        )
    try:
        emb = embedder if embedder is not None and not isinstance(embedder, str) else get_embedder(embedder)
        return MemoryAccess(init_memory(where, embedder=emb))
    except ConfigError as exc:
        raise ConfigError(f"reference harness: memory= cannot be used: {exc}", path=str(where)) from exc
    except (OSError, sqlite3.Error, AssayError) as exc:
        raise ConfigError(f"reference harness: memory= cannot be opened: {exc}", path=str(where)) from exc


def _memory_tool(name: str) -> Any:
    async def run(ctx: Any, **args: Any) -> ToolOutcome:
        turn: MemoryTurn | None = ctx.memory
        if turn is None:
            return ToolOutcome("no memory store in this run", status="error")
        return turn.access.call(name, args, turn)

    return run


async def recall_memory(ctx: Any, query: str, k: int = 5) -> ToolOutcome:
    turn: MemoryTurn | None = ctx.memory
    if turn is None:
        return ToolOutcome("no memory store in this run", status="error")
    if not query.strip():
        return ToolOutcome("the query is empty", status="error")
    return turn.access.recall(query, max(1, min(k, 20)))


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


_S = {"type": "string"}
_ID = {"type": "integer", "description": "the memory's or reminder's id"}
_MATCH = {"type": "string", "description": "words of the memory or reminder meant (instead of its id)"}
_DUE = {"type": "string", "description": "an ISO date or datetime"}

MEMORY_TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in [
        ToolSpec(
            "remember",
            "memory",
            _schema(
                ["content"],
                content={"type": "string", "description": "the fact, as one sentence"},
                entity={"type": "string", "description": "who or what it is about (default: user)"},
                attribute={"type": "string", "description": "the slot it fills, e.g. city, employer"},
                category={"type": "string", "description": "fact, profile or preference"},
                evidence={"type": "string", "description": "the user's words it comes from"},
            ),
            _memory_tool("remember"),
        ),
        ToolSpec(
            "update_memory",
            "memory",
            _schema(["content"], content=_S, id=_ID, match=_MATCH, attribute=_S, evidence=_S),
            _memory_tool("update_memory"),
        ),
        ToolSpec(
            "forget",
            "memory",
            _schema(
                [],
                target={"type": "string", "description": "what to forget"},
                entity={"type": "string", "description": "forget everything about this person or thing"},
            ),
            _memory_tool("forget"),
        ),
        ToolSpec(
            "set_reminder",
            "memory",
            _schema(["content", "due"], content=_S, due=_DUE),
            _memory_tool("set_reminder"),
        ),
        ToolSpec(
            "reschedule_reminder",
            "memory",
            _schema(["due"], due=_DUE, id=_ID, match=_MATCH),
            _memory_tool("reschedule_reminder"),
        ),
        ToolSpec(
            "complete_reminder",
            "memory",
            _schema([], id=_ID, match=_MATCH),
            _memory_tool("complete_reminder"),
        ),
        ToolSpec(
            "cancel_reminder", "memory", _schema([], id=_ID, match=_MATCH), _memory_tool("cancel_reminder")
        ),
        ToolSpec(
            "recall_memory",
            "memory",
            _schema(
                ["query"],
                query={"type": "string", "description": "what to look for in memory"},
                k={"type": "integer", "description": "how many memories at most (default 5)"},
            ),
            recall_memory,
        ),
    ]
}
