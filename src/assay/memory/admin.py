"""What ``assay memory show|search|forget`` do, as library functions over one database file."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.embed import Embedder
from assay.errors import ConfigError
from assay.memory._pipeline import Memory
from assay.memory._recall import recall
from assay.memory._store import MemoryStore
from assay.memory._types import Recalled

__all__ = ["MemoryView", "default_db_path", "forget_in", "open_store", "search_store", "show_store"]


def default_db_path() -> Path:
    """``$ASSAY_HOME/memory.db``."""
    from assay._util import assay_home

    return assay_home() / "memory.db"


def _recorded_embedder(db: Path) -> str | None:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM store_meta WHERE key='embedder'").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def _embedder_for(db: Path, spec: str | None) -> Embedder:
    from assay.embed import HashEmbedder, get_embedder

    if spec:
        return get_embedder(spec)
    recorded = _recorded_embedder(db)
    if recorded is None:
        return HashEmbedder()
    m = re.fullmatch(r"hash-v1:dim=(\d+):char=(\d+)", recorded)
    if m:
        return HashEmbedder(dim=int(m.group(1)), char_ngrams=int(m.group(2)))
    return get_embedder("local")


def open_store(db: Path, embedder: str | None = None) -> MemoryStore:
    """Open an existing memory database with the embedder it was built with (or the one named)."""
    if not db.is_file():
        raise ConfigError("no memory database here (--db PATH or $ASSAY_HOME/memory.db)", path=str(db))
    return MemoryStore(db, embedder=_embedder_for(db, embedder))


@dataclass
class MemoryView:
    items: list[dict[str, Any]]
    lessons: list[dict[str, Any]]
    reminders: list[dict[str, Any]]
    tombstones: int


def show_store(store: MemoryStore, *, history: bool = False, entity: str | None = None) -> MemoryView:
    items = store.all_items() if history else store.current_items(entity=entity)
    if entity and history:
        items = [it for it in items if it.entity == entity.lower()]
    return MemoryView(
        items=[
            {
                "id": it.id,
                "entity": it.entity,
                "attribute": it.attribute,
                "content": it.content,
                "source": it.source,
                "confidence": round(it.confidence, 2),
                "valid_from": it.valid_from.isoformat(),
                "valid_to": it.valid_to.isoformat() if it.valid_to else None,
                "superseded_by": it.superseded_by,
                "sensitive": it.sensitive,
            }
            for it in items
        ],
        lessons=[
            {"id": ls.id, "topic": ls.topic, "content": ls.content, "superseded_by": ls.superseded_by}
            for ls in store.lessons(current_only=not history)
        ],
        reminders=[
            {"id": r.id, "content": r.content, "due_at": r.due_at.isoformat(), "status": r.status}
            for r in store.reminders(None if history else "open")
        ],
        tombstones=len(store.tombstones()),
    )


def search_store(store: MemoryStore, query: str, k: int = 8, turns: bool = False) -> list[Recalled]:
    kinds = ("item", "turn") if turns else ("item",)
    return recall(store, query, k=k, kinds=kinds)


def forget_in(store: MemoryStore, target: str, entity: str | None = None) -> dict[str, Any]:
    """Forget for good (see ``Memory.forget``)."""
    if not target and not entity:
        raise ConfigError("say what to forget: TARGET text or --entity NAME")
    return Memory(store).forget(target, entity)
