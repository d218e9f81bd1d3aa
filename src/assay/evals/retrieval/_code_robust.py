"""Robustness cases: damaged copies of a real index, damaged vector-cache entries, and hostile source trees.

Each case reports what happened: ``correct`` (the right results, or the right file skipped and counted),
``raised`` (a clear IndexCorruptError), ``silent-empty`` (loaded/built and found nothing),
``silent-wrong`` (loaded/built and answered wrongly) or ``crashed`` (some other exception). Silent and
crashed outcomes fail; a case this machine cannot set up is not run. A damaged vector-cache entry must be
``rebuilt`` (counted as damaged, re-embedded, rewritten, and the index given the true vector); serving it
is ``silent-wrong``, re-embedding it without counting the damage ``unnoticed``, leaving it damaged on disk
``not-repaired``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from assay.codeindex import CodeIndex, IndexMetadata
from assay.codeindex.index import embed_text
from assay.codeindex.store import save_index
from assay.codeindex.vector_cache import CacheCounts, VectorCache
from assay.embed import Embedder
from assay.errors import IndexCorruptError

__all__ = [
    "CACHE_DAMAGE_MODES",
    "DAMAGE_MODES",
    "TREE_MODES",
    "damage_cache_entry",
    "reference_results",
    "run_cache_damage_case",
    "run_damage_case",
    "run_tree_case",
]

#: damage mode -> the outcome that counts as handled
DAMAGE_MODES: dict[str, str] = {
    "truncated_vectors": "raised",
    "empty_vectors": "raised",
    "garbage_vectors": "raised",
    "missing_vectors": "raised",
    "truncated_metadata": "raised",
    "empty_metadata": "raised",
    "garbage_metadata": "raised",
    "missing_metadata": "raised",
    "dropped_chunk": "raised",
    "other_embedder": "raised",
    "old_schema": "raised",
    "vector_count": "raised",
    "leftover_temp_files": "correct",
    "crash_between_renames": "correct",
}
#: vector-cache damage mode -> the outcome that counts as handled
CACHE_DAMAGE_MODES: dict[str, str] = {
    "flipped_byte": "rebuilt",
    "truncated": "rebuilt",
    "empty": "rebuilt",
    "wrong_dims": "rebuilt",
    "other_text": "rebuilt",
    "other_embedder": "rebuilt",
    "nan_checksummed": "rebuilt",
    "not_unit_checksummed": "rebuilt",
    "leftover_temp_file": "served",
}
TREE_MODES = (
    "binary_code_extension",
    "nul_past_8kb",
    "oversized",
    "latin1",
    "link_outside",
    "directory_loop",
    "dangling_link",
)
PROBES = ("parse command line options", "print text to the terminal", "error message")


class NotRunnable(Exception):
    """This machine cannot set the case up (e.g. no symlinks)."""


def _results(idx: CodeIndex) -> list[list[tuple[str, str, int]]]:
    return [[(h.path, h.symbol, h.start_line) for h in idx.search(q, 10)] for q in PROBES]


def damage_index(copy: Path, mode: str) -> None:
    """Damage the index folder ``copy`` the way ``mode`` names (each failure mode the loader must catch)."""
    meta_path = copy / "metadata.json"
    meta = json.loads(meta_path.read_text())
    vec = copy / meta["vectors_file"]
    if mode == "truncated_vectors":
        vec.write_bytes(vec.read_bytes()[: max(1, vec.stat().st_size // 2)])
    elif mode == "empty_vectors":
        vec.write_bytes(b"")
    elif mode == "garbage_vectors":
        vec.write_bytes(bytes(range(256)) * 8)
    elif mode == "missing_vectors":
        vec.unlink()
    elif mode == "truncated_metadata":
        meta_path.write_bytes(meta_path.read_bytes()[: meta_path.stat().st_size // 2])
    elif mode == "empty_metadata":
        meta_path.write_bytes(b"")
    elif mode == "garbage_metadata":
        meta_path.write_bytes(b"\x89PNG\r\n\x1a\n not json at all")
    elif mode == "missing_metadata":
        meta_path.unlink()
    elif mode == "dropped_chunk":
        meta["chunks"].pop(len(meta["chunks"]) // 2)
        meta_path.write_text(json.dumps(meta))
    elif mode == "other_embedder":
        meta["embedder_id"] = "some-other-embedder:v0"
        meta_path.write_text(json.dumps(meta))
    elif mode == "old_schema":
        meta["schema_version"] = 1
        meta_path.write_text(json.dumps(meta))
    elif mode == "vector_count":
        import faiss

        index = faiss.read_index(str(vec))
        index.remove_ids(np.array([index.ntotal - 1], dtype=np.int64))
        faiss.write_index(index, str(vec))
    elif mode == "leftover_temp_files":
        (copy / "metadata.json.tmp").write_text(
            '{"schema_version": ' + str(meta["schema_version"]) + ', "half": '
        )
        (copy / "vectors-999999.faiss.tmp").write_bytes(b"\x00" * 100)
    elif mode == "crash_between_renames":
        # a save of a different state (the last file dropped) that dies after its first rename
        model = IndexMetadata.model_validate(meta)
        last = sorted(model.files)[-1]
        keep = [i for i, c in enumerate(model.chunks) if c.path != last]
        import faiss

        vectors = faiss.read_index(str(vec)).reconstruct_n(0, model.vector_count)
        changed = model.model_copy(
            update={
                "files": {p: f for p, f in model.files.items() if p != last},
                "chunks": [model.chunks[i] for i in keep],
            }
        )
        save_index(copy, changed, vectors[keep], crash_between_renames=True)
    else:  # pragma: no cover - the suite lists only known modes
        raise ValueError(mode)


def reference_results(reference_dir: Path, embedder: Embedder) -> list[list[tuple[str, str, int]]]:
    """What the undamaged index answers to the probe queries."""
    return _results(CodeIndex.load(reference_dir, embedder))


def run_damage_case(
    reference_dir: Path, work: Path, mode: str, embedder: Embedder, expected: list[list[tuple[str, str, int]]]
) -> dict[str, Any]:
    """Damage a copy of ``reference_dir`` and load it the way a search would; ``expected`` is the good answer."""
    copy = work / f"damaged-{mode}"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(reference_dir, copy)
    damage_index(copy, mode)
    detail: dict[str, Any] = {"mode": mode, "expected": DAMAGE_MODES[mode]}
    try:
        loaded = CodeIndex.load(copy, embedder)
        got = _results(loaded)
    except IndexCorruptError as exc:
        detail.update(outcome="raised", error=str(exc), reason=getattr(exc, "reason", None))
        return detail
    except Exception as exc:  # an unclear failure: not the clear error promised
        detail.update(outcome="crashed", error=f"{type(exc).__name__}: {exc}")
        return detail
    if got == expected:
        detail.update(outcome="correct", notes=loaded.load_report.notes)
    elif not any(got):
        detail["outcome"] = "silent-empty"
    else:
        detail["outcome"] = "silent-wrong"
    return detail


# ------------------------------------------------------------------------------------------ vector cache
_CACHE_TREE = {
    "pkg/cli.py": None,  # _NORMAL, below
    "pkg/output.py": 'def echo(message):\n    """Print text to the terminal."""\n    print(message)\n',
    "pkg/errors.py": 'class UsageError(Exception):\n    """A bad command line."""\n',
}
_TARGET = "parse_arguments"


def damage_cache_entry(cache: VectorCache, text: str, mode: str) -> Path:
    """Damage the cache entry of ``text`` the way ``mode`` names; returns the entry's path."""
    key = cache.key(text)
    path = cache.path(key)
    blob = path.read_bytes()
    vec = np.frombuffer(blob[-4 * cache.dim :], dtype="<f4").copy()
    if mode == "flipped_byte":
        pos = len(blob) - 2 * cache.dim  # a byte in the middle of the payload
        path.write_bytes(blob[:pos] + bytes([blob[pos] ^ 0x10]) + blob[pos + 1 :])
    elif mode == "truncated":
        path.write_bytes(blob[: len(blob) // 2])
    elif mode == "empty":
        path.write_bytes(b"")
    elif mode == "wrong_dims":  # a sound entry, for a vector one shorter
        short = VectorCache.with_identity(cache.root, cache.identity, cache.dim - 1)
        path.write_bytes(short.encode(key, vec[:-1] / np.linalg.norm(vec[:-1])))
    elif mode == "other_text":  # a sound entry of another text, under this text's name
        path.write_bytes(cache.encode(cache.key(text + " "), vec[::-1].copy()))
    elif mode == "other_embedder":  # a sound entry of this text for another embedder, under its name
        other = VectorCache.with_identity(cache.root, cache.identity + "|another model", cache.dim)
        path.write_bytes(other.encode(other.key(text), vec[::-1].copy()))
    elif mode == "nan_checksummed":
        path.write_bytes(cache.encode(key, np.full(cache.dim, np.nan, dtype=np.float32)))
    elif mode == "not_unit_checksummed":
        path.write_bytes(cache.encode(key, vec * 2))
    elif mode == "leftover_temp_file":  # a writer killed before its rename
        (path.parent / ".tmp-killed").write_bytes(blob[: len(blob) // 3])
    else:  # pragma: no cover - the suite lists only known modes
        raise ValueError(mode)
    return path


def run_cache_damage_case(work: Path, mode: str, embedder: Embedder) -> dict[str, Any]:
    """Fill a vector cache from a small tree, damage one entry, index the tree again through the cache."""
    base = work / f"cache-{mode}"
    if base.exists():
        shutil.rmtree(base)
    for rel, text in _CACHE_TREE.items():
        (base / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / "repo" / rel).write_text(text if text is not None else _NORMAL)
    detail: dict[str, Any] = {"mode": mode, "expected": CACHE_DAMAGE_MODES[mode]}
    try:
        cache = VectorCache(base / "cache", embedder)  # its own cache, whatever ASSAY_VECTOR_CACHE says
        first = CodeIndex(base / "repo", embedder, index_dir=base / "first", vector_cache=cache)
        first.update()
        row = next(i for i, c in enumerate(first.chunks) if c.symbol == _TARGET)
        text = embed_text(first.chunks[row])
        damage_cache_entry(cache, text, mode)
        again = CodeIndex(base / "repo", embedder, index_dir=base / "again", vector_cache=cache)
        stats = again.update()
        repaired = cache.get_many([cache.key(text)], CacheCounts()).get(cache.key(text))
    except Exception as exc:
        detail.update(outcome="crashed", error=f"{type(exc).__name__}: {exc}")
        return detail
    cos = float(np.dot(again.vectors[row], first.vectors[row]))
    detail.update(
        cosine=round(cos, 6),
        cache_damaged=stats.cache_damaged,
        chunks_embedded=stats.chunks_embedded,
        chunks_cached=stats.chunks_cached,
    )
    if cos < 0.9999:
        detail["outcome"] = "silent-wrong"  # the damaged entry was served
    elif stats.chunks_embedded == 0:
        detail["outcome"] = "served"  # the entry was sound (or its damage went unseen and happened to fit)
    elif stats.cache_damaged != 1 or stats.chunks_embedded != 1:
        detail["outcome"] = "unnoticed"
    elif repaired is None or float(np.dot(repaired, first.vectors[row])) < 0.9999:
        detail["outcome"] = "not-repaired"
    else:
        detail["outcome"] = "rebuilt"
    return detail


# ------------------------------------------------------------------------------------------ hostile trees
_NORMAL = '''def parse_arguments(argv):
    """Parse command line options into a dictionary."""
    return dict(a.split("=", 1) for a in argv)
'''


def _build_tree(root: Path, outside: Path, mode: str) -> tuple[str, str]:
    """Create the tree; returns (the hostile entry's path, the skip reason or 'indexed')."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cli.py").write_text(_NORMAL)
    outside.mkdir(parents=True, exist_ok=True)
    try:
        if mode == "binary_code_extension":
            (root / "pkg" / "evil.py").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"zebraquokka " * 50)
            return "pkg/evil.py", "binary"
        if mode == "nul_past_8kb":
            (root / "pkg" / "late.py").write_bytes(b"zebraquokka = 1\n" * 700 + b"\x00\x00")
            return "pkg/late.py", "binary_late_nul"
        if mode == "oversized":
            (root / "pkg" / "huge.py").write_bytes(b"zebraquokka = 1\n" * 70_000)  # 1.1 MB
            return "pkg/huge.py", "too_large"
        if mode == "latin1":
            text = "# Gr\xf6\xdfe der Zebraquokka-Stra\xdfe\ndef zebraquokka_gr\xf6sse():\n    return 'caf\xe9'\n"
            (root / "pkg" / "latin.py").write_bytes(text.encode("latin-1"))
            return "pkg/latin.py", "indexed"
        if mode == "link_outside":
            (outside / "stolen.py").write_text("zebraquokka_secret = 'outside the repository'\n")
            os.symlink(outside / "stolen.py", root / "pkg" / "stolen.py")
            return "pkg/stolen.py", "link_outside"
        if mode == "directory_loop":
            os.symlink(root, root / "pkg" / "again")
            return "pkg/again", "loop"
        if mode == "dangling_link":
            os.symlink(root / "pkg" / "nowhere.py", root / "pkg" / "zebraquokka.py")
            return "pkg/zebraquokka.py", "dangling_link"
    except (OSError, NotImplementedError) as exc:
        raise NotRunnable(f"cannot create the {mode} tree here: {exc}") from exc
    raise ValueError(mode)  # pragma: no cover


def run_tree_case(work: Path, mode: str, embedder: Embedder) -> dict[str, Any]:
    """Index a small tree with one hostile entry; the entry must be skipped and counted (or decoded)."""
    base = work / f"tree-{mode}"
    if base.exists():
        shutil.rmtree(base)
    root, outside = base / "repo", base / "outside"
    path, expect = _build_tree(root, outside, mode)
    detail: dict[str, Any] = {"mode": mode, "entry": path, "expected": expect}
    try:
        idx = CodeIndex(root, embedder, index_dir=base / "index")
        stats = idx.update()
    except Exception as exc:
        detail.update(outcome="raised", error=f"{type(exc).__name__}: {exc}")
        return detail
    detail["skipped"] = stats.skipped
    indexed = {c.path for c in idx.chunks}
    if "pkg/cli.py" not in indexed:
        detail["outcome"] = "silent-empty"
        return detail
    if expect == "indexed":
        hits = idx.search("zebraquokka größe", 3, level="file")
        text = "\n".join(c.text for c in idx.chunks if c.path == path)
        if path not in indexed:
            detail["outcome"] = "silent-empty"
        elif "Größe" not in text or "\ufffd" in text:
            detail["outcome"] = "silent-wrong"
        else:
            detail["outcome"] = "correct" if hits and hits[0].path == path else "silent-wrong"
        return detail
    leaked = any("zebraquokka" in c.text for c in idx.chunks) or path in indexed
    counted = stats.skipped.get(expect, 0) >= 1
    if leaked:
        detail["outcome"] = "silent-wrong"
    elif not counted:
        detail["outcome"] = "silent-empty"  # skipped, but nobody was told
    else:
        detail["outcome"] = "correct"
    return detail
