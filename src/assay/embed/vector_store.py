"""The one on-disk vector store: checksummed, content-addressed entries, read checks and atomic writes.

Used by every code index that points at it (``assay.codeindex``) and by the disk layer of
:class:`~assay.embed.CachedEmbedder`. A chunk whose embedded text is unchanged gets the vector computed the first time that text was seen,
whichever commit, worktree or repository that was. The key is the sha256 of the embedder's identity
(its ``id``, which names the weights' digest and every setting that changes vectors, plus the dim, dtype
and normalisation) and the exact text the embedder sees, so two embedders never share an entry.

Layout::

    <cache dir>/<sha256(identity)[:16]>/
        embedder.json         the identity in words (for people; every entry carries its own key)
        ab/ab12...ef.vec      one vector: header + float32 payload

An entry (little-endian) is ``b"AVEC"``, u16 format version, u16 dtype code (1 = float32), u32 dim, the
32-byte key, the 32-byte sha256 of the payload, then ``dim`` float32 values. It is served only when its
size, magic, version, dtype, dim, key and checksum all match and the values are finite and of unit length
(or all zero, as embedders return for an empty text); anything else is counted as damaged and is
re-embedded and rewritten, never served. Writers write ``.tmp-*`` files in the entry's folder and rename
them into place, so concurrent writers leave one complete entry and a killed one leaves a temp file that
no reader opens. Entries are not fsynced (a cache is cheaper to repair than to sync): a power cut can leave
one empty or zeroed, and its checks catch that. Nothing prunes the cache yet (about 1.6 KB an entry at 384-d).

``ASSAY_VECTOR_CACHE`` switches it: ``off`` disables it (indexes re-embed every chunk of a changed file,
as before the cache; benchmarks use it to measure the difference), a folder path moves it there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import struct
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assay.embed._protocol import Embedder
from assay.errors import ConfigError

__all__ = [
    "ENV_VAR",
    "CacheCounts",
    "VectorCache",
    "atomic_write",
    "embedder_identity",
    "identity_of",
    "resolve_cache_dir",
]

ENV_VAR = "ASSAY_VECTOR_CACHE"
_MAGIC = b"AVEC"
_VERSION = 1
_FLOAT32 = 1
_HEADER = struct.Struct("<4sHHI32s32s")  # magic, version, dtype, dim, key, payload sha256
_NORM_TOLERANCE = 1e-3


def identity_of(embedder_id: str, dim: int) -> str:
    """Everything that makes two embedders' vectors differ: id (weights digest, settings), dim, dtype, norm."""
    return f"{embedder_id}|dim={dim}|dtype=float32|norm=l2"


def embedder_identity(embedder: Embedder) -> str:
    """:func:`identity_of` an embedder."""
    return identity_of(embedder.id, embedder.dim)


def resolve_cache_dir(default: Path | None) -> Path | None:
    """The cache folder to use: ``$ASSAY_VECTOR_CACHE`` when set (``off``, ``on`` or a folder), else ``default``.

    ``None`` means no cache. Any other value of the variable is a ConfigError naming it.
    """
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw or raw.lower() == "on":
        return default
    if raw.lower() == "off":
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise ConfigError(f"{ENV_VAR} must be 'off', 'on' or an absolute folder path, got {raw!r}")
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{ENV_VAR}={raw} is a file, not a folder", path=str(path))
    return path


@dataclass
class CacheCounts:
    """What one lookup/store round did: entries served, missing, damaged (not served), failed writes."""

    hits: int = 0
    misses: int = 0
    damaged: int = 0
    write_errors: int = 0


