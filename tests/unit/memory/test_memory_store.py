from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from assay.embed import HashEmbedder
from assay.memory import ItemDraft, ManualClock, MemoryStore

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _store(path: Path, clock: ManualClock) -> MemoryStore:
    return MemoryStore(path, embedder=HashEmbedder(), clock=clock)


def test_items_take_time_from_the_injected_clock(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    clock.advance(timedelta(days=40))
    item = store.get_item(store.add_item(ItemDraft("User lives in Austin", attribute="city")))
    assert item is not None
    assert item.created_at == START + timedelta(days=40)
    assert item.valid_from == item.created_at
    assert item.current
    store.close()


def test_supersede_keeps_history(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    old = store.add_item(ItemDraft("User lives in Austin", attribute="city"))
    clock.advance(timedelta(days=30))
    new = store.add_item(ItemDraft("User lives in Denver", attribute="city"))
    store.supersede(old, new)
    gone = store.get_item(old)
    assert gone is not None and not gone.current
    assert gone.superseded_by == new
    assert gone.valid_to == START + timedelta(days=30)
    assert [it.content for it in store.current_items()] == ["User lives in Denver"]
    assert len(store.all_items()) == 2
    ids, _ = store.vector_scores("item", HashEmbedder().embed(["Austin"])[0])
    assert old not in ids.tolist()
    store.close()


def test_delete_removes_rows_vectors_and_search_hits(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    keep = store.add_item(ItemDraft("User likes Thai food"))
    drop = store.add_item(ItemDraft("User's manager is Rosa"))
    assert store.search_items_fts("Rosa")
    store.delete_items([drop])
    assert store.get_item(drop) is None
    assert store.search_items_fts("Rosa") == []
    assert store.db.execute("SELECT COUNT(*) FROM vectors WHERE owner_id=?", (drop,)).fetchone()[0] == 0
    assert store.get_item(keep) is not None
    store.close()


def test_secrets_never_stored_in_clear(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    item_id = store.add_item(
        ItemDraft("The wifi password is hunter22x", provenance={"evidence": "the wifi password is hunter22x"})
    )
    conv = store.start_conversation("c1")
    store.add_turn(
        conv, "the wifi password is hunter22x", "ok", [{"name": "x", "arguments": {"password": "hunter22x"}}]
    )
    item = store.get_item(item_id)
    assert item is not None and item.sensitive
    assert store.holds("hunter22x") == []
    store.close()


def test_lessons_replace_by_topic(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    first = store.add_lesson("Running tests", "use make test", "shell", {})
    second = store.add_lesson("running tests", "use just test", "shell", {})
    assert [ls.id for ls in store.lessons()] == [second]
    old = next(ls for ls in store.lessons(current_only=False) if ls.id == first)
    assert old.superseded_by == second
    store.close()


def test_reminder_lifecycle_keeps_history(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    rid = store.add_reminder("Call the plumber", START + timedelta(days=4), {})
    store.update_reminder(rid, due_at=START + timedelta(days=8))
    store.update_reminder(rid, status="done")
    (rem,) = store.reminders()
    assert rem.status == "done"
    assert rem.due_at == START + timedelta(days=8)
    assert [h["op"] for h in rem.history] == ["created", "rescheduled", "done"]
    assert store.reminders("open") == []
    store.close()


def test_tombstones_do_not_keep_the_forgotten_words(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    store.add_tombstone("term", "Zyxwarbly")
    store.add_tombstone("content", "User's secret project is Quuxplorer")
    assert store.forgotten_by("Zyxwarbly called again") is not None
    assert store.forgotten_by("the secret project Quuxplorer is User's") is not None
    assert store.forgotten_by("User likes tea") is None
    assert store.holds("zyxwarbly") == []
    assert store.holds("quuxplorer") == []
    store.close()


def test_reopening_keeps_everything(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    store.add_item(ItemDraft("User lives in Austin", attribute="city"))
    store.close()
    again = _store(db_path, clock)
    assert [it.content for it in again.current_items()] == ["User lives in Austin"]
    ids, sims = again.vector_scores("item", HashEmbedder().embed(["lives in Austin"])[0])
    assert len(ids) == 1 and sims[0] > 0.5
    again.close()
