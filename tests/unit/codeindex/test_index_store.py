from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from assay.codeindex import CodeIndex, StaleIndexError
from assay.embed import HashEmbedder
from assay.errors import IndexCorruptError
from assay.evals.retrieval._code_robust import damage_index

FILES = {
    "src/shop/cart.py": '''"""Shopping cart."""


class Cart:
    """Holds items a customer wants to buy."""

    def add_item(self, sku, quantity):
        self.items[sku] = self.items.get(sku, 0) + quantity

    def total_price(self, prices):
        return sum(prices[s] * q for s, q in self.items.items())
''',
    "src/shop/payment.py": '''def charge_credit_card(card_number, amount):
    """Send a charge to the payment gateway and return the receipt id."""
    return gateway.charge(card_number, amount)


def refund(receipt_id):
    return gateway.refund(receipt_id)
''',
    "src/shop/shipping.py": '''def shipping_cost(weight_kg, country):
    """Cost of shipping a parcel abroad."""
    base = 5.0 if country == "DE" else 12.0
    return base + 1.5 * weight_kg
''',
    "web/app.js": "function renderBasket(items) {\n  return items.map(i => i.name).join(', ');\n}\n",
    "README.md": "# Shop\n\nA tiny shop used in tests.\n",
}


def make_repo(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path, CodeIndex]:
    repo = make_repo(tmp_path / "repo")
    idx = CodeIndex(repo, HashEmbedder(), index_dir=tmp_path / "idx")
    idx.update()
    return repo, tmp_path / "idx", idx


def test_search_levels_find_the_right_code(built: tuple[Path, Path, CodeIndex]) -> None:
    _, _, idx = built
    files = [h.path for h in idx.search("charge the credit card payment", 3, level="file")]
    assert files[0] == "src/shop/payment.py"
    symbols = [(h.path, h.symbol) for h in idx.search("cart total price", 5, level="symbol")]
    assert ("src/shop/cart.py", "Cart.total_price") in symbols[:2]
    assert len({h.path for h in idx.search("shipping", 10, level="file")}) == len(
        idx.search("shipping", 10, level="file")
    )
    assert idx.search("renderBasket", 1)[0].path == "web/app.js"
    assert [h.rank for h in idx.search("refund", 4)] == [1, 2, 3, 4]


def test_default_location_is_under_assay_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    repo = make_repo(tmp_path / "r")
    idx = CodeIndex(repo, HashEmbedder())
    idx.update()
    assert idx.index_dir.parent == tmp_path / "home" / "code_index"
    assert (idx.index_dir / "metadata.json").is_file()


def test_reload_gives_identical_results(built: tuple[Path, Path, CodeIndex]) -> None:
    repo, idx_dir, idx = built
    again = CodeIndex.open(repo, HashEmbedder(), index_dir=idx_dir, on_damage="raise")
    assert again.chunks == idx.chunks
    np.testing.assert_array_equal(again.vectors, idx.vectors)
    assert again.search("refund a receipt", 5) == idx.search("refund a receipt", 5)
    meta = json.loads((idx_dir / "metadata.json").read_text())
    assert meta["embedder_id"] == HashEmbedder().id and meta["dim"] == 384 and meta["schema_version"] >= 1
    assert set(meta["files"]) == set(FILES)


def test_incremental_update_equals_fresh_build(built: tuple[Path, Path, CodeIndex], tmp_path: Path) -> None:
    repo, _, idx = built
    (repo / "src/shop/shipping.py").write_text(
        FILES["src/shop/shipping.py"] + "\n\ndef free_shipping():\n    return 0\n"
    )
    (repo / "src/shop/payment.py").unlink()
    (repo / "src/shop/tax.py").write_text("def vat(amount):\n    return amount * 0.19\n")
    stats = idx.update()
    assert (stats.files_added, stats.files_changed, stats.files_removed) == (1, 1, 1)
    assert stats.files_unchanged == 3
    # only new texts are embedded: shipping_cost kept its text (and vector), free_shipping and vat are new
    assert (stats.chunks_embedded, stats.chunks_reused, stats.chunks_cached) == (2, 1, 0)
    assert stats.chunks_embedded + stats.chunks_reused == sum(
        1 for c in idx.chunks if c.path in {"src/shop/shipping.py", "src/shop/tax.py"}
    )
    fresh = CodeIndex(repo, HashEmbedder(), index_dir=tmp_path / "fresh", vector_cache=False)
    fresh.update()
    assert fresh.chunks == idx.chunks
    cos = np.sum(fresh.vectors * idx.vectors, axis=1)
    assert cos.min() > 0.999
    nothing = idx.update()
    assert nothing.chunks_embedded == 0 and nothing.files_unchanged == 5


