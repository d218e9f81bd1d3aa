"""The content-addressed vector cache of the code index: only new texts are embedded, vectors equal a fresh
build's, damaged entries are rebuilt and never served, embedders never share entries, the off switch is real."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

import assay.codeindex
from assay.codeindex import CodeIndex
from assay.codeindex.index import embed_text
from assay.codeindex.vector_cache import CacheCounts, VectorCache, embedder_identity
from assay.embed import HashEmbedder
from assay.errors import ConfigError
from assay.evals.retrieval._code_robust import CACHE_DAMAGE_MODES, run_cache_damage_case

#: real source files (this package's own) make the first commit of the replayed history, under the names they
#: had when the test was written (the file it copies from: chunk.py was _chunk.py, ...)
SOURCES = {
    "_chunk.py": "chunk.py",
    "_discover.py": "discovery.py",
    "_lexical.py": "_lexical.py",
    "_store.py": "store.py",
}
PKG = Path(assay.codeindex.__file__).parent


def _commit_1(tree: Path) -> None:
    (tree / "pkg").mkdir(parents=True)
    for name, source in SOURCES.items():
        shutil.copy(PKG / source, tree / "pkg" / name)


def _commit_2(tree: Path) -> None:
    """A function added at the top of one file (every other chunk of it moves down, text unchanged) and one
    function body edited in another."""
    chunk = tree / "pkg" / "_chunk.py"
    chunk.write_text("def added_first(x):\n    return x + 1\n\n\n" + chunk.read_text())
    lexical = tree / "pkg" / "_lexical.py"
    lexical.write_text(lexical.read_text().replace("return", "return  ", 1))


def _commit_3(tree: Path) -> None:
    """A file renamed (its path is in every chunk's text, so all are new) and one deleted."""
    (tree / "pkg" / "_discover.py").rename(tree / "pkg" / "discovery.py")
    (tree / "pkg" / "_store.py").unlink()


def _commit_4(tree: Path) -> None:
    """The body edit of commit 2 reverted: those texts were embedded in commit 1 and come from the cache."""
    lexical = tree / "pkg" / "_lexical.py"
    lexical.write_text(lexical.read_text().replace("return  ", "return", 1))


COMMITS = (_commit_1, _commit_2, _commit_3, _commit_4)


def _texts(idx: CodeIndex) -> list[str]:
    return [embed_text(c) for c in idx.chunks]


def test_replay_embeds_only_new_texts_and_equals_a_fresh_build(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    idx = CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "idx", vector_cache=tmp_path / "cache")
    off = CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "off", vector_cache=False)
    previous: set[str] = set()
    ever: set[str] = set()
    for step, commit in enumerate(COMMITS):
        commit(tree)
        before = dict(off.files)
        stats, plain = idx.update(), off.update()
        texts = _texts(idx)
        changed = {t for t in texts if t not in previous}  # texts the previous commit's index lacked
        # exactly one embedding per text never seen before; the other changed ones come back by content
        assert stats.chunks_embedded == len(changed - ever), step
        assert stats.chunks_embedded + stats.chunks_reused + stats.chunks_cached == plain.chunks_embedded
        # without the cache every chunk of an added or changed file is embedded again
        touched = {p for p, f in off.files.items() if before.get(p) != f}
        assert plain.chunks_embedded == sum(off.files[p].chunks for p in touched)
        if step == 1:  # _chunk.py's chunks moved down, text unchanged: kept. New: the added function, the
            # module docstring (no longer first, so part of a module block) and the edited function
            old = sum(before[f"pkg/{n}"].chunks for n in ("_chunk.py", "_lexical.py"))
            assert stats.files_changed == 2 and stats.chunks_embedded <= 3 and stats.chunks_reused >= old - 3
        if step == 3:  # the reverted body changed against commit 3 but was embedded in commit 1
            assert changed and stats.chunks_embedded == 0 and stats.chunks_cached == len(changed)
        previous = set(texts)
        ever |= previous
    fresh = CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "fresh", vector_cache=False)
    fresh.update()
    assert fresh.chunks == idx.chunks == off.chunks
    assert np.sum(fresh.vectors * idx.vectors, axis=1).min() >= 0.9999
    np.testing.assert_array_equal(CodeIndex.load(tmp_path / "idx", HashEmbedder()).vectors, idx.vectors)


