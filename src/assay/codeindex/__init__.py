"""assay.codeindex: the code search index under test.

Discover a repository's source files, chunk them by symbol, embed the chunks, and search them with dense
(FAISS) and lexical (BM25) retrieval fused by reciprocal rank, at chunk, symbol or file level. The index
lives in one folder under ``$ASSAY_HOME/code_index/``, is saved atomically, verified on load, and updated
incrementally: only chunks whose text is new are embedded, the rest come from the index itself or from a
content-addressed, checksummed vector cache shared by every index beside it (``ASSAY_VECTOR_CACHE=off``
turns it off); the result equals a fresh build.
"""

from __future__ import annotations

from assay.codeindex._api import SearchResult, build_index, search_index
from assay.codeindex._lexical import LexicalIndex, code_tokens
from assay.codeindex.chunk import Chunk, chunk_file
from assay.codeindex.discovery import Discovery, SourceFile, discover
from assay.codeindex.index import CodeIndex, SearchHit, UpdateStats, assay_home, default_index_dir
from assay.codeindex.store import SCHEMA_VERSION, IndexMetadata, StaleIndexError

__all__ = [
    "SCHEMA_VERSION",
    "Chunk",
    "CodeIndex",
    "Discovery",
    "IndexMetadata",
    "LexicalIndex",
    "SearchHit",
    "SearchResult",
    "SourceFile",
    "StaleIndexError",
    "UpdateStats",
    "assay_home",
    "build_index",
    "chunk_file",
    "code_tokens",
    "default_index_dir",
    "discover",
    "search_index",
]