class VectorCache:
    """The entries of one embedder under ``directory`` (see the module docstring for the format)."""

    def __init__(self, directory: str | os.PathLike[str], embedder: Embedder) -> None:
        self._setup(Path(directory), embedder_identity(embedder), int(embedder.dim), embedder.name)

    @classmethod
    def with_identity(
        cls, directory: str | os.PathLike[str], identity: str, dim: int, name: str = "embedder"
    ) -> VectorCache:
        """The cache of an embedder known only by its identity and dim (inspection, damage tests)."""
        cache = cls.__new__(cls)
        cache._setup(Path(directory), identity, dim, name)
        return cache

    @classmethod
    def in_folder(cls, directory: str | os.PathLike[str], identity: str, dim: int) -> VectorCache:
        """Entries kept directly in ``directory`` (a folder its owner names and guards, as CachedEmbedder does)."""
        cache = cls.__new__(cls)
        cache._setup(Path(directory).parent, identity, dim, "embedder")
        cache.directory = Path(directory)
        return cache

    def _setup(self, root: Path, identity: str, dim: int, name: str) -> None:
        self.root, self.identity, self.dim = root, identity, dim
        self._prefix = identity.encode("utf-8") + b"\x00"
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:40].strip("_") or "embedder"
        self.directory = root / f"{slug}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
        self._ready = False

    def key(self, text: str) -> str:
        """The entry key of ``text`` for this embedder."""
        return hashlib.sha256(self._prefix + text.encode("utf-8", "surrogatepass")).hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.vec"

    # ---------------------------------------------------------------- reading
    def _decode(self, key: str, blob: bytes) -> np.ndarray | None:
        if len(blob) != _HEADER.size + 4 * self.dim:
            return None
        magic, version, dtype, dim, stored_key, digest = _HEADER.unpack_from(blob)
        if magic != _MAGIC or version != _VERSION or dtype != _FLOAT32 or dim != self.dim:
            return None
        payload = blob[_HEADER.size :]
        if stored_key != bytes.fromhex(key) or hashlib.sha256(payload).digest() != digest:
            return None
        vec = np.frombuffer(payload, dtype="<f4").astype(np.float32)
        if not np.all(np.isfinite(vec)):
            return None
        sq = float(np.dot(vec, vec))
        if sq != 0.0 and abs(sq - 1.0) > _NORM_TOLERANCE:
            return None
        return vec

    def get_many(self, keys: Iterable[str], counts: CacheCounts) -> dict[str, np.ndarray]:
        """The verified vectors of those ``keys`` that have a sound entry; the rest are counted, not served."""
        found: dict[str, np.ndarray] = {}
        for key in dict.fromkeys(keys):
            try:
                blob = self.path(key).read_bytes()
            except FileNotFoundError:
                counts.misses += 1
                continue
            except OSError:  # unreadable (a folder in its place, permissions): as good as damaged
                counts.damaged += 1
                continue
            vec = self._decode(key, blob)
            if vec is None:
                counts.damaged += 1
            else:
                counts.hits += 1
                found[key] = vec
        return found

    # ---------------------------------------------------------------- writing
    def encode(self, key: str, vec: np.ndarray) -> bytes:
        payload = np.ascontiguousarray(vec, dtype="<f4").reshape(self.dim).tobytes()
        digest = hashlib.sha256(payload).digest()
        return _HEADER.pack(_MAGIC, _VERSION, _FLOAT32, self.dim, bytes.fromhex(key), digest) + payload

    def _prepare(self) -> None:
        if self._ready:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        meta = self.directory / "embedder.json"
        if not meta.is_file():
            atomic_write(meta, json.dumps({"identity": self.identity, "format": _VERSION}).encode())
        self._ready = True

    def put_many(self, vectors: Mapping[str, np.ndarray], counts: CacheCounts) -> None:
        """Store each (key, vector); a failed write is counted and the index goes on without it."""
        if not vectors:
            return
        try:
            self._prepare()
        except OSError:
            counts.write_errors += len(vectors)
            return
        for key, vec in vectors.items():
            try:
                atomic_write(self.path(key), self.encode(key, vec))
            except OSError:
                counts.write_errors += 1


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to a ``.tmp-*`` file beside ``path`` and rename it into place (no half-written file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
