from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from assay.embed import HashEmbedder
from assay.memory import ItemDraft, ManualClock, MemoryStore, RecallWeights, recall


def _store(path: Path, clock: ManualClock) -> MemoryStore:
    return MemoryStore(path, embedder=HashEmbedder(), clock=clock)


def test_hybrid_recall_finds_the_matching_item_among_many(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    store.add_items([ItemDraft(f"User's hobby number {i} is collecting item {i}") for i in range(200)])
    target = store.add_item(ItemDraft("User's dentist is Dr. Okafor at Smile Studio"))
    hits = recall(store, "Book a dentist cleaning", k=3)
    assert hits[0].id == target
    assert hits[0].fts > 0 and hits[0].vector > 0
    store.close()


def test_stemming_matches_plural_and_singular(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    target = store.add_item(ItemDraft("User banks with Harbor Credit Union"))
    store.add_item(ItemDraft("User likes hiking"))
    assert recall(store, "set up direct deposit with my bank", k=1)[0].id == target
    store.close()


def test_superseded_items_are_not_recalled(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    old = store.add_item(ItemDraft("User lives in Austin", attribute="city"))
    new = store.add_item(ItemDraft("User lives in Denver", attribute="city"))
    store.supersede(old, new)
    assert [h.id for h in recall(store, "where does the user live, Austin?", k=5)] == [new]
    store.close()


def test_recency_and_confidence_break_ties(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    older = store.add_item(ItemDraft("User plays chess on Sundays", confidence=0.8))
    clock.advance(timedelta(days=120))
    newer = store.add_item(ItemDraft("User plays chess on Sundays at the club", confidence=0.8))
    weights = RecallWeights(vector=0.0, fts=0.0, recency=1.0, confidence=0.0)
    assert [h.id for h in recall(store, "chess", k=2, weights=weights)] == [newer, older]
    low = store.add_item(ItemDraft("User plays chess badly", confidence=0.1))
    weights = RecallWeights(vector=0.0, fts=0.0, recency=0.0, confidence=1.0)
    assert recall(store, "chess", k=3, weights=weights)[-1].id == low
    store.close()


def test_nothing_unrelated_is_recalled(db_path: Path, clock: ManualClock) -> None:
    store = _store(db_path, clock)
    store.add_item(ItemDraft("User's car is a Subaru Outback"))
    assert recall(store, "quantum chromodynamics lecture", k=5) == []
    store.close()
