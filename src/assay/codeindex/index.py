"""The code index: discover, chunk, embed, fuse dense (FAISS) and lexical (BM25) search, save atomically."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np

from assay._util import phase
from assay.codeindex._hit import Level, SearchHit
from assay.codeindex._search import search as _ranked_search
from assay.codeindex.chunk import MAX_LINES, Chunk, chunk_file
from assay.codeindex.discovery import DEFAULT_MAX_FILE_BYTES, discover
from assay.codeindex.store import (
    ChunkRecord,
    FileRecord,
    IndexMetadata,
    LoadReport,
    _faiss,
    load_index,
    save_index,
    sha256_text,
    writer_lock,
)
from assay.codeindex.vector_cache import CacheCounts, VectorCache, resolve_cache_dir
from assay.embed import Embedder, embed_queries
from assay.errors import ConfigError, IndexCorruptError

__all__ = ["CodeIndex", "SearchHit", "UpdateStats", "assay_home", "default_index_dir"]

#: how many chunks each of dense and lexical search contributes before fusion, and the fused depth
CANDIDATES = 200
EMBED_BATCH = 32


def assay_home() -> Path:
    """``$ASSAY_HOME`` or ``~/.assay`` (created on first use; ConfigError if it cannot be)."""
    from assay._util import assay_home as home

    return home()


def default_index_dir(root: str | os.PathLike[str]) -> Path:
    """``$ASSAY_HOME/code_index/<folder name>-<hash of the absolute path>``."""
    real = os.path.realpath(root)
    digest = hashlib.sha256(real.encode()).hexdigest()[:12]
    return assay_home() / "code_index" / f"{Path(real).name or 'root'}-{digest}"


@dataclass
class UpdateStats:
    files_total: int = 0
    files_added: int = 0
    files_changed: int = 0
    files_removed: int = 0
    files_unchanged: int = 0
    chunks_total: int = 0
    chunks_embedded: int = 0  # chunks the embedder was asked for (one per distinct new text with the cache)
    chunks_reused: int = 0  # chunks of changed files whose text was in the index before: vector kept
    chunks_cached: int = 0  # chunks served, verified, from the vector cache
    cache_damaged: int = 0  # cache entries that failed their checks: re-embedded and rewritten
    cache_write_errors: int = 0
    rebuilt_reason: str | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    discover_s: float = 0.0
    embed_s: float = 0.0
    save_s: float = 0.0
    total_s: float = 0.0


def _record(c: Chunk) -> ChunkRecord:
    return ChunkRecord(
        path=c.path, symbol=c.symbol, kind=c.kind, start_line=c.start_line, end_line=c.end_line, text=c.text
    )


def embed_text(c: ChunkRecord) -> str:
    return Chunk(c.path, c.symbol, c.kind, c.start_line, c.end_line, c.text).embed_text()


class CodeIndex:
    """A searchable index of one source tree, stored under ``index_dir``.

    ``CodeIndex.open`` loads what is on disk (rebuilding, or raising IndexCorruptError with
    ``on_damage="raise"``, when it cannot be trusted); ``update`` brings it up to date with the tree,
    embedding only chunks whose text is new (see ``vector_cache`` in :meth:`_cache`), and saves atomically.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        embedder: Embedder,
        *,
        index_dir: str | os.PathLike[str] | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_lines: int = MAX_LINES,
        vector_cache: VectorCache | str | os.PathLike[str] | bool | None = None,
    ) -> None:
        self.root = Path(root)
        self.embedder = embedder
        self.index_dir = Path(index_dir) if index_dir is not None else default_index_dir(root)
        self.max_file_bytes = max_file_bytes
        self.max_lines = max_lines
        self._vector_cache_arg = vector_cache
        self._vector_cache: VectorCache | None = None
        self._cache_resolved = False
        self.files: dict[str, FileRecord] = {}
        self.chunks: list[ChunkRecord] = []
        self.vectors = np.zeros((0, embedder.dim), dtype=np.float32)
        self.skipped: dict[str, int] = {}
        self.generation = 0
        self.load_report = LoadReport()
        self.damage: str | None = None  # why what was on disk could not be used (then it was rebuilt)
        self._dense = None

    # ---------------------------------------------------------------- loading
    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str],
        embedder: Embedder,
        *,
        index_dir: str | os.PathLike[str] | None = None,
        on_damage: Literal["rebuild", "raise"] = "rebuild",
        vector_cache: VectorCache | str | os.PathLike[str] | bool | None = None,
        **kwargs: int,
    ) -> CodeIndex:
        """The index of ``root`` as stored (empty when none is); damage is rebuilt or raised."""
        idx = cls(root, embedder, index_dir=index_dir, vector_cache=vector_cache, **kwargs)
        if not idx.index_dir.exists() or not any(idx.index_dir.iterdir()):
            return idx
        try:
            idx._load()
        except IndexCorruptError as exc:
            if on_damage == "raise":
                raise
            idx.damage = f"{getattr(exc, 'reason', 'corrupt')}: {exc}"
            idx._reset()
        return idx

    @classmethod
    def load(cls, index_dir: str | os.PathLike[str], embedder: Embedder) -> CodeIndex:
        """Load an existing index for searching; raise IndexCorruptError if it is missing or damaged."""
        meta_root = Path(index_dir)
        idx = cls(meta_root, embedder, index_dir=meta_root)
        idx._load()
        idx.root = Path(idx._root_from_meta)
        return idx

    def _load(self) -> None:
        meta, vectors, report = load_index(self.index_dir, self.embedder.id)
        if meta.dim != self.embedder.dim:
            err = IndexCorruptError(
                f"code index {self.index_dir}: dim {meta.dim} but embedder has {self.embedder.dim}"
            )
            err.reason = "dim"  # type: ignore[attr-defined]
            raise err
        if meta.max_lines != self.max_lines or meta.max_file_bytes != self.max_file_bytes:
            err = IndexCorruptError(
                f"code index {self.index_dir}: built with other chunking settings; rebuild it"
            )
            err.reason = "settings"  # type: ignore[attr-defined]
            raise err
        self._root_from_meta = meta.root
        self.files = dict(meta.files)
        self.chunks = list(meta.chunks)
        self.vectors = vectors
        self.skipped = dict(meta.skipped)
        self.generation = meta.generation
        self.load_report = report
        self._dense = None

    def _reset(self) -> None:
        self.files, self.chunks, self.skipped = {}, [], {}
        self.vectors = np.zeros((0, self.embedder.dim), dtype=np.float32)
        self._dense = None

    # ---------------------------------------------------------------- building
    def update(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        _crash_between_renames: bool = False,
    ) -> UpdateStats:
        """Bring the index up to date with the tree, embedding only chunks whose text is new, and save it.

        Writers of one index folder take turns (a file lock); a writer that finds a newer save than the
        one it loaded starts from that.
        """
        with writer_lock(self.index_dir):
            if (
                self.index_dir.joinpath("metadata.json").exists()
                and self._stored_generation() != self.generation
            ):
                try:
                    self._load()
                except IndexCorruptError as exc:
                    self.damage = f"{getattr(exc, 'reason', 'corrupt')}: {exc}"
                    self._reset()
            return self._update(progress=progress, _crash_between_renames=_crash_between_renames)

    def _stored_generation(self) -> int | None:
        try:
            return int(json.loads((self.index_dir / "metadata.json").read_bytes()).get("generation"))
        except (OSError, ValueError, TypeError, AttributeError):
            return None

    def _update(
        self,
        *,
        progress: Callable[[int, int], None] | None,
        _crash_between_renames: bool,
    ) -> UpdateStats:
        t0 = time.perf_counter()
        stats = UpdateStats(rebuilt_reason=self.damage)
        found = discover(self.root, max_file_bytes=self.max_file_bytes)
        stats.discover_s = time.perf_counter() - t0
        stats.skipped = dict(sorted(found.skipped.items()))
        by_path: dict[str, tuple[int, int]] = {}
        pos = 0
        for path, rec in self.files.items():
            by_path[path] = (pos, pos + rec.chunks)
            pos += rec.chunks
        # self.chunks is ordered by path (dict insertion order is sorted on every save)
        new_files: dict[str, FileRecord] = {}
        new_chunks: list[ChunkRecord] = []
        keep_rows: list[int] = []  # row in old vectors, or -1 for a chunk to embed
        to_embed: list[int] = []
        changed_spans: list[tuple[int, int]] = []  # old rows of changed files: their texts may recur
        for sf in found.files:
            digest = sha256_text(sf.text)
            old = self.files.get(sf.path)
            if old is not None and old.sha256 == digest and sf.path in by_path:
                a, b = by_path[sf.path]
                new_files[sf.path] = old
                new_chunks.extend(self.chunks[a:b])
                keep_rows.extend(range(a, b))
                stats.files_unchanged += 1
                continue
            if old is None:
                stats.files_added += 1
            else:
                stats.files_changed += 1
                if sf.path in by_path:
                    changed_spans.append(by_path[sf.path])
            chunks = [_record(c) for c in chunk_file(sf.path, sf.text, sf.language, max_lines=self.max_lines)]
            new_files[sf.path] = FileRecord(
                sha256=digest, chunks=len(chunks), encoding=sf.encoding, language=sf.language
            )
            for c in chunks:
                to_embed.append(len(new_chunks))
                new_chunks.append(c)
                keep_rows.append(-1)
        stats.files_removed = len(set(self.files) - set(new_files))
        stats.files_total = len(new_files)
        stats.chunks_total = len(new_chunks)
        t1 = time.perf_counter()
        vectors = self._vectors(new_chunks, to_embed, keep_rows, changed_spans, stats, progress)
        stats.embed_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        unchanged = not (stats.files_added or stats.files_changed or stats.files_removed)
        if unchanged and self.generation > 0 and self.damage is None and not self.load_report.leftovers:
            stats.total_s = time.perf_counter() - t0
            return stats  # nothing to write: the stored index is this tree's
        meta = IndexMetadata(
            root=os.path.realpath(self.root),
            embedder_id=self.embedder.id,
            dim=self.embedder.dim,
            max_lines=self.max_lines,
            max_file_bytes=self.max_file_bytes,
            generation=self.generation,
            vectors_file="",
            vectors_sha256="",
            vector_count=len(new_chunks),
            chunks_sha256="",
            files=new_files,
            chunks=new_chunks,
            skipped=stats.skipped,
            created_at=datetime.now(UTC),
        )
        saved = save_index(self.index_dir, meta, vectors, crash_between_renames=_crash_between_renames)
        stats.save_s = time.perf_counter() - t2
        self.files, self.chunks, self.vectors = new_files, new_chunks, vectors
        self.skipped = stats.skipped
        self.generation = saved.generation
        self.damage = None
        self._dense = None
        stats.total_s = time.perf_counter() - t0
        return stats

    def _cache(self) -> VectorCache | None:
        """The vector cache this index reads and fills (resolved on first use), or None when it is off.

        ``vector_cache`` None (or True) means ``<index dir>/../vector-cache``, False off, a path that folder,
        a VectorCache itself (used as given). ``ASSAY_VECTOR_CACHE`` (``off`` or a folder), when set,
        overrides a folder and the default.
        """
        if not self._cache_resolved:
            arg = self._vector_cache_arg
            if isinstance(arg, VectorCache):
                self._vector_cache = arg
            elif arg is not False:
                default = self.index_dir.parent / "vector-cache" if arg in (None, True) else Path(arg)  # type: ignore[arg-type]
                where = resolve_cache_dir(default)
                self._vector_cache = VectorCache(where, self.embedder) if where is not None else None
            self._cache_resolved = True
        return self._vector_cache

    def _vectors(
        self,
        chunks: list[ChunkRecord],
        to_embed: list[int],
        keep_rows: list[int],
        changed_spans: list[tuple[int, int]],
        stats: UpdateStats,
        progress: Callable[[int, int], None] | None,
    ) -> np.ndarray:
        """The vectors of ``chunks``: kept rows of unchanged files, then (with the cache) any text seen before
        (in this index's changed files, then the cache), then the embedder for one copy of each new text."""
        dim = self.embedder.dim
        vectors = np.zeros((len(chunks), dim), dtype=np.float32)
        rows = np.array(keep_rows, dtype=np.int64)
        kept = np.flatnonzero(rows >= 0)
        if kept.size:
            vectors[kept] = self.vectors[rows[kept]]
        texts = {i: embed_text(chunks[i]) for i in to_embed}
        cache = self._cache()
        groups: dict[str, list[int]] = {}  # one text to embed -> the rows that take its vector
        counts = CacheCounts()
        if cache is None:
            groups = {str(i): [i] for i in to_embed}
        else:
            keys = {i: cache.key(texts[i]) for i in to_embed}
            old = {cache.key(embed_text(self.chunks[r])): r for a, b in changed_spans for r in range(a, b)}
            for i in to_embed:
                if keys[i] in old:
                    vectors[i] = self.vectors[old[keys[i]]]
                    stats.chunks_reused += 1
                else:
                    groups.setdefault(keys[i], []).append(i)
            served = cache.get_many(groups, counts)
            for key, vec in served.items():
                rows_of_key = groups.pop(key)
                vectors[rows_of_key] = vec
                stats.chunks_cached += len(rows_of_key)
        # similar lengths together, so the embedder pads little
        order = sorted(groups, key=lambda g: (len(texts[groups[g][0]]), g))
        stats.chunks_embedded = len(order)
        name = Path(self.root).name
        with phase(f"embedding code chunks of {name}", total=len(order), unit="chunks") as ph:
            for start in range(0, len(order), EMBED_BATCH):
                batch = order[start : start + EMBED_BATCH]
                emb = np.asarray(self.embedder.embed([texts[groups[g][0]] for g in batch]), dtype=np.float32)
                if emb.shape != (len(batch), dim):
                    raise ConfigError(
                        f"embedder {self.embedder.id} returned shape {emb.shape} for {len(batch)} texts"
                    )
                for g, vec in zip(batch, emb, strict=True):
                    vectors[groups[g]] = vec
                if cache is not None:  # stored batch by batch: a stopped build keeps what it paid for
                    cache.put_many(dict(zip(batch, emb, strict=True)), counts)
                ph.advance(len(batch))  # also where Ctrl-C stops the build
                if progress is not None:
                    progress(min(start + EMBED_BATCH, len(order)), len(order))
        stats.cache_damaged, stats.cache_write_errors = counts.damaged, counts.write_errors
        return vectors

    def pending_changes(self) -> list[str]:
        """Paths whose content differs between the tree and the index (added, changed or removed)."""
        found = discover(self.root, max_file_bytes=self.max_file_bytes)
        now = {f.path: sha256_text(f.text) for f in found.files}
        changed = [p for p, h in now.items() if p not in self.files or self.files[p].sha256 != h]
        return sorted(changed + [p for p in self.files if p not in now])

    # ---------------------------------------------------------------- searching
    def _ensure_search(self) -> None:
        if self._dense is None:
            faiss = _faiss()
            dense = faiss.IndexFlatIP(self.embedder.dim)
            if len(self.vectors):
                dense.add(np.ascontiguousarray(self.vectors))
            self._dense = dense

    def dense_ranking(self, query: str, depth: int = CANDIDATES) -> list[int]:
        """Chunk rows by cosine similarity to ``query``'s embedding, best first."""
        self._ensure_search()
        if not self.chunks:
            return []
        qv = np.asarray(embed_queries(self.embedder, [query]), dtype=np.float32).reshape(1, -1)
        _, ids = self._dense.search(qv, min(depth, len(self.chunks)))  # type: ignore[union-attr]
        return [int(i) for i in ids[0] if i >= 0]

    def search(
        self, query: str, k: int = 10, *, level: Level = "chunk", mode: str = "hybrid"
    ) -> list[SearchHit]:
        """The ``k`` best chunks, symbols or files for ``query`` (issue text welcome).

        ``mode`` is ``hybrid`` (default: dense and lexical fused), ``dense`` or ``lexical``; how chunks,
        files and symbols are ranked is told in ``assay.codeindex._search``.
        """
        return _ranked_search(self, query, k, level=level, mode=mode)