def test_real_minilm_vectors_from_the_cache_equal_a_fresh_build(tmp_path: Path) -> None:
    """The real embedder: cached vectors (embedded in other batches) against one fresh batch."""
    pytest.importorskip("onnxruntime", reason="extra 'embed' not installed")
    from assay.embed import LocalEmbedder

    emb = LocalEmbedder(threads=1)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n")
    (tree / "pkg" / "b.py").write_text('def greet(name):\n    """Say hello."""\n    return "hi " + name\n')
    idx = CodeIndex(tree, emb, index_dir=tmp_path / "idx", vector_cache=tmp_path / "cache")
    idx.update()
    (tree / "pkg" / "a.py").write_text(
        "def mul(a, b):\n    return a * b\n\n\n" + (tree / "pkg" / "a.py").read_text()
    )
    stats = idx.update()
    assert (stats.chunks_embedded, stats.chunks_reused) == (1, 2)
    again = CodeIndex(tree, emb, index_dir=tmp_path / "again", vector_cache=tmp_path / "cache")
    assert again.update().chunks_cached == len(idx.chunks) == 4
    fresh = CodeIndex(tree, emb, index_dir=tmp_path / "fresh", vector_cache=False)
    fresh.update()
    assert fresh.chunks == idx.chunks == again.chunks
    assert np.sum(fresh.vectors * idx.vectors, axis=1).min() >= 0.9999
    assert np.sum(fresh.vectors * again.vectors, axis=1).min() >= 0.9999


@pytest.mark.parametrize("mode", sorted(CACHE_DAMAGE_MODES))
def test_damaged_cache_entry_is_rebuilt_never_served(tmp_path: Path, mode: str) -> None:
    detail = run_cache_damage_case(tmp_path, mode, HashEmbedder())
    assert detail["outcome"] == CACHE_DAMAGE_MODES[mode], detail
    assert detail["cosine"] >= 0.9999  # the index holds the true vector, not the damaged one


