"""The two things people do with a code index: build (or update) it, and search it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from assay.codeindex.index import CodeIndex, Level, SearchHit, UpdateStats, default_index_dir
from assay.embed import Embedder
from assay.errors import ConfigError, IndexCorruptError

__all__ = ["SearchResult", "build_index", "search_index"]


@dataclass
class SearchResult:
    hits: list[SearchHit]
    #: files that changed in the tree since the index was built (the hits do not reflect them)
    stale_paths: list[str] = field(default_factory=list)


def _embedder(embedder: str | Embedder | None) -> Embedder:
    if embedder is None or isinstance(embedder, str):
        from assay.embed import get_embedder

        return get_embedder(embedder)
    return embedder


def build_index(
    path: str | os.PathLike[str],
    *,
    embedder: str | Embedder | None = None,
    index_dir: str | os.PathLike[str] | None = None,
    max_file_bytes: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[CodeIndex, UpdateStats]:
    """Build the index of ``path`` or bring it up to date (only chunks whose text is new are embedded).

    A stored index that is damaged or was built with another embedder or schema is rebuilt; the returned
    stats say why in ``rebuilt_reason``.
    """
    if not Path(path).is_dir():
        raise ConfigError(f"PATH {path} is not a directory")
    kwargs = {} if max_file_bytes is None else {"max_file_bytes": max_file_bytes}
    idx = CodeIndex.open(path, _embedder(embedder), index_dir=index_dir, on_damage="rebuild", **kwargs)
    stats = idx.update(progress=progress)
    return idx, stats


def search_index(
    path: str | os.PathLike[str],
    query: str,
    *,
    k: int = 10,
    level: Level = "chunk",
    mode: str = "hybrid",
    embedder: str | Embedder | None = None,
    index_dir: str | os.PathLike[str] | None = None,
    check_fresh: bool = True,
) -> SearchResult:
    """Search the stored index of ``path``; raise IndexCorruptError when it is missing or damaged.

    With ``check_fresh`` the tree is also compared with the index (no embedding) to report stale files.
    """
    if k < 1:
        raise ConfigError(f"-k must be at least 1, got {k}")
    directory = Path(index_dir) if index_dir is not None else default_index_dir(path)
    if not directory.is_dir() or not any(directory.iterdir()):  # missing or empty: never built
        where = "" if index_dir is None else f" --index-dir {directory}"
        raise IndexCorruptError(
            f"no code index for {path} at {directory}: run `assay code-index build {path}{where}` first"
        )
    idx = CodeIndex.open(path, _embedder(embedder), index_dir=directory, on_damage="raise")
    hits = idx.search(query, k, level=level, mode=mode)
    return SearchResult(hits=hits, stale_paths=idx.pending_changes() if check_fresh else [])
