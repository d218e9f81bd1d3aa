"""A caching wrapper for any embedder: a bounded in-memory LRU in front of an on-disk cache.

On disk, each embedder id owns one folder of entries in the checksummed format of
:mod:`assay.embed.vector_store` (the same store, read checks and atomic writes as the code index's cache)::

    $ASSAY_HOME/cache/embeddings/<slug>-<sha256(id)[:16]>/
        embedder.json               {"schema_version": 2, "id": ..., "name": ..., "dim": ...}
        ab/abcdef....vec            one vector: header (key, payload sha256) + float32 values

An entry is served only if its size, key, dim, dtype and checksum match and its values are finite and of
unit length (or zero); anything else (a flipped bit, a truncated or foreign entry) is counted as corrupt,
recomputed and rewritten. A directory whose ``embedder.json`` names another id is never read. Entries
written before the checksum (``ab/<sha256(text)>.npy``, schema 1) are never read: they count as absent,
and the vector is recomputed and written as a ``.vec`` entry; the stale ``.npy`` files are left in place
(nothing prunes the cache yet).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assay.embed._protocol import Embedder, check_texts, embed_queries, unrelated_cosine
from assay.embed.vector_store import CacheCounts, VectorCache, atomic_write, identity_of
from assay.errors import ConfigError

__all__ = ["CacheStats", "CachedEmbedder", "default_cache_dir", "text_key"]

_SCHEMA_VERSION = 2  # 1: unchecksummed .npy entries (never read now)


def default_cache_dir() -> Path:
    """``$ASSAY_HOME/cache/embeddings`` (``ASSAY_HOME`` defaults to ``~/.assay``)."""
    home = Path(os.environ.get("ASSAY_HOME") or Path.home() / ".assay").expanduser()
    return home / "cache" / "embeddings"


def text_key(text: str) -> str:
    """sha256 hex digest of the UTF-8 text (surrogates escaped, so any ``str`` has a key; the memory key)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class CacheStats:
    """Counts since the wrapper was built: texts served from memory, from disk, and computed."""

    memory_hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    corrupt: int = 0
    write_errors: int = 0

    @property
    def hits(self) -> int:
        return self.memory_hits + self.disk_hits