DAMAGE = {
    "truncated_vectors": "garbage_vectors",
    "empty_vectors": "empty_vectors",
    "garbage_vectors": "garbage_vectors",
    "missing_vectors": "missing_vectors",
    "truncated_metadata": "garbage_metadata",
    "missing_metadata": "missing_metadata",
    "dropped_chunk": "chunk_table",
    "other_embedder": "embedder_mismatch",
    "old_schema": "old_schema",
    "vector_count": "vector_count",
}


@pytest.mark.parametrize("mode", sorted(DAMAGE))
def test_damaged_index_is_refused_or_rebuilt(
    built: tuple[Path, Path, CodeIndex], tmp_path: Path, mode: str
) -> None:
    repo, idx_dir, good = built
    copy = tmp_path / f"copy-{mode}"
    shutil.copytree(idx_dir, copy)
    damage_index(copy, mode)
    with pytest.raises(IndexCorruptError) as err:
        CodeIndex.load(copy, HashEmbedder())
    assert err.value.reason == DAMAGE[mode]  # type: ignore[attr-defined]
    assert str(copy) in str(err.value)
    if mode == "old_schema":
        assert isinstance(err.value, StaleIndexError)
    rebuilt = CodeIndex.open(repo, HashEmbedder(), index_dir=copy)
    assert rebuilt.damage is not None and rebuilt.chunks == []
    stats = rebuilt.update()
    # every vector comes back from the (separately verified) vector cache the first build filled
    assert stats.rebuilt_reason and stats.chunks_embedded == 0 and stats.chunks_cached == len(good.chunks)
    assert rebuilt.search("refund", 5) == good.search("refund", 5)
    assert CodeIndex.load(copy, HashEmbedder()).chunks == good.chunks


def test_crash_between_renames_leaves_the_previous_index_loadable(
    built: tuple[Path, Path, CodeIndex],
) -> None:
    repo, idx_dir, good = built
    before = good.search("shipping cost", 5)
    (repo / "src/shop/shipping.py").write_text("def teleport():\n    return 'instant'\n")
    crashing = CodeIndex.open(repo, HashEmbedder(), index_dir=idx_dir)
    crashing.update(_crash_between_renames=True)
    assert any(p.name.endswith(".tmp") for p in idx_dir.iterdir())
    survivor = CodeIndex.load(idx_dir, HashEmbedder())
    assert survivor.search("shipping cost", 5) == before
    assert survivor.load_report.leftovers == ["metadata.json.tmp"]
    assert any("orphan" in n or "no metadata refers" in n for n in survivor.load_report.notes)
    # the next writer clears the leftovers and commits the new state
    after = CodeIndex.open(repo, HashEmbedder(), index_dir=idx_dir)
    after.update()
    assert not any(p.name.endswith(".tmp") for p in idx_dir.iterdir())
    assert len(list(idx_dir.glob("vectors-*.faiss"))) == 1
    assert CodeIndex.load(idx_dir, HashEmbedder()).search("teleport", 1)[0].symbol == "teleport"


def test_other_embedder_is_refused_when_strict(built: tuple[Path, Path, CodeIndex]) -> None:
    repo, idx_dir, _ = built
    with pytest.raises(IndexCorruptError, match="embedder"):
        CodeIndex.open(repo, HashEmbedder(dim=128), index_dir=idx_dir, on_damage="raise")


def test_concurrent_writers_take_turns_and_leave_one_consistent_index(tmp_path: Path) -> None:
    import threading

    repo = make_repo(tmp_path / "repo")
    a = CodeIndex(repo, HashEmbedder(), index_dir=tmp_path / "idx")
    b = CodeIndex(repo, HashEmbedder(), index_dir=tmp_path / "idx")
    errors: list[BaseException] = []

    def run(idx: CodeIndex) -> None:
        try:
            idx.update()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    final = CodeIndex.load(tmp_path / "idx", HashEmbedder())
    assert final.chunks == a.chunks == b.chunks
    assert not [p for p in (tmp_path / "idx").iterdir() if p.name.endswith(".tmp")]
    # the second writer found the first one's save and had nothing left to embed
    assert sorted([a.generation, b.generation]) == [1, 1]


def test_public_names_are_exported() -> None:
    import assay.codeindex as ci

    assert sorted(ci.__all__) == sorted(set(ci.__all__))
    for name in ci.__all__:
        assert getattr(ci, name) is not None
