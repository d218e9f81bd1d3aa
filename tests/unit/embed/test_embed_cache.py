"""CachedEmbedder: memory LRU, on-disk checksummed entries (the shared vector store), corruption handling."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.embed import CachedEmbedder, Embedder, HashEmbedder, default_cache_dir
from assay.embed._cache import text_key
from assay.embed.vector_store import VectorCache, identity_of


class CountingEmbedder:
    """A real HashEmbedder that records every text it is asked to embed."""

    def __init__(self, dim: int = 32) -> None:
        self.inner = HashEmbedder(dim=dim)
        self.name = "counting"
        self.dim = dim
        self.max_tokens = 1000
        self.calls: list[list[str]] = []

    @property
    def id(self) -> str:
        return "counting:" + self.inner.id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]


def _files(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*.vec"))


def test_same_vectors_and_protocol(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    texts = ["alpha beta", "gamma", "alpha beta", "delta epsilon"]
    out = cached.embed(texts)
    np.testing.assert_array_equal(out, inner.inner.embed(texts))
    assert out.dtype == np.float32 and out.shape == (4, 32)
    assert isinstance(cached, Embedder)
    assert (cached.id, cached.name, cached.dim, cached.max_tokens) == (inner.id, "counting", 32, 1000)
    assert inner.embedded == ["alpha beta", "gamma", "delta epsilon"]  # duplicates embedded once
    assert cached.embed([]).shape == (0, 32)


def test_memory_hits_then_disk_hits(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    cached.embed(["one", "two"])
    assert (cached.stats.misses, cached.stats.hits) == (2, 0)
    cached.embed(["two", "one", "three"])
    assert cached.stats.memory_hits == 2 and cached.stats.misses == 3
    assert inner.embedded == ["one", "two", "three"]

    # A new process (new wrapper, empty memory) reads the disk cache and computes nothing.
    inner2 = CountingEmbedder()
    again = CachedEmbedder(inner2, cache_dir=tmp_path)
    out = again.embed(["three", "one", "two"])
    assert inner2.calls == []
    assert again.stats.disk_hits == 3
    np.testing.assert_array_equal(out, inner2.inner.embed(["three", "one", "two"]))


def test_disk_layout_is_the_shared_checksummed_store(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    cached.embed(["hello"])
    assert cached.directory is not None and cached.directory.parent == tmp_path
    meta = json.loads((cached.directory / "embedder.json").read_text())
    assert meta == {"schema_version": 2, "id": inner.id, "name": "counting", "dim": 32}
    store = VectorCache.in_folder(cached.directory, identity_of(inner.id, 32), 32)
    key = store.key("hello")
    assert key != text_key("hello")  # the entry key binds the embedder identity too
    path = cached.entry_path("hello")
    assert path == cached.directory / key[:2] / f"{key}.vec"
    assert _files(tmp_path) == [path]
    want = inner.inner.embed(["hello"])[0]
    assert path.read_bytes() == store.encode(key, want)  # byte for byte the code index's format


def _flip_bit(p: Path, offset: int, bit: int = 0) -> None:
    blob = bytearray(p.read_bytes())
    blob[offset] ^= 1 << bit
    p.write_bytes(bytes(blob))


def _flip_mantissa_lsb(p: Path) -> None:
    """Flip the lowest mantissa bit of the first non-zero value (the old .npy checks would serve the result)."""
    header = 76  # magic, version, dtype, dim, key, payload sha256
    values = np.frombuffer(p.read_bytes()[header:], dtype="<f4")
    i = int(np.flatnonzero(values)[0])
    _flip_bit(p, header + 4 * i, 0)
    damaged = np.frombuffer(p.read_bytes()[header:], dtype="<f4")
    assert damaged[i] != values[i] and np.all(np.isfinite(damaged))
    assert abs(float(np.dot(damaged, damaged)) - 1.0) < 1e-3


def _as_npy(p: Path) -> None:
    with p.open("wb") as fh:
        np.save(fh, np.ones(32, dtype=np.float32) / np.sqrt(32), allow_pickle=False)


def _rewrite(p: Path, vec: np.ndarray) -> None:
    """A well-formed entry (right key, valid checksum) holding ``vec``: only the value checks can refuse it."""
    store = VectorCache.in_folder(p.parent.parent, identity_of("counting:" + HashEmbedder(dim=32).id, 32), 32)
    blob = store.encode(p.stem, np.zeros(32, dtype=np.float32))
    payload = np.ascontiguousarray(vec, dtype="<f4").tobytes()
    header = bytearray(blob[: len(blob) - 128])
    header[-32:] = hashlib.sha256(payload).digest()
    p.write_bytes(bytes(header) + payload)


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b""),
        lambda p: p.write_bytes(p.read_bytes()[:-40]),
        lambda p: p.write_bytes(b"AVEC garbage that is not a header"),
        _flip_mantissa_lsb,  # still finite and unit length: only the checksum catches it
        lambda p: _flip_bit(p, 76 + 4 * 5 + 3, 6),  # an exponent bit of the sixth value
        lambda p: _flip_bit(p, 12, 0),  # one bit of the stored key
        lambda p: _rewrite(p, np.full(32, np.nan, dtype=np.float32)),
        lambda p: _rewrite(p, np.ones(32, dtype=np.float32)),  # valid checksum, not unit length
        _as_npy,  # a plain .npy (the old format) in its place
    ],
    ids=[
        "empty",
        "truncated",
        "bad-header",
        "flip-mantissa-bit",
        "flip-value-bit",
        "flip-key-bit",
        "nan",
        "not-unit",
        "npy",
    ],
)
def test_corrupt_entries_are_recomputed_and_rewritten(tmp_path: Path, damage) -> None:
    first = CachedEmbedder(CountingEmbedder(), cache_dir=tmp_path)
    first.embed(["kept", "damaged"])
    path = first.entry_path("damaged")
    assert path is not None and path in _files(tmp_path)
    sound = path.read_bytes()
    damage(path)
    assert path.read_bytes() != sound

    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    out = cached.embed(["kept", "damaged"])
    assert inner.embedded == ["damaged"]
    assert cached.stats.corrupt == 1 and cached.stats.disk_hits == 1
    np.testing.assert_array_equal(out, inner.inner.embed(["kept", "damaged"]))
    # and the entry was repaired on disk
    assert path.read_bytes() == sound
    fresh = CountingEmbedder()
    CachedEmbedder(fresh, cache_dir=tmp_path).embed(["damaged"])
    assert fresh.calls == []


def test_old_unchecksummed_npy_entries_are_absent_and_rewritten(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    assert cached.directory is not None
    # The schema-1 layout: embedder.json naming this id, ab/<sha256(text)>.npy, no checksum.
    cached.directory.mkdir(parents=True)
    meta = {"schema_version": 1, "id": inner.id, "name": "counting", "dim": 32}
    (cached.directory / "embedder.json").write_text(json.dumps(meta))
    key = text_key("old")
    (cached.directory / key[:2]).mkdir()
    np.save(cached.directory / key[:2] / f"{key}.npy", np.ones(32, dtype=np.float32) / np.sqrt(32))
    out = cached.embed(["old"])
    assert inner.embedded == ["old"] and cached.stats.misses == 1 and cached.stats.disk_hits == 0
    np.testing.assert_array_equal(out[0], inner.inner.embed(["old"])[0])
    assert _files(tmp_path) == [cached.entry_path("old")]


def test_other_embedders_never_share_vectors(tmp_path: Path) -> None:
    a = CachedEmbedder(HashEmbedder(dim=32), cache_dir=tmp_path)
    b = CachedEmbedder(HashEmbedder(dim=32, char_ngrams=4), cache_dir=tmp_path)
    a.embed(["same text"])
    b.embed(["same text"])
    assert a.directory != b.directory
    assert b.stats.misses == 1 and b.stats.hits == 0


def test_directory_claimed_by_another_id_is_not_used(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    assert cached.directory is not None
    cached.directory.mkdir(parents=True)
    (cached.directory / "embedder.json").write_text(json.dumps({"id": "someone-else"}))
    cached.embed(["x"])
    cached.clear_memory()
    cached.embed(["x"])
    assert inner.embedded == ["x", "x"]
    assert _files(tmp_path) == []


def test_lru_is_bounded(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, memory_items=2, cache_dir=False)
    cached.embed(["a", "b"])
    cached.embed(["a"])  # a is now most recent
    cached.embed(["c"])  # evicts b
    cached.embed(["a", "b"])
    assert inner.embedded == ["a", "b", "c", "b"]
    assert cached.directory is None
    assert _files(tmp_path) == []


def test_default_dir_follows_assay_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / "cache" / "embeddings"
    cached = CachedEmbedder(CountingEmbedder())
    cached.embed(["x"])
    assert len(_files(tmp_path / "home" / "cache" / "embeddings")) == 1


def test_unwritable_cache_dir_still_embeds(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache_dir=blocker / "sub")
    out = cached.embed(["a", "b"])
    assert out.shape == (2, 32)
    assert cached.stats.write_errors >= 1


def test_one_string_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        CachedEmbedder(CountingEmbedder(), cache_dir=tmp_path).embed("abc")  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=30), max_size=12))
def test_cached_equals_uncached_for_any_texts(tmp_path: Path, texts: list[str]) -> None:
    inner = HashEmbedder(dim=16)
    cached = CachedEmbedder(inner, memory_items=5, cache_dir=tmp_path)
    np.testing.assert_array_equal(cached.embed(texts), inner.embed(texts))
    np.testing.assert_array_equal(cached.embed(texts[::-1]), inner.embed(texts[::-1]))