def test_the_case_fails_a_cache_that_serves_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the checks (entries decoded as they are) the damaged entry is served and the case says so."""

    def unchecked(self: VectorCache, key: str, blob: bytes) -> np.ndarray:
        return np.frombuffer(blob[-4 * self.dim :], dtype="<f4").astype(np.float32)

    monkeypatch.setattr(VectorCache, "_decode", unchecked)
    assert run_cache_damage_case(tmp_path, "other_text", HashEmbedder())["outcome"] == "silent-wrong"


def test_damaged_entries_are_not_returned(tmp_path: Path) -> None:
    emb = HashEmbedder(dim=16)
    cache = VectorCache(tmp_path, emb)
    keys = [cache.key(t) for t in ("alpha", "beta")]
    cache.put_many(dict(zip(keys, emb.embed(["alpha", "beta"]), strict=True)), CacheCounts())
    path = cache.path(keys[1])
    blob = bytearray(path.read_bytes())
    blob[-4 * 16] ^= 0x01  # the lowest mantissa bit of the first value: only the checksum can tell
    flipped = np.frombuffer(bytes(blob[-4 * 16 :]), dtype="<f4")
    assert abs(float(np.dot(flipped, flipped)) - 1.0) < 1e-5 and not np.array_equal(
        flipped, emb.embed(["beta"])[0]
    )
    path.write_bytes(bytes(blob))
    counts = CacheCounts()
    got = cache.get_many([*keys, cache.key("gamma")], counts)
    assert list(got) == [keys[0]] and (counts.hits, counts.damaged, counts.misses) == (1, 1, 1)
    np.testing.assert_array_equal(got[keys[0]], emb.embed(["alpha"])[0])


def test_two_embedders_never_share_entries(tmp_path: Path) -> None:
    a, b = HashEmbedder(), HashEmbedder(char_ngrams=4)  # same name and dim, other vectors
    assert embedder_identity(a) != embedder_identity(b)
    ca, cb = VectorCache(tmp_path, a), VectorCache(tmp_path, b)
    assert ca.directory != cb.directory and ca.key("same text") != cb.key("same text")
    tree = tmp_path / "tree"
    _commit_1(tree)
    first = CodeIndex(tree, a, index_dir=tmp_path / "ia", vector_cache=tmp_path)
    first.update()
    other = CodeIndex(tree, b, index_dir=tmp_path / "ib", vector_cache=tmp_path)
    stats = other.update()
    assert stats.chunks_cached == 0 and stats.chunks_embedded == len(set(_texts(other)))
    np.testing.assert_array_equal(other.vectors, b.embed(_texts(other)))
    # an entry of embedder a planted where b would look for the same text is refused (its key differs)
    text = _texts(other)[0]
    shutil.copy(ca.path(ca.key(text)), cb.path(cb.key(text)))
    counts = CacheCounts()
    assert cb.get_many([cb.key(text)], counts) == {} and counts.damaged == 1


def test_off_switch_really_re_embeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "tree"
    _commit_1(tree)
    CodeIndex(
        tree, HashEmbedder(), index_dir=tmp_path / "first"
    ).update()  # default: <index root>/vector-cache
    assert any((tmp_path / "vector-cache").rglob("*.vec"))
    cached = CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "second").update()
    assert cached.chunks_embedded == 0 and cached.chunks_cached == cached.chunks_total
    monkeypatch.setenv("ASSAY_VECTOR_CACHE", "off")
    plain = CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "third").update()
    assert plain.chunks_embedded == plain.chunks_total and plain.chunks_cached == 0
    moved = tmp_path / "elsewhere"
    monkeypatch.setenv("ASSAY_VECTOR_CACHE", str(moved))
    there = CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "fourth").update()
    assert there.chunks_embedded > 0 and any(moved.rglob("*.vec"))
    for bad in ("relative/dir", str(tree / "pkg" / "_chunk.py")):
        monkeypatch.setenv("ASSAY_VECTOR_CACHE", bad)
        with pytest.raises(ConfigError, match="ASSAY_VECTOR_CACHE"):
            CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "fifth").update()


def test_concurrent_writers_leave_sound_entries(tmp_path: Path) -> None:
    trees = [tmp_path / "one", tmp_path / "two"]  # two worktrees of the same code, one shared cache
    for t in trees:
        _commit_1(t)
    indexes = [
        CodeIndex(t, HashEmbedder(), index_dir=t.with_suffix(".idx"), vector_cache=tmp_path / "c")
        for t in trees
    ]
    errors: list[BaseException] = []

    def run(idx: CodeIndex) -> None:
        try:
            idx.update()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in indexes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not list((tmp_path / "c").rglob(".tmp-*"))
    cache = VectorCache(tmp_path / "c", HashEmbedder())
    keys = [cache.key(t) for t in _texts(indexes[0])]
    counts = CacheCounts()
    assert len(cache.get_many(keys, counts)) == len(set(keys)) and counts.damaged == 0
    np.testing.assert_array_equal(indexes[0].vectors, indexes[1].vectors)


def test_unwritable_cache_still_indexes(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where the cache folder would go")
    tree = tmp_path / "tree"
    _commit_1(tree)
    idx = CodeIndex(tree, HashEmbedder(), index_dir=tmp_path / "idx", vector_cache=tmp_path / "blocker")
    stats = idx.update()
    assert (
        stats.chunks_embedded == len(set(_texts(idx))) and stats.cache_write_errors == stats.chunks_embedded
    )
