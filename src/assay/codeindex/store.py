"""The on-disk form of a code index: one folder with ``metadata.json`` and one FAISS vectors file.

Layout::

    <index dir>/
      metadata.json             schema_version, embedder id and dim, files (content hashes), chunk table,
                                the name, sha256 and count of the vectors file it belongs to
      vectors-000007.faiss      the dense index (faiss.IndexFlatIP over L2-normalised vectors)

A save writes ``vectors-<gen>.faiss.tmp`` and ``metadata.json.tmp``, fsyncs both, renames the vectors file
to its final (new) name, then renames ``metadata.json.tmp`` over ``metadata.json`` and fsyncs the folder.
``metadata.json`` only ever names a complete vectors file, so a crash anywhere (even between the two
renames) leaves the previous index loadable; leftovers of an interrupted save are detected on load,
never read, and removed by the next writer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from assay.errors import IndexCorruptError, MissingDependencyError

__all__ = [
    "SCHEMA_VERSION",
    "ChunkRecord",
    "FileRecord",
    "IndexMetadata",
    "LoadReport",
    "StaleIndexError",
    "load_index",
    "save_index",
    "writer_lock",
]

#: bump when the chunker, the chunk table or the vectors layout changes meaning
SCHEMA_VERSION = 4
METADATA = "metadata.json"
LOCK_FILE = ".writer.lock"
_VECTORS_RE = re.compile(r"^vectors-(\d{6})\.faiss$")
_TMP_SUFFIX = ".tmp"


class StaleIndexError(IndexCorruptError):
    """The index was written by an older schema: rebuild it."""


def _corrupt(reason: str, directory: Path, message: str) -> IndexCorruptError:
    err = IndexCorruptError(f"code index {directory}: {message}")
    err.reason = reason  # type: ignore[attr-defined]
    return err


class FileRecord(BaseModel):
    sha256: str
    chunks: int
    encoding: str = "utf-8"
    language: str | None = None


class ChunkRecord(BaseModel):
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    text: str


class IndexMetadata(BaseModel):
    """``metadata.json``."""

    schema_version: int = SCHEMA_VERSION
    root: str
    embedder_id: str
    dim: int
    max_lines: int
    max_file_bytes: int
    generation: int
    vectors_file: str
    vectors_sha256: str
    vector_count: int
    chunks_sha256: str
    files: dict[str, FileRecord]
    chunks: list[ChunkRecord]
    skipped: dict[str, int] = Field(default_factory=dict)
    created_at: datetime


@dataclass
class LoadReport:
    """What loading noticed besides the index itself (leftovers of an interrupted save, orphans)."""

    notes: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)


def chunk_table_hash(chunks: list[ChunkRecord]) -> str:
    h = hashlib.sha256()
    for c in chunks:
        h.update(json.dumps(c.model_dump(), sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def _faiss():  # type: ignore[no-untyped-def]
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("faiss-cpu", "code") from exc
    return faiss


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_fsync(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


@contextlib.contextmanager
def writer_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` while one writer updates it (other writers wait)."""
    directory.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks, one writer is assumed
        yield
        return
    with open(directory / LOCK_FILE, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(_TMP_SUFFIX))


def save_index(
    directory: Path, meta: IndexMetadata, vectors: np.ndarray, *, crash_between_renames: bool = False
) -> IndexMetadata:
    """Write ``meta`` and ``vectors`` atomically; returns the metadata as saved.

    ``crash_between_renames`` stops right after the first rename, as a crash would (robustness tests).
    """
    faiss = _faiss()
    directory.mkdir(parents=True, exist_ok=True)
    for name in _leftovers(directory):  # a previous writer died: its leftovers were never committed
        (directory / name).unlink(missing_ok=True)
    existing = [int(m.group(1)) for p in directory.iterdir() if (m := _VECTORS_RE.match(p.name))]
    generation = max([meta.generation, *existing], default=0) + 1
    vectors_name = f"vectors-{generation:06d}.faiss"
    vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, meta.dim)
    index = faiss.IndexFlatIP(meta.dim)
    if len(vectors):
        index.add(vectors)
    blob = faiss.serialize_index(index).tobytes()
    meta = meta.model_copy(
        update={
            "schema_version": SCHEMA_VERSION,
            "generation": generation,
            "vectors_file": vectors_name,
            "vectors_sha256": hashlib.sha256(blob).hexdigest(),
            "vector_count": int(index.ntotal),
            "chunks_sha256": chunk_table_hash(meta.chunks),
            "created_at": datetime.now(UTC),
        }
    )
    vec_tmp = directory / (vectors_name + _TMP_SUFFIX)
    meta_tmp = directory / (METADATA + _TMP_SUFFIX)
    _write_fsync(vec_tmp, blob)
    _write_fsync(meta_tmp, meta.model_dump_json().encode())
    os.replace(vec_tmp, directory / vectors_name)  # rename 1: a new name, nothing refers to it yet
    _fsync_dir(directory)
    if crash_between_renames:
        return meta
    os.replace(meta_tmp, directory / METADATA)  # rename 2: the commit point
    _fsync_dir(directory)
    for p in directory.iterdir():
        if _VECTORS_RE.match(p.name) and p.name != vectors_name:
            p.unlink(missing_ok=True)
    return meta


