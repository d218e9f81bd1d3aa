from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from assay.embed import HashEmbedder
from assay.errors import ConfigError
from assay.memory import ManualClock, MemoryStore
from assay.memory._migrations import MIGRATIONS, migrate, schema_version

TABLES = {
    "knowledge_items",
    "knowledge_fts",
    "conversations",
    "turns",
    "turns_fts",
    "lessons",
    "reminders",
    "tombstones",
    "vectors",
    "store_meta",
}


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_migrations_apply_once_in_order() -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    numbers = [n for n, _, _ in MIGRATIONS]
    assert numbers == list(range(1, len(numbers) + 1))
    assert migrate(db) == numbers
    assert migrate(db) == []
    assert schema_version(db) == numbers[-1]
    assert _tables(db) >= TABLES


def test_older_database_is_brought_up_to_date() -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE _migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL)")
    for number, name, fn in MIGRATIONS[:2]:
        db.executescript(
            "BEGIN;" + fn() + f"; INSERT INTO _migrations VALUES ({number}, '{name}', 0); COMMIT;"
        )
    assert schema_version(db) == 2
    assert "lessons" not in _tables(db)
    assert migrate(db) == [n for n, _, _ in MIGRATIONS[2:]]
    assert _tables(db) >= TABLES


def test_newer_database_is_refused() -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)
    migrate(db)
    db.execute("INSERT INTO _migrations VALUES (999, 'future', 0)")
    with pytest.raises(RuntimeError, match="newer"):
        migrate(db)


def test_file_store_uses_wal_and_fts5(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", embedder=HashEmbedder(), clock=ManualClock())
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    sql = store.db.execute("SELECT sql FROM sqlite_master WHERE name='knowledge_fts'").fetchone()[0]
    assert "fts5" in sql.lower()
    store.close()


def test_embedder_is_recorded_and_enforced(tmp_path: Path) -> None:
    MemoryStore(tmp_path / "m.db", embedder=HashEmbedder(dim=64)).close()
    with pytest.raises(ConfigError, match="embedder"):
        MemoryStore(tmp_path / "m.db", embedder=HashEmbedder(dim=128))
