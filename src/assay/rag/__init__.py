"""The document retrieval SDK: extract, chunk, embed, index (FAISS + BM25, fused), a signed cache, answers.

from assay.embed import HashEmbedder
from assay.rag import DocumentIndex

index = DocumentIndex(HashEmbedder())
index.index_document("handbook.pdf")
for hit in index.search("how many vacation days", k=5):
    print(hit.chunk.doc_id, hit.chunk.page, hit.chunk.text[:80])
"""

from __future__ import annotations

from assay.rag._chunk import Chunk, ChunkConfig, chunk_document, count_tokens
from assay.rag._extract import ExtractedDocument, Page, extract, extract_bytes
from assay.rag._index import (
    DocumentIndex,
    DocumentInfo,
    IndexResult,
    SearchHit,
    SearchMode,
    embedding_text,
    iter_supported,
)
from assay.rag._query import Answer, ToolResult, answer, format_context, query_documents, query_documents_tool
from assay.rag._store import IndexReport, default_index_dir, index_paths, open_index
from assay.rag.signing import install_key, read_signed, write_signed
from assay.ranking import rrf

__all__ = [
    "Answer",
    "Chunk",
    "ChunkConfig",
    "DocumentIndex",
    "DocumentInfo",
    "ExtractedDocument",
    "IndexReport",
    "IndexResult",
    "Page",
    "SearchHit",
    "SearchMode",
    "ToolResult",
    "answer",
    "chunk_document",
    "count_tokens",
    "default_index_dir",
    "embedding_text",
    "extract",
    "extract_bytes",
    "format_context",
    "index_paths",
    "install_key",
    "iter_supported",
    "open_index",
    "query_documents",
    "query_documents_tool",
    "read_signed",
    "rrf",
    "write_signed",
]