class CachedEmbedder:
    """Wraps ``inner``; same ``id``, ``name``, ``dim`` and vectors, computed once per distinct text.

    ``memory_items`` bounds the LRU (0 disables it). ``cache_dir=False`` disables the disk cache; ``None``
    uses :func:`default_cache_dir`. Duplicate texts in one call are embedded once.
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        memory_items: int = 50_000,
        cache_dir: str | Path | bool | None = None,
    ) -> None:
        if memory_items < 0:
            raise ConfigError(f"memory_items must be 0 or more, got {memory_items}")
        self.inner = inner
        self.memory_items = memory_items
        self.stats = CacheStats()
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        if cache_dir is False:
            self.cache_dir: Path | None = None
        elif cache_dir is None or cache_dir is True:
            self.cache_dir = default_cache_dir()
        else:
            self.cache_dir = Path(cache_dir)
        self._dir: Path | None = None
        self._dir_ready = False
        self._store: VectorCache | None = None
        self._dim: int | None = None

    def _vector_dim(self) -> int:
        """The inner embedder's dim, or the one its cache folder recorded (no call to a server needed)."""
        if self._dim is None:
            self._dim = self.inner.dim
        return self._dim

    # -- the Embedder protocol, delegated -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    @property
    def id(self) -> str:
        return self.inner.id

    # -- disk layout ----------------------------------------------------------------------------------
    @property
    def directory(self) -> Path | None:
        """The folder this embedder's vectors live in, or None when the disk cache is off."""
        if self.cache_dir is None:
            return None
        if self._dir is None:
            ident = self.inner.id
            slug = re.sub(r"[^A-Za-z0-9._-]+", "_", self.inner.name)[:40].strip("_") or "embedder"
            self._dir = self.cache_dir / f"{slug}-{hashlib.sha256(ident.encode()).hexdigest()[:16]}"
        return self._dir

    def _prepare_dir(self) -> bool:
        """Create the folder and its ``embedder.json``; False if it belongs to another id or is unusable."""
        if self._dir_ready:
            return True
        d = self.directory
        if d is None:
            return False
        meta_path = d / "embedder.json"
        want = {"schema_version": _SCHEMA_VERSION, "id": self.inner.id, "name": self.inner.name}
        try:
            if meta_path.is_file():
                try:
                    meta = json.loads(meta_path.read_text(encoding="utf-8"))
                except (ValueError, OSError):
                    meta = None
                if isinstance(meta, dict) and meta.get("id") == want["id"]:
                    if isinstance(meta.get("dim"), int) and meta["dim"] > 0:
                        self._dim = meta["dim"]  # a server-backed embedder need not be asked
                    return self._open_store(d)
                if isinstance(meta, dict) and "id" in meta and meta["id"] != want["id"]:
                    return False  # a hash collision of ids: never mix vectors of two embedders
            d.mkdir(parents=True, exist_ok=True)
            want["dim"] = self._vector_dim()
            atomic_write(meta_path, json.dumps(want, indent=2).encode())
        except OSError:
            self.stats.write_errors += 1
            return False
        return self._open_store(d)

    def _open_store(self, folder: Path) -> bool:
        self._store = VectorCache.in_folder(
            folder, identity_of(self.inner.id, self._vector_dim()), self._vector_dim()
        )
        self._dir_ready = True
        return True

    def entry_path(self, text: str) -> Path | None:
        """Where ``text``'s vector is (or would be) stored; None when the disk cache is off or unusable."""
        with self._lock:
            if not self._prepare_dir() or self._store is None:
                return None
            return self._store.path(self._store.key(text))

    def _read(self, text: str) -> np.ndarray | None:
        assert self._store is not None
        key = self._store.key(text)
        counts = CacheCounts()
        vec = self._store.get_many([key], counts).get(key)
        self.stats.corrupt += counts.damaged
        return vec

    def _write(self, text: str, vec: np.ndarray) -> None:
        assert self._store is not None
        counts = CacheCounts()
        self._store.put_many({self._store.key(text): vec}, counts)
        self.stats.write_errors += counts.write_errors

    # -- memory ---------------------------------------------------------------------------------------
    def _remember(self, key: str, vec: np.ndarray) -> None:
        if self.memory_items == 0:
            return
        self._lru[key] = vec
        self._lru.move_to_end(key)
        while len(self._lru) > self.memory_items:
            self._lru.popitem(last=False)

    def clear_memory(self) -> None:
        with self._lock:
            self._lru.clear()

    # -- embedding ------------------------------------------------------------------------------------
    @property
    def unrelated_cosine(self) -> float:
        return unrelated_cosine(self.inner)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors straight from the inner embedder (one query a search: not cached)."""
        check_texts(texts)
        return embed_queries(self.inner, texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        check_texts(texts)
        keys = [text_key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        todo: dict[str, str] = {}  # key -> text, first occurrence
        with self._lock:
            disk = self._prepare_dir()
            for key, text in zip(keys, texts, strict=True):
                if key in found or key in todo:
                    continue
                vec = self._lru.get(key)
                if vec is not None:
                    self._lru.move_to_end(key)
                    self.stats.memory_hits += 1
                    found[key] = vec
                    continue
                vec = self._read(text) if disk else None
                if vec is not None:
                    self.stats.disk_hits += 1
                    found[key] = vec
                    self._remember(key, vec)
                    continue
                todo[key] = text
        if todo:
            new = self.inner.embed(list(todo.values()))
            with self._lock:
                for (key, text), vec in zip(todo.items(), new, strict=True):
                    vec = np.array(vec, dtype=np.float32)  # own the row, not a view of the batch
                    found[key] = vec
                    self._remember(key, vec)
                    if disk:
                        self._write(text, vec)
                self.stats.misses += len(todo)
        out = np.zeros((len(texts), self._vector_dim()), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out
