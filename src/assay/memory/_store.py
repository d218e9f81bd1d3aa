"""The memory store: one SQLite database (WAL) holding knowledge, conversations, lessons, reminders,
forget tombstones and vectors. Every timestamp comes from the store's clock.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from assay.embed import Embedder
from assay.errors import ConfigError, IndexCorruptError
from assay.memory._clock import Clock, SystemClock, from_ts, to_ts
from assay.memory._migrations import migrate
from assay.memory._rows import item_row, lesson_row, reminder_row, turn_row
from assay.memory._types import SOURCES, KnowledgeItem, Lesson, Reminder, Tombstone, Turn
from assay.memory._vectors import VectorCache
from assay.memory.rules import content_words, normalize, redact_secrets

__all__ = ["ItemDraft", "MemoryStore"]


@dataclass
class ItemDraft:
    """A knowledge item about to be written."""

    content: str
    entity: str = "user"
    attribute: str | None = None
    category: str = "fact"
    source: str = "user"
    confidence: float = 0.8
    provenance: dict[str, Any] | None = None
    sensitive: bool = False


class MemoryStore:
    """SQLite-backed long-term memory. ``path`` may be ``":memory:"`` for tests."""

    def __init__(self, path: str | Path, *, embedder: Embedder, clock: Clock | None = None) -> None:
        self.path = str(path)
        self.clock: Clock = clock or SystemClock()
        self.embedder = embedder
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            if self.path != ":memory:":
                self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            # recall reads the FTS index and item rows on every turn: keep them in memory, not in syscalls
            self.db.execute("PRAGMA cache_size=-65536")
            self.db.execute("PRAGMA mmap_size=268435456")
            self.db.execute("PRAGMA temp_store=MEMORY")
            self.db.execute("PRAGMA foreign_keys=ON")
            # forgotten and superseded-then-forgotten text must not linger in free pages
            self.db.execute("PRAGMA secure_delete=ON")
            migrate(self.db)
        except sqlite3.DatabaseError as exc:
            raise IndexCorruptError(f"memory database {self.path} cannot be opened: {exc}") from exc
        self._check_embedder()
        self._caches: dict[str, VectorCache] = {}
        self._tombstones: list[Tombstone] | None = None

    # ------------------------------------------------------------------ basics
    def close(self) -> None:
        self.db.close()

    def now(self) -> float:
        return to_ts(self.clock.now())

    def _check_embedder(self) -> None:
        row = self.db.execute("SELECT value FROM store_meta WHERE key='embedder'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO store_meta(key, value) VALUES ('embedder', ?)", (self.embedder.id,))
        elif row[0] != self.embedder.id:
            raise ConfigError(
                f"memory database was built with embedder {row[0]!r}, not {self.embedder.id!r}; "
                "use the same --embedder or a fresh database",
                path=self.path,
            )

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM store_meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)", (key, value))

    def transaction(self) -> _Tx:
        return _Tx(self.db)

    # ------------------------------------------------------------------ vectors
    def _cache(self, owner: str) -> VectorCache:
        cache = self._caches.get(owner)
        if cache is None:
            cache = VectorCache(self.embedder.dim)
            if owner == "item":
                sql = (
                    "SELECT v.owner_id, v.vec FROM vectors v JOIN knowledge_items k ON k.id = v.owner_id "
                    "WHERE v.owner='item' AND k.superseded_by IS NULL AND k.valid_to IS NULL"
                )
            else:
                sql = "SELECT owner_id, vec FROM vectors WHERE owner='turn'"
            rows = self.db.execute(sql).fetchall()
            if rows:
                vecs = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
                if vecs.shape[1] != self.embedder.dim:
                    raise IndexCorruptError(
                        f"memory vectors have dim {vecs.shape[1]}, not {self.embedder.dim}"
                    )
                cache.add([int(r[0]) for r in rows], vecs)
            self._caches[owner] = cache
        return cache

    def _put_vectors(self, owner: str, ids: Sequence[int], texts: Sequence[str]) -> None:
        if not ids:
            return
        vecs = np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)
        self.db.executemany(
            "INSERT OR REPLACE INTO vectors(owner, owner_id, embedder, dim, vec) VALUES (?, ?, ?, ?, ?)",
            [
                (owner, i, self.embedder.id, self.embedder.dim, v.tobytes())
                for i, v in zip(ids, vecs, strict=True)
            ],
        )
        if owner in self._caches:
            self._caches[owner].add(ids, vecs)

    def vector_scores(self, owner: str, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._cache(owner).scores(query)

    def vector_top(self, owner: str, query: np.ndarray, n: int) -> dict[int, float]:
        """The ``n`` best live rows for ``query``: id -> cosine (all of them when there are no more)."""
        return self._cache(owner).top(query, n)

    def vector_scores_many(self, owner: str, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._cache(owner).scores_many(queries)

    # ------------------------------------------------------------------ knowledge items
    def add_items(self, drafts: Sequence[ItemDraft]) -> list[int]:
        """Write items (secrets redacted, sensitive flagged) with their vectors, in one transaction."""
        now = self.now()
        ids: list[int] = []
        texts: list[str] = []
        with self.transaction():
            for d in drafts:
                if d.source not in SOURCES:
                    raise ValueError(f"unknown source {d.source!r}")
                content, secret = redact_secrets(d.content)
                cur = self.db.execute(
                    "INSERT INTO knowledge_items(content, category, entity, attribute, source, provenance, "
                    "confidence, valid_from, sensitive, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        content,
                        d.category,
                        normalize(d.entity) or "user",
                        d.attribute,
                        d.source,
                        _clean_json(d.provenance or {}),
                        min(1.0, max(0.0, d.confidence)),
                        now,
                        int(d.sensitive or secret),
                        now,
                        now,
                    ),
                )
                ids.append(int(cur.lastrowid or 0))
                texts.append(content)
            self._put_vectors("item", ids, texts)
        return ids

    def add_item(self, draft: ItemDraft) -> int:
        return self.add_items([draft])[0]

    def get_item(self, item_id: int) -> KnowledgeItem | None:
        row = self.db.execute("SELECT * FROM knowledge_items WHERE id=?", (item_id,)).fetchone()
        return item_row(row) if row else None

    def items_by_ids(self, ids: Sequence[int]) -> list[KnowledgeItem]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(f"SELECT * FROM knowledge_items WHERE id IN ({marks})", list(ids)).fetchall()
        return [item_row(r) for r in rows]

    def recall_rows(self, kind: str, ids: Sequence[int]) -> list[tuple[int, str, float, float]]:
        """(id, text, confidence, timestamp) of current items or of turns, for scoring recall candidates."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        if kind == "item":
            sql = (
                f"SELECT id, content, confidence, updated_at FROM knowledge_items WHERE id IN ({marks}) "
                "AND superseded_by IS NULL AND valid_to IS NULL"
            )
        else:
            sql = f"SELECT id, user_text, 0.5, created_at FROM turns WHERE id IN ({marks})"
        return [(int(r[0]), str(r[1]), float(r[2]), float(r[3])) for r in self.db.execute(sql, list(ids))]

    def current_items(
        self, entity: str | None = None, attribute: str | None = None, category: str | None = None
    ) -> list[KnowledgeItem]:
        sql = "SELECT * FROM knowledge_items WHERE superseded_by IS NULL AND valid_to IS NULL"
        args: list[Any] = []
        if entity is not None:
            sql += " AND entity=?"
            args.append(normalize(entity))
        if attribute is not None:
            sql += " AND attribute=?"
            args.append(attribute)
        if category is not None:
            sql += " AND category=?"
            args.append(category)
        return [item_row(r) for r in self.db.execute(sql + " ORDER BY id", args).fetchall()]

    def similar_current(self, content: str, entity: str, limit: int = 20) -> list[KnowledgeItem]:
        """Current items about ``entity`` sharing words with ``content`` (full-text candidates)."""
        hits = [i for i, _ in self.search_items_fts(content, limit=limit * 5)]
        return [it for it in self.items_by_ids(hits) if it.current and it.entity == normalize(entity)][:limit]

    def created_since(self, ts: float) -> list[KnowledgeItem]:
        rows = self.db.execute(
            "SELECT * FROM knowledge_items WHERE created_at >= ? AND superseded_by IS NULL AND valid_to IS NULL "
            "ORDER BY id",
            (ts,),
        ).fetchall()
        return [item_row(r) for r in rows]

    def all_items(self) -> list[KnowledgeItem]:
        return [item_row(r) for r in self.db.execute("SELECT * FROM knowledge_items ORDER BY id").fetchall()]

    def count_items(self, current_only: bool = True) -> int:
        sql = "SELECT COUNT(*) FROM knowledge_items"
        if current_only:
            sql += " WHERE superseded_by IS NULL AND valid_to IS NULL"
        return int(self.db.execute(sql).fetchone()[0])

    def supersede(self, old_id: int, new_id: int | None) -> None:
        """Close an item's validity; ``new_id`` is the item that replaces it (None: it simply stopped being true)."""
        now = self.now()
        self.db.execute(
            "UPDATE knowledge_items SET superseded_by=?, valid_to=?, updated_at=? WHERE id=? AND valid_to IS NULL",
            (new_id, now, now, old_id),
        )
        self._cache("item").remove([old_id])

    def reinforce(self, item_id: int, confidence: float | None = None) -> None:
        """The same thing was said again: count it and raise confidence."""
        now = self.now()
        self.db.execute(
            "UPDATE knowledge_items SET use_count=use_count+1, updated_at=?, "
            "confidence=MIN(1.0, MAX(confidence, COALESCE(?, confidence)) + 0.05) WHERE id=?",
            (now, confidence, item_id),
        )

    def touch(self, ids: Sequence[int]) -> None:
        """Items were shown to the agent."""
        if ids:
            now = self.now()
            self.db.executemany(
                "UPDATE knowledge_items SET use_count=use_count+1, last_used_at=? WHERE id=?",
                [(now, i) for i in ids],
            )

    def delete_items(self, ids: Sequence[int]) -> None:
        """Remove items for good (forget, prune), with their vectors and any pointer at them."""
        if not ids:
            return
        marks = ",".join("?" * len(ids))
        with self.transaction():
            self.db.execute(
                f"UPDATE knowledge_items SET superseded_by=NULL WHERE superseded_by IN ({marks})", list(ids)
            )
            self.db.execute(f"DELETE FROM vectors WHERE owner='item' AND owner_id IN ({marks})", list(ids))
            self.db.execute(f"DELETE FROM knowledge_items WHERE id IN ({marks})", list(ids))
        self._cache("item").remove(ids)

    def search_items_fts(self, query: str, limit: int = 50) -> list[tuple[int, float]]:
        """(id, bm25 rank; lower is better) of items matching any query word, superseded ones included
        (callers keep the current ones: a join here would cost more than it saves)."""
        match = fts_query(query)
        if not match:
            return []
        rows = self.db.execute(
            "SELECT rowid, bm25(knowledge_fts) AS r FROM knowledge_fts WHERE knowledge_fts MATCH ? ORDER BY r LIMIT ?",
            (match, limit),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    # ------------------------------------------------------------------ conversations
    def start_conversation(self, ref: str | None = None) -> int:
        cur = self.db.execute("INSERT INTO conversations(ref, started_at) VALUES (?, ?)", (ref, self.now()))
        return int(cur.lastrowid or 0)

    def end_conversation(self, conversation_id: int) -> None:
        self.db.execute("UPDATE conversations SET ended_at=? WHERE id=?", (self.now(), conversation_id))

    def conversation_ref(self, conversation_id: int) -> str | None:
        row = self.db.execute("SELECT ref FROM conversations WHERE id=?", (conversation_id,)).fetchone()
        return None if row is None else row[0]

    def add_turn(
        self,
        conversation_id: int,
        user_text: str,
        assistant_text: str,
        tool_record: list[dict[str, Any]],
        ref: str | None = None,
    ) -> int:
        user_text, _ = redact_secrets(user_text)
        assistant_text, _ = redact_secrets(assistant_text)
        record, _ = redact_secrets(json.dumps(tool_record, sort_keys=True))
        idx = self.db.execute(
            "SELECT COALESCE(MAX(idx), -1) + 1 FROM turns WHERE conversation_id=?", (conversation_id,)
        ).fetchone()[0]
        with self.transaction():
            cur = self.db.execute(
                "INSERT INTO turns(conversation_id, idx, user_text, assistant_text, tool_record, created_at, ref) "
                "VALUES (?,?,?,?,?,?,?)",
                (conversation_id, idx, user_text, assistant_text, record, self.now(), ref),
            )
            turn_id = int(cur.lastrowid or 0)
            self._put_vectors("turn", [turn_id], [user_text])
        return turn_id

    def turns(self, conversation_id: int | None = None) -> list[Turn]:
        if conversation_id is None:
            rows = self.db.execute("SELECT * FROM turns ORDER BY id").fetchall()
        else:
            rows = self.db.execute(
                "SELECT * FROM turns WHERE conversation_id=? ORDER BY idx", (conversation_id,)
            ).fetchall()
        return [turn_row(r) for r in rows]

    def turns_by_ids(self, ids: Sequence[int]) -> list[Turn]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return [turn_row(r) for r in self.db.execute(f"SELECT * FROM turns WHERE id IN ({marks})", list(ids))]

    def turn_refs(self, ids: Sequence[int]) -> dict[int, str | None]:
        """The ``ref`` (where it came from) of each turn id that exists."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(f"SELECT id, ref FROM turns WHERE id IN ({marks})", list(ids))
        return {int(r[0]): r[1] for r in rows}

    def rewrite_turn(self, turn_id: int, user_text: str, assistant_text: str) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE turns SET user_text=?, assistant_text=? WHERE id=?",
                (user_text, assistant_text, turn_id),
            )
            self._put_vectors("turn", [turn_id], [user_text])

    def search_turns_fts(self, query: str, limit: int = 50) -> list[tuple[int, float]]:
        match = fts_query(query)
        if not match:
            return []
        rows = self.db.execute(
            "SELECT rowid, bm25(turns_fts) AS r FROM turns_fts WHERE turns_fts MATCH ? ORDER BY r LIMIT ?",
            (match, limit),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def unconsolidated_conversations(self, ended_before: float) -> list[tuple[int, str | None]]:
        rows = self.db.execute(
            "SELECT id, ref FROM conversations WHERE consolidated_at IS NULL AND ended_at IS NOT NULL "
            "AND ended_at <= ? ORDER BY id",
            (ended_before,),
        ).fetchall()
        return [(int(r[0]), r[1]) for r in rows]

    def mark_consolidated(self, conversation_id: int, summary: str) -> None:
        summary, _ = redact_secrets(summary)
        self.db.execute(
            "UPDATE conversations SET summary=?, consolidated_at=? WHERE id=?",
            (summary, self.now(), conversation_id),
        )

    def summaries(self) -> list[tuple[int, str]]:
        rows = self.db.execute("SELECT id, summary FROM conversations WHERE summary IS NOT NULL ORDER BY id")
        return [(int(r[0]), str(r[1])) for r in rows]

    def set_summary(self, conversation_id: int, summary: str) -> None:
        self.db.execute("UPDATE conversations SET summary=? WHERE id=?", (summary, conversation_id))

    # ------------------------------------------------------------------ lessons
    def add_lesson(self, topic: str, content: str, tool: str | None, provenance: dict[str, Any]) -> int:
        content, _ = redact_secrets(content)
        now = self.now()
        topic = normalize(topic)
        with self.transaction():
            cur = self.db.execute(
                "INSERT INTO lessons(topic, content, tool, provenance, created_at, updated_at) VALUES (?,?,?,?,?,?)",
                (topic, content, tool, _clean_json(provenance), now, now),
            )
            new_id = int(cur.lastrowid or 0)
            self.db.execute(
                "UPDATE lessons SET superseded_by=?, updated_at=? WHERE topic=? AND id<>? AND superseded_by IS NULL",
                (new_id, now, topic, new_id),
            )
        return new_id

    def lessons(self, current_only: bool = True) -> list[Lesson]:
        sql = (
            "SELECT * FROM lessons"
            + (" WHERE superseded_by IS NULL" if current_only else "")
            + " ORDER BY id"
        )
        return [lesson_row(r) for r in self.db.execute(sql).fetchall()]

    def delete_lessons(self, ids: Sequence[int]) -> None:
        marks = ",".join("?" * len(ids))
        if ids:
            self.db.execute(
                f"UPDATE lessons SET superseded_by=NULL WHERE superseded_by IN ({marks})", list(ids)
            )
            self.db.execute(f"DELETE FROM lessons WHERE id IN ({marks})", list(ids))

    # ------------------------------------------------------------------ reminders
    def add_reminder(self, content: str, due_at: datetime, provenance: dict[str, Any]) -> int:
        content, _ = redact_secrets(content)
        now = self.now()
        cur = self.db.execute(
            "INSERT INTO reminders(content, due_at, provenance, history, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?)",
            (
                content,
                to_ts(due_at),
                _clean_json(provenance),
                json.dumps([{"op": "created", "at": now}]),
                now,
                now,
            ),
        )
        return int(cur.lastrowid or 0)

    def update_reminder(
        self, reminder_id: int, *, status: str | None = None, due_at: datetime | None = None
    ) -> None:
        row = self.db.execute("SELECT * FROM reminders WHERE id=?", (reminder_id,)).fetchone()
        if row is None:
            raise KeyError(reminder_id)
        now = self.now()
        history = json.loads(row["history"])
        new_due = row["due_at"] if due_at is None else to_ts(due_at)
        new_status = status or row["status"]
        op = "rescheduled" if due_at is not None else new_status
        history.append({"op": op, "at": now, "due_at": new_due})
        self.db.execute(
            "UPDATE reminders SET status=?, due_at=?, history=?, updated_at=? WHERE id=?",
            (new_status, new_due, json.dumps(history), now, reminder_id),
        )

    def reminders(self, status: str | None = None) -> list[Reminder]:
        if status is None:
            rows = self.db.execute("SELECT * FROM reminders ORDER BY due_at, id").fetchall()
        else:
            rows = self.db.execute("SELECT * FROM reminders WHERE status=? ORDER BY due_at, id", (status,))
        return [reminder_row(r) for r in rows]

    def delete_reminders(self, ids: Sequence[int]) -> None:
        if ids:
            self.db.execute(f"DELETE FROM reminders WHERE id IN ({','.join('?' * len(ids))})", list(ids))

    # ------------------------------------------------------------------ tombstones
    def add_tombstone(self, kind: str, value: str, reason: str = "") -> None:
        """Remember that something was forgotten, without keeping its words: values are keyed word hashes."""
        words = sorted(content_words(value))
        hashed = " ".join(sorted({word_hash(w) for w in words}))
        if hashed:
            self.db.execute(
                "INSERT OR IGNORE INTO tombstones(kind, value, reason, created_at) VALUES (?,?,?,?)",
                (kind, hashed, reason, self.now()),
            )
            self._tombstones = None

    def tombstones(self) -> list[Tombstone]:
        if self._tombstones is None:
            rows = self.db.execute("SELECT * FROM tombstones ORDER BY id").fetchall()
            self._tombstones = [
                Tombstone(int(r["id"]), r["kind"], r["value"], r["reason"], from_ts(r["created_at"]))
                for r in rows
            ]
        return self._tombstones

    def forgotten_by(self, text: str, entity: str | None = None) -> Tombstone | None:
        """The tombstone that forbids storing ``text`` (about ``entity``), or None."""
        tombs = self.tombstones()
        if not tombs:
            return None
        words = {word_hash(w) for w in content_words(text)}
        ent = " ".join(sorted({word_hash(w) for w in normalize(entity or "").split()}))
        for t in tombs:
            gone = set(t.value.split())
            if t.kind in ("entity", "term") and (ent == t.value or gone <= words):
                return t
            if t.kind == "content" and gone and words and len(gone & words) / len(gone | words) >= 0.6:
                return t
        return None

    def purge(self) -> None:
        """Make deletions final on disk: merge FTS segments (dropping deleted terms) and checkpoint the WAL."""
        self.db.execute("INSERT INTO knowledge_fts(knowledge_fts) VALUES ('optimize')")
        self.db.execute("INSERT INTO turns_fts(turns_fts) VALUES ('optimize')")
        if self.path != ":memory:":
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ------------------------------------------------------------------ whole-store views
    def holds(self, text: str) -> list[str]:
        """Where ``text`` (case-insensitive) can still be found: in any stored text, or in the file's bytes."""
        where: list[str] = []
        needle = text.lower()
        if needle in self.dump_text().lower():
            where.append("stored text")
        if self.path != ":memory:":
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            for suffix in ("", "-wal"):
                f = Path(self.path + suffix)
                if f.exists() and needle.encode() in f.read_bytes().lower():
                    where.append(f"database file{suffix or ''} bytes")
        return where

    def dump_text(self) -> str:
        """Every piece of text the store holds (items, turns, tool records, summaries, lessons, reminders)."""
        parts: list[str] = []
        parts += [r[0] for r in self.db.execute("SELECT content FROM knowledge_items")]
        for r in self.db.execute("SELECT user_text, assistant_text, tool_record FROM turns"):
            parts += [r[0], r[1], r[2]]
        parts += [
            r[0] for r in self.db.execute("SELECT summary FROM conversations WHERE summary IS NOT NULL")
        ]
        parts += [r[0] for r in self.db.execute("SELECT content FROM lessons")]
        parts += [r[0] for r in self.db.execute("SELECT content FROM reminders")]
        return "\n".join(parts)


class _Tx:
    """BEGIN/COMMIT around a block on an autocommit connection; nested blocks join the outer one."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.outer = False

    def __enter__(self) -> _Tx:
        if not self.db.in_transaction:
            self.db.execute("BEGIN")
            self.outer = True
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self.outer:
            self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _clean_json(value: Any) -> str:
    """JSON with secrets redacted (provenance quotes the user's words, which may hold a password)."""
    return redact_secrets(json.dumps(value, sort_keys=True))[0]


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression: the text's meaningful words, OR-ed, each quoted."""
    words = sorted(content_words(text))
    return " OR ".join(f'"{w}"' for w in words if re.fullmatch(r"[a-z0-9']+", w))


_TOMBSTONE_KEY = b"assay-memory-tombstone-v1"


def word_hash(word: str) -> str:
    """A keyed hash of one word: tombstones match forgotten words without storing them."""
    return hashlib.blake2b(word.strip(".,!?;:'\"").encode(), digest_size=8, key=_TOMBSTONE_KEY).hexdigest()


def content_fingerprint(text: str) -> str:
    return " ".join(sorted(content_words(text)))


def text_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode()).hexdigest()[:16]
