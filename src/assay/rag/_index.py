"""The document index: extract, chunk, embed, FAISS + BM25 with RRF, a signed cache, a document cap."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from assay._util import phase
from assay.embed import Embedder, embed_queries
from assay.errors import ConfigError, DocumentError, IndexCorruptError, MissingDependencyError
from assay.rag._chunk import Chunk, ChunkConfig, chunk_document
from assay.rag._extract import SUFFIXES, ExtractedDocument, extract_bytes, kind_of
from assay.rag._lexical import Bm25
from assay.rag._query import answer
from assay.rag._records import DocumentInfo, IndexResult, SearchHit, SearchMode, embedding_text
from assay.rag.signing import assay_home, install_key, read_signed, write_signed
from assay.ranking import NORMALIZE, Normalize, convex, fusion_rule, hybrid_defaults, rrf

__all__ = [
    "DocumentIndex",
    "DocumentInfo",
    "IndexResult",
    "SearchHit",
    "SearchMode",
    "embedding_text",
    "iter_supported",
]

INDEX_SCHEMA = 1
_CACHE_FILES = ("document.json", "vectors.npy")
_INDEX_FILES = ("manifest.json", "chunks.jsonl", "vectors.npy")
_BATCH = 64


@dataclass
class _Prepared:
    doc_id: str
    path: str | None
    doc: DocumentInfo
    chunks: list[Chunk]
    vectors: np.ndarray | None
    cache: str
    cache_key: str | None


class DocumentIndex:
    """Documents in, ranked chunks out.

    ``cache_dir`` (default ``$ASSAY_HOME/cache/rag``; ``None`` turns the cache off) holds one signed
    entry per (path, content hash, embedder id, chunking config, OCR). ``max_documents`` caps the index:
    adding past it evicts the oldest documents and the :class:`IndexResult` names them. ``ocr`` reads the
    mostly-image pages of PDFs with tesseract (:mod:`assay.rag.ocr`); off, they are flagged ``degraded``.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        chunking: ChunkConfig | None = None,
        max_documents: int | None = None,
        cache_dir: Path | str | Literal["default"] | None = "default",
        rrf_k: int = 60,
        fusion: Literal["convex", "rrf"] = "convex",
        alpha: float | None = None,
        normalize: Normalize | None = None,
        ocr: bool = False,
    ) -> None:
        if max_documents is not None and max_documents < 1:
            raise ConfigError(f"max_documents must be at least 1, got {max_documents}")
        self.embedder = embedder
        #: the spec the embedder was built from (``get_embedder(spec)``), when known
        self.embedder_spec: str | None = None
        self.chunking = chunking or ChunkConfig()
        self.max_documents = max_documents
        default_normalize, default_alpha = hybrid_defaults(embedder.name)
        normalize = default_normalize if normalize is None else normalize
        alpha = default_alpha if alpha is None else alpha
        if fusion not in ("convex", "rrf"):
            raise ConfigError(f"fusion must be convex or rrf, got {fusion!r}")
        if not 0.0 <= alpha <= 1.0:
            raise ConfigError(f"alpha must be between 0 and 1, got {alpha}")
        if normalize not in NORMALIZE:
            raise ConfigError(f"normalize must be one of {', '.join(NORMALIZE)}, got {normalize!r}")
        self.normalize: Normalize = normalize
        self.rrf_k = rrf_k
        self.fusion = fusion
        self.alpha = alpha
        self.ocr = ocr
        if cache_dir == "default":
            cache_dir = assay_home() / "cache" / "rag"
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._key: bytes | None = None
        self._docs: dict[str, DocumentInfo] = {}
        self._chunks: dict[str, list[Chunk]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._seq = 0
        self._dirty = True
        self._order: list[Chunk] = []
        self._titles: list[str] = []
        self._text_keys: list[bytes] = []
        self._positions: dict[tuple[str, int], int] = {}
        self._faiss: Any = None
        self._matrix = np.zeros((0, embedder.dim), dtype=np.float32)
        self._bm25: Bm25 | None = None

    @property
    def fusion_rule(self) -> str:
        """The hybrid fusion setting as one name (``convex/minmax/alpha=0.5``): part of a run's provenance."""
        return fusion_rule(self.fusion, self.alpha, self.normalize, self.rrf_k)

    # ------------------------------------------------------------------------------------- contents

    @property
    def documents(self) -> list[DocumentInfo]:
        return sorted(self._docs.values(), key=lambda d: d.seq)

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    @property
    def n_chunks(self) -> int:
        return sum(len(c) for c in self._chunks.values())

    def chunks(self, doc_id: str) -> list[Chunk]:
        return list(self._chunks.get(doc_id, []))

    # ------------------------------------------------------------------------------------- indexing

    def index_document(self, path: str | Path, doc_id: str | None = None) -> IndexResult:
        """Index (or re-index) one file; a changed file replaces the old text, an unchanged one is kept."""
        return self.index_documents([path], [doc_id] if doc_id is not None else None)[0]

    def index_documents(
        self, paths: Sequence[str | Path], doc_ids: Sequence[str | None] | None = None
    ) -> list[IndexResult]:
        """Index many files, embedding their new chunks in shared batches. Raises on the first bad file."""
        if doc_ids is not None and len(doc_ids) != len(paths):
            raise ConfigError("index_documents: paths and doc_ids differ in length")
        items: list[tuple[str, str, bytes]] = []
        for i, path in enumerate(paths):
            p = Path(path)
            kind_of(p)
            try:
                data = p.read_bytes()
            except OSError as exc:
                raise DocumentError(f"cannot read: {exc.strerror or exc}", path=str(p)) from exc
            did = (doc_ids[i] if doc_ids is not None else None) or str(p)
            items.append((did, str(p), data))
        return self._index_many(items)

    def index_text(self, doc_id: str, text: str, *, kind: str = "text", title: str = "") -> IndexResult:
        """Index a text already in memory (kind text or markdown) under ``doc_id``."""
        if kind not in ("text", "markdown", "html"):
            raise ConfigError(f"index_text: kind must be text, markdown or html, got {kind!r}")
        return self._index_many([(doc_id, None, text.encode("utf-8"))], kind=kind, title=title)[0]

    def index_texts(self, items: Sequence[tuple[str, str]], *, kind: str = "text") -> list[IndexResult]:
        """Index many ``(doc_id, text)`` pairs at once (their chunks are embedded in shared batches)."""
        if kind not in ("text", "markdown", "html"):
            raise ConfigError(f"index_texts: kind must be text, markdown or html, got {kind!r}")
        return self._index_many([(doc_id, None, text.encode("utf-8")) for doc_id, text in items], kind=kind)

    def index_folder(self, folder: str | Path) -> list[IndexResult]:
        """Index every supported file under ``folder`` (sorted, hidden paths skipped)."""
        root = Path(folder)
        if not root.is_dir():
            raise ConfigError(f"not a folder: {root}")
        return self.index_documents(iter_supported([root]))

    def _index_many(
        self, items: Sequence[tuple[str, str | None, bytes]], kind: str | None = None, title: str = ""
    ) -> list[IndexResult]:
        t0 = time.perf_counter()
        prepared: list[_Prepared | IndexResult] = []
        for doc_id, path, data in items:
            sha = hashlib.sha256(data).hexdigest()
            old = self._docs.get(doc_id)
            # unchanged, unless OCR is now on and would read the image pages it was indexed without
            if (
                old is not None
                and old.sha256 == sha
                and old.path == path
                and not (self.ocr and old.image_pages)
            ):
                prepared.append(IndexResult(doc_id, "unchanged", old.n_chunks, cache="loaded"))
                continue
            prepared.append(self._prepare(doc_id, path, data, sha, kind, title))
        todo = [p for p in prepared if isinstance(p, _Prepared) and p.vectors is None]
        texts = [embedding_text(p.doc.title, c) for p in todo for c in p.chunks]
        vectors = self._embed(texts)
        offset = 0
        for p in todo:
            p.vectors = vectors[offset : offset + len(p.chunks)]
            offset += len(p.chunks)
            if p.cache_key is not None:
                self._store(p)
        results: list[IndexResult] = []
        for item in prepared:
            if isinstance(item, IndexResult):
                results.append(item)
                continue
            status: Literal["indexed", "replaced"] = "replaced" if item.doc_id in self._docs else "indexed"
            evicted = self._add(item)
            results.append(
                IndexResult(
                    item.doc_id,
                    status,
                    len(item.chunks),
                    item.cache,
                    item.doc.degraded,
                    list(item.doc.warnings),
                    evicted,
                    ocr_pages=list(item.doc.ocr_pages),
                    image_pages=list(item.doc.image_pages),
                )
            )
        elapsed = time.perf_counter() - t0
        for r in results:
            r.seconds = elapsed / max(1, len(results))
        return results

    def _prepare(
        self, doc_id: str, path: str | None, data: bytes, sha: str, kind: str | None, title: str
    ) -> _Prepared:
        cache_key = None
        cache = "off"
        if self.cache_dir is not None and path is not None:
            parts = [str(Path(path).resolve()), sha, self.embedder.id, self.chunking.id]
            raw = "\0".join([*parts, "ocr"] if self.ocr else parts)
            cache_key = hashlib.sha256(raw.encode()).hexdigest()
            loaded = self._load_cached(cache_key, doc_id, path)
            if isinstance(loaded, _Prepared):
                return loaded
            cache = "miss" if loaded == "missing" else f"rebuilt:{loaded}"
        extracted: ExtractedDocument = (
            extract_bytes(data, kind_of(path), name=path, ocr=self.ocr)
            if path is not None
            else extract_bytes(data, kind or "text", name=doc_id)  # type: ignore[arg-type]
        )
        if title or path is None:
            extracted.title = title
        chunks = chunk_document(doc_id, extracted, self.chunking)
        if not chunks:
            raise DocumentError("no text to index after extraction", path=path or doc_id)
        info = DocumentInfo(
            doc_id, path, sha, extracted.kind, extracted.title, len(chunks), extracted.degraded,
            list(extracted.warnings), ocr_pages=list(extracted.ocr_pages),
            image_pages=list(extracted.image_pages),
        )  # fmt: skip
        return _Prepared(doc_id, path, info, chunks, None, cache, cache_key)

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        parts = []
        with phase("embedding document chunks", total=len(texts), unit="chunks") as ph:
            for i in range(0, len(texts), _BATCH):
                parts.append(np.asarray(self.embedder.embed(texts[i : i + _BATCH]), dtype=np.float32))
                ph.advance(len(texts[i : i + _BATCH]))  # also where Ctrl-C stops the build
        out = np.concatenate(parts)
        if out.shape != (len(texts), self.embedder.dim):
            raise IndexCorruptError(
                f"embedder {self.embedder.id} returned shape {out.shape}, expected ({len(texts)}, "
                f"{self.embedder.dim})"
            )
        return out

    def _add(self, p: _Prepared) -> list[str]:
        evicted: list[str] = []
        if p.doc_id not in self._docs and self.max_documents is not None:
            while len(self._docs) >= self.max_documents:
                oldest = min(self._docs.values(), key=lambda d: d.seq)
                self.remove_document(oldest.doc_id)
                evicted.append(oldest.doc_id)
        self._seq += 1
        p.doc.seq = self._seq
        p.doc.doc_id = p.doc_id
        self._docs[p.doc_id] = p.doc
        self._chunks[p.doc_id] = [c if c.doc_id == p.doc_id else _rename(c, p.doc_id) for c in p.chunks]
        assert p.vectors is not None
        self._vectors[p.doc_id] = p.vectors
        self._dirty = True
        return evicted

    def remove_document(self, doc_id: str) -> bool:
        """Drop a document; True if it was there."""
        if doc_id not in self._docs:
            return False
        del self._docs[doc_id], self._chunks[doc_id], self._vectors[doc_id]
        self._dirty = True
        return True

    # ---------------------------------------------------------------------------------------- cache

    def _cache_folder(self, key: str) -> Path:
        assert self.cache_dir is not None
        return self.cache_dir / key[:2] / key

    def _signing_key(self) -> bytes:
        if self._key is None:
            self._key = install_key()
        return self._key

    def _load_cached(self, key: str, doc_id: str, path: str) -> _Prepared | str:
        got = read_signed(self._cache_folder(key), _CACHE_FILES, self._signing_key())
        if isinstance(got, str):
            return got
        try:
            meta = json.loads(got["document.json"])
            vectors = np.load(io.BytesIO(got["vectors.npy"]), allow_pickle=False)
            chunks = [Chunk.from_dict({**c, "doc_id": doc_id}) for c in meta["chunks"]]
            info = DocumentInfo(**{**meta["document"], "doc_id": doc_id, "path": path})
        except (ValueError, KeyError, TypeError) as exc:
            return f"unreadable ({type(exc).__name__})"
        if vectors.shape != (len(chunks), self.embedder.dim) or meta.get("embedder") != self.embedder.id:
            return "unreadable (shape)"
        return _Prepared(doc_id, path, info, chunks, vectors.astype(np.float32), "hit", key)

    def _store(self, p: _Prepared) -> None:
        assert p.cache_key is not None and p.vectors is not None
        meta = {
            "schema_version": INDEX_SCHEMA,
            "embedder": self.embedder.id,
            "chunking": self.chunking.to_dict(),
            "document": asdict(p.doc),
            "chunks": [c.to_dict() for c in p.chunks],
        }
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(p.vectors, dtype=np.float32), allow_pickle=False)
        files = {"document.json": json.dumps(meta).encode(), "vectors.npy": buf.getvalue()}
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            write_signed(self._cache_folder(p.cache_key), files, self._signing_key())

    # --------------------------------------------------------------------------------------- search

    def _build(self) -> None:
        if not self._dirty:
            return
        try:
            import faiss
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingDependencyError("faiss-cpu", "rag") from exc
        docs = self.documents
        self._order = [c for d in docs for c in self._chunks[d.doc_id]]
        self._titles = [d.title for d in docs for _ in self._chunks[d.doc_id]]
        self._positions = {(c.doc_id, c.index): i for i, c in enumerate(self._order)}
        self._text_keys = [hashlib.blake2b(c.text.encode(), digest_size=12).digest() for c in self._order]
        index = faiss.IndexFlatIP(self.embedder.dim)
        self._matrix = np.zeros((0, self.embedder.dim), dtype=np.float32)
        if docs:
            self._matrix = np.ascontiguousarray(np.concatenate([self._vectors[d.doc_id] for d in docs]))
            index.add(self._matrix)
        self._faiss = index
        self._bm25 = Bm25([embedding_text(t, c) for t, c in zip(self._titles, self._order, strict=True)])
        self._dirty = False

    def _query_vector(self, query: str) -> np.ndarray:
        return np.asarray(embed_queries(self.embedder, [query]), dtype=np.float32).reshape(1, -1)

    def dense_ranking(
        self, query: str, n: int, vector: np.ndarray | None = None
    ) -> tuple[list[int], list[float]]:
        """Positions (in the search order) of the ``n`` chunks nearest ``query``, with cosine scores."""
        self._build()
        if not self._order:
            return [], []
        qv = self._query_vector(query) if vector is None else vector
        scores, ids = _search_one_thread(self._faiss, qv, min(n, len(self._order)))
        pairs = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
        return [i for i, _ in pairs], [s for _, s in pairs]

    def bm25_ranking(
        self, query: str, n: int, scores: np.ndarray | None = None
    ) -> tuple[list[int], list[float]]:
        """Positions of the ``n`` best BM25 chunks for ``query`` (only those sharing a term), with scores."""
        self._build()
        assert self._bm25 is not None
        scores = self._bm25.scores(query) if scores is None else scores
        if not len(scores):
            return [], []
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]
        keep = [int(i) for i in top if scores[i] > 0]
        return keep, [float(scores[i]) for i in keep]

    def search(
        self, query: str, k: int = 10, mode: SearchMode = "hybrid", *, dedupe: bool = True
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query``: dense, BM25, or both fused.

        Hybrid fusion is ``convex`` by default: ``alpha * cosine' + (1 - alpha) * bm25'`` over the union of
        both candidate lists (exact scores for every candidate), each channel min-max scaled over those
        candidates and dense weighed 0.7 (``normalize`` and ``alpha`` default to
        :func:`assay.ranking.hybrid_defaults` of the embedder; the formula is :func:`assay.ranking.convex`),
        which keeps how much better the best hit is than the rest; ``rrf`` (reciprocal rank) keeps only ranks.
        With ``dedupe`` a chunk whose text is identical to a better-ranked one (a copy of a document
        under another name) is dropped, so copies cannot crowd out other evidence.
        """
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        if mode not in ("hybrid", "dense", "bm25"):
            raise ConfigError(f"search mode must be hybrid, dense or bm25, got {mode!r}")
        self._build()
        if not self._order:
            return []
        depth = max(50, 4 * k)
        qv = self._query_vector(query) if mode != "bm25" else None
        lex_all = self._bm25.scores(query) if mode != "dense" and self._bm25 is not None else None
        dense, dense_s = self.dense_ranking(query, depth, qv) if qv is not None else ([], [])
        lexical, lex_s = self.bm25_ranking(query, depth, lex_all) if lex_all is not None else ([], [])
        dpos = {c: r for r, c in enumerate(dense, start=1)}
        bpos = {c: r for r, c in enumerate(lexical, start=1)}
        scored: list[tuple[int, float]]
        if mode == "dense":
            scored = list(zip(dense, dense_s, strict=True))
        elif mode == "bm25":
            scored = list(zip(lexical, lex_s, strict=True))
        elif self.fusion == "rrf":
            fused = rrf([dense, lexical], k=self.rrf_k)
            scored = sorted(fused.items(), key=lambda kv: (-kv[1], dpos.get(kv[0], 1 << 30), kv[0]))
        else:
            assert qv is not None and lex_all is not None
            cands = np.array(list(dict.fromkeys(dense + lexical)), dtype=np.int64)
            cos = np.maximum(self._matrix[cands] @ qv[0], 0.0)
            fused_s = convex(cos, lex_all[cands], self.alpha, self.normalize)
            scored = sorted(
                ((int(i), float(f)) for i, f in zip(cands, fused_s, strict=True)),
                key=lambda kv: (-kv[1], dpos.get(kv[0], 1 << 30), kv[0]),
            )
        if dedupe:
            seen: set[bytes] = set()
            unique: list[tuple[int, float]] = []
            for i, s in scored:
                if self._text_keys[i] not in seen:
                    seen.add(self._text_keys[i])
                    unique.append((i, s))
            scored = unique
        return [
            SearchHit(self._order[i], s, r, self._titles[i], dpos.get(i), bpos.get(i))
            for r, (i, s) in enumerate(scored[:k], start=1)
        ]

    async def query(self, question: str, model: Any, *, k: int = 5, **options: Any) -> Any:
        """Retrieve for ``question`` and answer it with ``model`` (see :func:`assay.rag.answer`)."""
        return await answer(self, question, model, k=k, **options)

    def chunk_at(self, position: int) -> tuple[Chunk, str]:
        """The chunk at ``position`` in the search order, and its document's title."""
        self._build()
        return self._order[position], self._titles[position]

    def chunk_text_key(self, position: int) -> bytes:
        """A digest of the chunk text at ``position`` in the search order (used to spot duplicates)."""
        self._build()
        return self._text_keys[position]

    def position(self, chunk: Chunk) -> int:
        """Where ``chunk`` sits in the search order."""
        self._build()
        return self._positions[(chunk.doc_id, chunk.index)]

    # ----------------------------------------------------------------------------------- save, load

    def save(self, folder: str | Path, *, key: bytes | None = None) -> None:
        """Write the index as a signed folder of plain files (JSON, JSONL, ``.npy``), signed with this install's
        key or ``key`` (an index handed to another process that must not hold the install's key)."""
        docs = self.documents
        manifest = {
            "schema_version": INDEX_SCHEMA,
            "embedder": self.embedder.id,
            "dim": self.embedder.dim,
            "chunking": self.chunking.to_dict(),
            "max_documents": self.max_documents,
            "fusion": self.fusion,
            "alpha": self.alpha,
            "normalize": self.normalize,
            "ocr": self.ocr,
            "documents": [asdict(d) for d in docs],
        }
        lines = [json.dumps(c.to_dict()) for d in docs for c in self._chunks[d.doc_id]]
        buf = io.BytesIO()
        vecs = [self._vectors[d.doc_id] for d in docs]
        arr = np.concatenate(vecs) if vecs else np.zeros((0, self.embedder.dim), dtype=np.float32)
        np.save(buf, np.ascontiguousarray(arr, dtype=np.float32), allow_pickle=False)
        files = {
            "manifest.json": json.dumps(manifest, indent=1).encode(),
            "chunks.jsonl": ("\n".join(lines) + "\n").encode(),
            "vectors.npy": buf.getvalue(),
        }
        write_signed(Path(folder), files, key or self._signing_key())

    @classmethod
    def load(
        cls, folder: str | Path, embedder: Embedder, *, key: bytes | None = None, **kwargs: Any
    ) -> DocumentIndex:
        """Load a saved index after checking its signature (this install's key, or ``key``) and that it was
        built with ``embedder``."""
        index = cls(embedder, **kwargs)
        got = read_signed(Path(folder), _INDEX_FILES, key or index._signing_key())
        if isinstance(got, str):
            raise IndexCorruptError(
                f"{folder}: index failed its signature check ({got}); delete the folder and index the "
                "documents again, or pass another --index folder"
            )
        try:
            manifest = json.loads(got["manifest.json"])
            chunks = [Chunk.from_dict(json.loads(x)) for x in got["chunks.jsonl"].decode().splitlines() if x]
            vectors = np.load(io.BytesIO(got["vectors.npy"]), allow_pickle=False)
        except (ValueError, KeyError, TypeError) as exc:
            raise IndexCorruptError(f"{folder}: index files cannot be parsed: {exc}") from exc
        if manifest.get("embedder") != embedder.id:
            raise IndexCorruptError(
                f"{folder}: index was built with embedder {manifest.get('embedder')!r}, not {embedder.id!r}; "
                "use that embedder or index the documents again"
            )
        index.chunking = ChunkConfig(**manifest["chunking"])
        index.max_documents = manifest.get("max_documents")
        index.fusion = manifest.get("fusion", index.fusion)
        index.alpha = float(manifest.get("alpha", index.alpha))
        index.normalize = manifest.get("normalize", "max")  # an index saved before the field: the old rule
        index.ocr = bool(manifest.get("ocr", index.ocr))
        offset = 0
        for d in manifest["documents"]:
            info = DocumentInfo(**d)
            own = [c for c in chunks[offset : offset + info.n_chunks]]
            index._docs[info.doc_id] = info
            index._chunks[info.doc_id] = own
            index._vectors[info.doc_id] = vectors[offset : offset + info.n_chunks]
            offset += info.n_chunks
            index._seq = max(index._seq, info.seq)
        if offset != len(chunks) or offset != len(vectors):
            raise IndexCorruptError(f"{folder}: manifest, chunks and vectors disagree in length")
        return index


def _search_one_thread(index: Any, qv: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """FAISS search of one query on one OpenMP thread (the setting is the process's, so it is put back).

    A flat scan of one query splits too little work among threads: measured on 2 busy cores over 19,428
    chunks, p50 60 ms with 2 threads against 1.9 ms with 1.
    """
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        return index.search(qv, n)  # type: ignore[no-any-return]
    finally:
        faiss.omp_set_num_threads(before)


def _rename(chunk: Chunk, doc_id: str) -> Chunk:
    return Chunk(**{**chunk.to_dict(), "doc_id": doc_id})  # type: ignore[arg-type]


def iter_supported(paths: Iterable[str | Path]) -> list[Path]:
    """Files among ``paths`` (folders expanded) that the extractors support."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(
                f for f in sorted(p.rglob("*"))
                if f.is_file()
                and f.suffix.lower() in SUFFIXES
                and not any(x.startswith(".") for x in f.relative_to(p).parts)
            )  # fmt: skip
        elif p.exists():
            out.append(p)
        else:
            raise ConfigError(f"no such file or folder: {p}")
    return out
