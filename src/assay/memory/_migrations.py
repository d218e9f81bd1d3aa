"""The memory store's schema, changed only through numbered migrations applied once each.

Each migration is a function registered in order; ``migrate`` records what ran in ``_migrations`` so that
opening an older database brings it up to date and opening a current one does nothing.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

__all__ = ["MIGRATIONS", "migrate", "schema_version"]

Migration = Callable[[], str]
MIGRATIONS: list[tuple[int, str, Migration]] = []


def _migration(number: int, name: str) -> Callable[[Migration], Migration]:
    def register(fn: Migration) -> Migration:
        if MIGRATIONS and MIGRATIONS[-1][0] != number - 1:
            raise RuntimeError(f"memory migration {number} registered out of order")
        MIGRATIONS.append((number, name, fn))
        return fn

    return register


@_migration(1, "knowledge items")
def _m001_knowledge() -> str:
    return """
        CREATE TABLE knowledge_items (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            content TEXT NOT NULL,
            category TEXT NOT NULL DEFAULT 'fact',
            entity TEXT NOT NULL DEFAULT 'user',
            attribute TEXT,
            source TEXT NOT NULL
                CHECK (source IN ('user', 'assistant', 'tool', 'document', 'third_party')),
            provenance TEXT NOT NULL DEFAULT '{}',
            confidence REAL NOT NULL DEFAULT 0.8 CHECK (confidence >= 0 AND confidence <= 1),
            use_count INTEGER NOT NULL DEFAULT 0,
            valid_from REAL NOT NULL,
            valid_to REAL,
            superseded_by INTEGER REFERENCES knowledge_items(id),
            sensitive INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_used_at REAL
        );
        CREATE INDEX knowledge_current ON knowledge_items(superseded_by, valid_to);
        CREATE INDEX knowledge_slot ON knowledge_items(entity, attribute);
        CREATE VIRTUAL TABLE knowledge_fts USING fts5(
            content, entity, content='knowledge_items', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER knowledge_ai AFTER INSERT ON knowledge_items BEGIN
            INSERT INTO knowledge_fts(rowid, content, entity) VALUES (new.id, new.content, new.entity);
        END;
        CREATE TRIGGER knowledge_ad AFTER DELETE ON knowledge_items BEGIN
            INSERT INTO knowledge_fts(knowledge_fts, rowid, content, entity)
                VALUES ('delete', old.id, old.content, old.entity);
        END;
        CREATE TRIGGER knowledge_au AFTER UPDATE OF content, entity ON knowledge_items BEGIN
            INSERT INTO knowledge_fts(knowledge_fts, rowid, content, entity)
                VALUES ('delete', old.id, old.content, old.entity);
            INSERT INTO knowledge_fts(rowid, content, entity) VALUES (new.id, new.content, new.entity);
        END;
        """


@_migration(2, "conversations and turns with full-text search")
def _m002_conversations() -> str:
    return """
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            ref TEXT UNIQUE,
            started_at REAL NOT NULL,
            ended_at REAL,
            summary TEXT,
            consolidated_at REAL
        );
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            user_text TEXT NOT NULL,
            assistant_text TEXT NOT NULL DEFAULT '',
            tool_record TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL,
            UNIQUE (conversation_id, idx)
        );
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            user_text, assistant_text, content='turns', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER turns_ai AFTER INSERT ON turns BEGIN
            INSERT INTO turns_fts(rowid, user_text, assistant_text)
                VALUES (new.id, new.user_text, new.assistant_text);
        END;
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, user_text, assistant_text)
                VALUES ('delete', old.id, old.user_text, old.assistant_text);
        END;
        CREATE TRIGGER turns_au AFTER UPDATE OF user_text, assistant_text ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, user_text, assistant_text)
                VALUES ('delete', old.id, old.user_text, old.assistant_text);
            INSERT INTO turns_fts(rowid, user_text, assistant_text)
                VALUES (new.id, new.user_text, new.assistant_text);
        END;
        """


@_migration(3, "lessons and reminders")
def _m003_lessons_reminders() -> str:
    return """
        CREATE TABLE lessons (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            topic TEXT NOT NULL,
            content TEXT NOT NULL,
            tool TEXT,
            provenance TEXT NOT NULL DEFAULT '{}',
            confidence REAL NOT NULL DEFAULT 0.8,
            use_count INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            superseded_by INTEGER REFERENCES lessons(id)
        );
        CREATE INDEX lessons_topic ON lessons(topic, superseded_by);
        CREATE TABLE reminders (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            content TEXT NOT NULL,
            due_at REAL NOT NULL,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'cancelled')),
            history TEXT NOT NULL DEFAULT '[]',
            provenance TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX reminders_due ON reminders(status, due_at);
        """


@_migration(4, "forget tombstones")
def _m004_tombstones() -> str:
    return """
        CREATE TABLE tombstones (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('entity', 'term', 'content')),
            value TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            UNIQUE (kind, value)
        );
        """


@_migration(5, "vectors for semantic recall")
def _m005_vectors() -> str:
    return """
        CREATE TABLE vectors (
            owner TEXT NOT NULL CHECK (owner IN ('item', 'turn')),
            owner_id INTEGER NOT NULL,
            embedder TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (owner, owner_id)
        );
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """


@_migration(6, "indexes for per-turn writes and per-chat upkeep")
def _m006_upkeep_indexes() -> str:
    return """
        CREATE INDEX knowledge_category ON knowledge_items(entity, category)
            WHERE superseded_by IS NULL AND valid_to IS NULL;
        CREATE INDEX knowledge_confidence ON knowledge_items(confidence)
            WHERE superseded_by IS NULL AND valid_to IS NULL;
        CREATE INDEX knowledge_created ON knowledge_items(created_at);
        CREATE INDEX conversations_pending ON conversations(ended_at) WHERE consolidated_at IS NULL;
        """


@_migration(7, "where each imported turn came from (its source turn id)")
def _m007_turn_refs() -> str:
    return """
        ALTER TABLE turns ADD COLUMN ref TEXT;
        CREATE INDEX turns_ref ON turns(ref) WHERE ref IS NOT NULL;
        """


def schema_version(db: sqlite3.Connection) -> int:
    """The number of the last migration applied (0 for an empty database)."""
    exists = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='_migrations'").fetchone()
    if not exists:
        return 0
    row = db.execute("SELECT MAX(number) FROM _migrations").fetchone()
    return int(row[0] or 0)


def migrate(db: sqlite3.Connection) -> list[int]:
    """Apply every migration not yet applied, each in one transaction; return the numbers applied.

    The connection must be in autocommit mode (``isolation_level=None``): each migration's SQL runs
    between its own BEGIN and COMMIT together with the row that records it.
    """
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL)"
    )
    current = schema_version(db)
    latest = MIGRATIONS[-1][0]
    if current > latest:
        raise RuntimeError(f"memory database has schema {current}, newer than this assay knows ({latest})")
    applied: list[int] = []
    for number, name, fn in MIGRATIONS:
        if number <= current:
            continue
        record = (
            f"INSERT INTO _migrations(number, name, applied_at) VALUES ({number}, '{name}', {time.time()});"
        )
        try:
            db.executescript("BEGIN;\n" + fn() + "\n" + record + "\nCOMMIT;")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        applied.append(number)
    return applied