def load_index(directory: Path, embedder_id: str | None) -> tuple[IndexMetadata, np.ndarray, LoadReport]:
    """Load and verify an index folder; raise IndexCorruptError (with ``.reason``) when it cannot be trusted.

    ``embedder_id`` None skips the embedder check (inspection only: such an index must not be searched).
    """
    faiss = _faiss()
    report = LoadReport()
    if not directory.is_dir():
        raise _corrupt("missing", directory, "no index here (build it first)")
    report.leftovers = _leftovers(directory)
    if report.leftovers:
        report.notes.append(
            "an interrupted save left "
            + ", ".join(report.leftovers)
            + "; they were ignored (the last committed index is used)"
        )
    meta_path = directory / METADATA
    if not meta_path.exists():
        raise _corrupt("missing_metadata", directory, f"{METADATA} is missing")
    raw = meta_path.read_bytes()
    if not raw.strip():
        raise _corrupt("empty_metadata", directory, f"{METADATA} is empty")
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _corrupt("garbage_metadata", directory, f"{METADATA} is not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _corrupt("garbage_metadata", directory, f"{METADATA} is not a JSON object")
    version = data.get("schema_version")
    if isinstance(version, int) and version < SCHEMA_VERSION:
        err = StaleIndexError(
            f"code index {directory}: schema {version} is older than {SCHEMA_VERSION}; rebuild it"
        )
        err.reason = "old_schema"  # type: ignore[attr-defined]
        raise err
    if version != SCHEMA_VERSION:
        raise _corrupt("garbage_metadata", directory, f"unknown schema_version {version!r}")
    try:
        meta = IndexMetadata.model_validate(data)
    except ValidationError as exc:
        raise _corrupt(
            "garbage_metadata", directory, f"{METADATA} does not match the schema: {exc.errors()[0]}"
        ) from exc
    if embedder_id is not None and meta.embedder_id != embedder_id:
        raise _corrupt(
            "embedder_mismatch",
            directory,
            f"built with embedder {meta.embedder_id!r}, asked to use {embedder_id!r}; pass the --embedder "
            "it was built with, or rebuild it with `assay code-index build PATH --embedder SPEC`",
        )
    if chunk_table_hash(meta.chunks) != meta.chunks_sha256:
        raise _corrupt(
            "chunk_table", directory, "the chunk table does not match its checksum (edited or truncated)"
        )
    if sum(f.chunks for f in meta.files.values()) != len(meta.chunks):
        raise _corrupt("chunk_table", directory, "per-file chunk counts do not add up to the chunk table")
    vec_path = directory / meta.vectors_file
    if not _VECTORS_RE.match(meta.vectors_file) or not vec_path.is_file():
        raise _corrupt("missing_vectors", directory, f"vectors file {meta.vectors_file} is missing")
    blob = vec_path.read_bytes()
    if not blob:
        raise _corrupt("empty_vectors", directory, f"vectors file {meta.vectors_file} is empty")
    try:
        index = faiss.deserialize_index(np.frombuffer(blob, dtype=np.uint8))
    except Exception as exc:
        raise _corrupt(
            "garbage_vectors", directory, f"vectors file {meta.vectors_file} is unreadable: {exc}"
        ) from exc
    if index.ntotal != len(meta.chunks) or index.ntotal != meta.vector_count:
        raise _corrupt(
            "vector_count",
            directory,
            f"{index.ntotal} vectors for {len(meta.chunks)} chunks (metadata says {meta.vector_count})",
        )
    if index.d != meta.dim:
        raise _corrupt("dim", directory, f"vectors have dim {index.d}, metadata says {meta.dim}")
    if hashlib.sha256(blob).hexdigest() != meta.vectors_sha256:
        raise _corrupt(
            "vectors_checksum", directory, f"vectors file {meta.vectors_file} does not match its checksum"
        )
    vectors = index.reconstruct_n(0, index.ntotal) if index.ntotal else np.zeros((0, meta.dim), np.float32)
    if not np.all(np.isfinite(vectors)):
        raise _corrupt("garbage_vectors", directory, "vectors contain NaN or infinity")
    orphans = [
        p.name for p in directory.iterdir() if _VECTORS_RE.match(p.name) and p.name != meta.vectors_file
    ]
    if orphans:
        report.notes.append("ignored vectors files no metadata refers to: " + ", ".join(sorted(orphans)))
    return meta, np.asarray(vectors, dtype=np.float32), report


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
