"""Chunking invariants over generated documents: nothing lost, nothing oversized, spans exact."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.rag import ChunkConfig, chunk_document, extract_bytes

_word = st.from_regex(r"[A-Za-z]{1,12}|[0-9]{1,4}(\.[0-9]{1,2})?", fullmatch=True)
_sentence = st.lists(_word, min_size=1, max_size=40).map(lambda ws: " ".join(ws) + ".")
_paragraph = st.lists(_sentence, min_size=1, max_size=8).map(" ".join)
_block = st.one_of(_paragraph, _word.map(lambda w: f"## {w}"))
_doc = st.lists(_block, min_size=1, max_size=25).map(lambda bs: "\n\n".join(bs) + "\n")


@settings(max_examples=30, deadline=None)
@given(_doc, st.integers(min_value=16, max_value=120), st.integers(min_value=0, max_value=7))
def test_chunks_cover_every_token_within_size(text: str, size: int, overlap: int) -> None:
    doc = extract_bytes(text.encode(), "markdown", name="gen.md")
    cfg = ChunkConfig(max_tokens=size, overlap_tokens=overlap, min_tokens=size // 4)
    chunks = chunk_document("gen", doc, cfg)
    covered = [False] * len(doc.text)
    for c in chunks:
        assert c.text == doc.text[c.start : c.end]
        assert 0 < c.n_tokens <= size
        for i in range(c.start, c.end):
            covered[i] = True
    for m in re.finditer(r"\w+|[^\w\s]", doc.text):
        assert all(covered[m.start() : m.end()]), f"token {m.group()!r} at {m.start()} is in no chunk"
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
