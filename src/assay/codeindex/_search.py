"""Ranking for the code index: chunk-level dense and lexical hits, fused, then aggregated per file/symbol.

- The query is issue text: ``parse_query`` weights paths, dotted names, backticked and traceback
  identifiers up and pasted logs down; the dense side embeds the text without the logs.
- Chunks: reciprocal-rank fusion (RRF) of the dense (FAISS) ranking and a weighted BM25 over each chunk's
  path, symbol (its AST name, counted as a definition) and code.
- Files: the fused scores of a file's best chunks, summed with a decay (a file that several chunks
  match beats one lucky chunk), fused by RRF with a file-level BM25 channel over the whole file; files
  indexed as plain text (docs, changelogs) count half, since an issue is about what the code does.
- Symbols: the best chunk of each symbol, scored with the plain query tokens (the weights helped files,
  not symbols, on both measured histories), fused with the rank of the symbol's file.

Every choice here was kept only when it helped on both the ``pr`` (click) and ``jinja`` suites of
``assay eval retrieval --component code``; ``SearchSettings`` turns each off to measure it again.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.codeindex._hit import Level, SearchableIndex, SearchHit
from assay.codeindex._lexical import LexicalIndex, code_tokens
from assay.codeindex._query import WeightedQuery, parse_query
from assay.errors import ConfigError
from assay.ranking import rrf

if TYPE_CHECKING:
    from assay.codeindex.store import ChunkRecord

__all__ = ["Ranker", "SearchSettings", "ranker", "search"]


@dataclass(frozen=True)
class SearchSettings:
    """How rankings are combined; the defaults are what the index uses (one set for every repository)."""

    candidates: int = 200  # depth of each chunk ranking before fusion
    rrf_k: int = 60
    agg_chunks: int = 3  # a file's score sums its best few chunks ...
    agg_decay: float = 0.5  # ... the i-th best (from 0) weighted decay**i
    file_channel: bool = True  # fuse the whole-file BM25 ranking into the file ranking
    weighted_query: bool = True  # parse_query weights; off: every query token counts once
    weighted_symbols: bool = False  # symbols ranked with the weighted query too (off: plain tokens)
    symbol_terms: int = 2  # extra copies of a chunk's symbol tokens in its lexical text (a definition)
    text_file_weight: float = 0.5  # file score factor of files indexed as plain text (docs, changelogs)


def _path_terms(path: str) -> list[str]:
    return code_tokens(path.replace("/", " ").replace(".", " "))


def _symbol_and_code(c: ChunkRecord) -> tuple[list[str], list[str]]:
    return (code_tokens(c.symbol.replace(".", " ")) if c.symbol else []), code_tokens(c.text)


class Ranker:
    """The lexical structures of one index state (built once, reused until the index changes)."""

    def __init__(
        self, idx: SearchableIndex, settings: SearchSettings, previous: Ranker | None = None
    ) -> None:
        self.idx = idx
        self.settings = settings
        self.chunks = idx.chunks
        # a chunk's tokens are computed once: those of unchanged chunks come from the previous ranker
        old = previous.tokens if previous is not None else {}
        self.tokens: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        by_path: dict[str, list[int]] = defaultdict(list)
        docs = []
        for i, c in enumerate(self.chunks):
            key = (c.symbol, c.text)
            if key not in self.tokens:
                self.tokens[key] = old.get(key) or _symbol_and_code(c)
            sym, code = self.tokens[key]
            docs.append(_path_terms(c.path) + sym * (1 + settings.symbol_terms) + code)
            by_path[c.path].append(i)
        self.chunk_lexical = LexicalIndex(docs)
        self.paths = sorted(by_path)
        self.first_chunk = {p: ids[0] for p, ids in by_path.items()}
        self.file_of = {p: n for n, p in enumerate(self.paths)}
        file_docs = []
        for p in self.paths:
            doc = _path_terms(p)
            for i in by_path[p]:
                sym, code = self.tokens[(self.chunks[i].symbol, self.chunks[i].text)]
                doc += sym + code
            file_docs.append(doc)
        self.file_lexical = LexicalIndex(file_docs)

    # ---------------------------------------------------------------- rankings
    def query(self, text: str, weighted: bool = True) -> WeightedQuery:
        q = parse_query(text)
        if self.settings.weighted_query and weighted:
            return q
        return WeightedQuery(weights=dict.fromkeys(code_tokens(text), 1.0), dense_text=q.dense_text)

    def chunk_scores(self, q: WeightedQuery, mode: str, dense: list[int] | None = None) -> dict[int, float]:
        """RRF of the dense ranking (``dense`` when already computed for this text) and the weighted BM25."""
        depth = self.settings.candidates
        rankings: list[list[int]] = []
        if mode in ("hybrid", "dense"):
            rankings.append(dense if dense is not None else self.idx.dense_ranking(q.dense_text, depth))
        if mode in ("hybrid", "lexical"):
            rankings.append([i for i, _ in self.chunk_lexical.top(q.weights, depth)])
        return rrf(rankings, k=self.settings.rrf_k)

    def file_scores(self, q: WeightedQuery, chunk: dict[int, float], mode: str) -> dict[str, float]:
        s = self.settings
        per_file: dict[str, list[float]] = defaultdict(list)
        for i, v in chunk.items():
            per_file[self.chunks[i].path].append(v)
        agg = {
            p: sum(v * s.agg_decay**j for j, v in enumerate(sorted(vs, reverse=True)[: s.agg_chunks]))
            for p, vs in per_file.items()
        }
        if s.file_channel and mode != "dense":
            from_chunks = [self.file_of[p] for p in sorted(agg, key=lambda p: (-agg[p], p))]
            lexical = [n for n, _ in self.file_lexical.top(q.weights, len(self.paths))]  # every match
            agg = {self.paths[n]: v for n, v in rrf([from_chunks, lexical], k=s.rrf_k).items()}
        if s.text_file_weight != 1.0:
            files = self.idx.files
            for p in agg:
                if p in files and files[p].language is None:
                    agg[p] *= s.text_file_weight
        return agg

    def symbol_scores(
        self, chunk: dict[int, float], files: dict[str, float]
    ) -> dict[tuple[str, str], tuple[float, int]]:
        """(path, symbol) -> (score, its best chunk): the symbol's chunks, fused with its file's rank."""
        s = self.settings
        best: dict[tuple[str, str], tuple[float, int]] = {}
        for i, v in chunk.items():
            c = self.chunks[i]
            key = (c.path, c.symbol or f"<{c.kind}:{c.start_line}>")
            old = best.get(key)
            if old is None or v > old[0]:
                best[key] = (v, i)
        sym_rank = sorted(best, key=lambda k: (-best[k][0], k))
        file_rank = {p: r for r, p in enumerate(sorted(files, key=lambda p: (-files[p], p)), start=1)}
        out = {}
        for r, key in enumerate(sym_rank, start=1):
            fr = file_rank.get(key[0])
            score = 1.0 / (s.rrf_k + r) + (1.0 / (s.rrf_k + fr) if fr else 0.0)
            out[key] = (score, best[key][1])
        return out

    # ---------------------------------------------------------------- the search
    def search(self, query: str, k: int, level: Level, mode: str) -> list[SearchHit]:
        if not query.strip():
            raise ConfigError("empty search query")
        if mode not in ("hybrid", "dense", "lexical"):
            raise ConfigError(f"unknown search mode {mode!r} (hybrid, dense, lexical)")
        if level not in ("chunk", "symbol", "file"):
            raise ConfigError(f"unknown search level {level!r} (chunk, symbol, file)")
        q = self.query(query)
        dense = self.idx.dense_ranking(q.dense_text, self.settings.candidates) if mode != "lexical" else None
        chunk = self.chunk_scores(q, mode, dense)
        picks: list[tuple[float, int]]  # (score, chunk shown for the hit), best first
        if level == "chunk":
            picks = [(chunk[i], i) for i in sorted(chunk, key=lambda i: (-chunk[i], i))]
        else:
            files = self.file_scores(q, chunk, mode)
            if level == "file":
                best_chunk: dict[str, int] = {}
                for i in sorted(chunk, key=lambda i: (-chunk[i], i)):
                    best_chunk.setdefault(self.chunks[i].path, i)
                for p in files:  # a file found only by the file channel shows its first chunk
                    best_chunk.setdefault(p, self.first_chunk[p])
                order = sorted(files, key=lambda p: (-files[p], p))
                picks = [(files[p], best_chunk[p]) for p in order]
            else:
                if not self.settings.weighted_symbols:
                    plain = self.query(query, weighted=False)
                    chunk = self.chunk_scores(plain, mode, dense)  # the same dense side
                syms = self.symbol_scores(chunk, files)
                picks = [syms[key] for key in sorted(syms, key=lambda key: (-syms[key][0], key))]
        hits = []
        for score, i in picks[:k]:
            c = self.chunks[i]
            hits.append(
                SearchHit(
                    rank=len(hits) + 1,
                    score=round(score, 6),
                    path=c.path,
                    symbol=c.symbol,
                    kind=c.kind,
                    start_line=c.start_line,
                    end_line=c.end_line,
                    text=c.text,
                )
            )
        return hits


_RANKERS: weakref.WeakKeyDictionary[SearchableIndex, tuple[tuple[int, int, SearchSettings], Ranker]] = (
    weakref.WeakKeyDictionary()
)


def ranker(idx: SearchableIndex, settings: SearchSettings | None = None) -> Ranker:
    """The ranker of ``idx`` as it stands (rebuilt after the index changes)."""
    settings = settings or SearchSettings()
    key = (idx.generation, id(idx.chunks), settings)
    held = _RANKERS.get(idx)
    if held is None or held[0] != key:
        held = (key, Ranker(idx, settings, previous=held[1] if held is not None else None))
        _RANKERS[idx] = held
    return held[1]


def search(
    idx: SearchableIndex,
    query: str,
    k: int = 10,
    *,
    level: Level = "chunk",
    mode: str = "hybrid",
    settings: SearchSettings | None = None,
) -> list[SearchHit]:
    """The ``k`` best chunks, symbols or files of ``idx`` for ``query`` (see the module docstring)."""
    return ranker(idx, settings).search(query, k, level, mode)
