"""Structure-aware chunking: break at pages and headings first, then paragraphs, then sentences.

The extracted text is normalised first (:mod:`assay.rag.normalize`: NFKC, de-hyphenation, whitespace)
and cut there. Sizes are counted in word-level tokens (runs of word characters, and each punctuation
mark), which is close to, and never more than about 1.3x below, what a WordPiece embedder sees. Each chunk
keeps the document id, the page it starts (and ends) on and its character span ``start:end`` in the
*extracted* text (so evidence quotes placed there keep working); ``text`` is the normalised form of
``extracted[start:end]``, preceded by its table's header rows when the chunk continues a table.

A table (:mod:`assay.rag.tables`) is one unit: its rows stay together, in order, in one chunk where
it fits; a longer one is cut between rows and every later part starts a new chunk under the header.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

from assay.errors import ConfigError
from assay.rag._extract import PAGE_MARKER, PAGED_KINDS, ExtractedDocument, Page
from assay.rag.normalize import Normalized, normalize
from assay.rag.tables import Table, find_tables

__all__ = ["Chunk", "ChunkConfig", "chunk_document", "count_tokens"]

_TOKEN = re.compile(r"\w+|[^\w\s]")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")

# boundary strength before a unit
_SENTENCE_B, _PARAGRAPH_B, _HEADING_B, _PAGE_B = 0, 1, 2, 3


@dataclass(frozen=True)
class ChunkConfig:
    """How documents are cut. ``id`` goes into cache keys, so changing any field rebuilds the cache."""

    max_tokens: int = 200
    overlap_tokens: int = 32
    min_tokens: int = 40

    def __post_init__(self) -> None:
        if self.max_tokens < 8:
            raise ConfigError(f"chunk size must be at least 8 tokens, got {self.max_tokens}")
        if not 0 <= self.overlap_tokens < self.max_tokens // 2:
            raise ConfigError(
                "chunk overlap (--overlap) must be between 0 and half the chunk size "
                f"({self.max_tokens // 2}), got {self.overlap_tokens}"
            )

    @property
    def id(self) -> str:
        return f"chunk-v2:max={self.max_tokens}:overlap={self.overlap_tokens}:min={self.min_tokens}"

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Chunk:
    doc_id: str
    index: int
    start: int
    end: int
    page: int
    page_end: int
    heading: str
    text: str
    n_tokens: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Chunk:
        return cls(**data)  # type: ignore[arg-type]


def count_tokens(text: str) -> int:
    return sum(1 for _ in _TOKEN.finditer(text))


@dataclass
class _Unit:
    a: int  # first token index
    b: int  # one past the last token index
    level: int  # strength of the boundary before this unit
    heading: str
    table: bool = False  # rows of a table (never cut, never carried over as overlap)
    prefix: str = ""  # the header rows a continued table's chunk starts with

    @property
    def n(self) -> int:
        return self.b - self.a


def normalized_view(doc: ExtractedDocument) -> tuple[ExtractedDocument, Normalized]:
    """The document with its text normalised and its pages moved onto the normalised text."""
    norm = normalize(doc.text)
    pages = []
    for page in doc.pages:
        start, end = norm.index_of(page.start), norm.index_of(page.end)
        pages.append(Page(page.number, start, end))
    view = ExtractedDocument(norm.text, doc.kind, pages, doc.sha256, doc.title, doc.degraded, doc.warnings)
    return view, norm


def chunk_document(doc_id: str, doc: ExtractedDocument, config: ChunkConfig | None = None) -> list[Chunk]:
    cfg = config or ChunkConfig()
    view, norm = normalized_view(doc)
    text = view.text
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    starts = [s for s, _ in spans]
    units = _units(view, spans, starts, cfg)

    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    for unit in units:
        hard = (
            unit.level == _PAGE_B
            or (unit.level == _HEADING_B and size >= cfg.min_tokens)
            or bool(unit.prefix)  # a table continued under its header starts its own chunk
        )
        if current and (hard or size + unit.n > cfg.max_tokens):
            if hard:
                groups.append(current)
                current, size = [], 0
            else:
                cut = _paragraph_cut(current, cfg)
                groups.append(current[:cut])
                rest = current[cut:]
                overlap = _overlap(current[:cut], cfg) if cfg.overlap_tokens else []
                current = overlap + rest
                if sum(u.n for u in current) + unit.n > cfg.max_tokens:
                    current = rest
                if sum(u.n for u in current) + unit.n > cfg.max_tokens:
                    if rest:
                        groups.append(rest)
                    current = []
                size = sum(u.n for u in current)
        current.append(unit)
        size += unit.n
    if current:
        groups.append(current)

    chunks: list[Chunk] = []
    for group in groups:
        a, b = group[0].a, group[-1].b
        start, end = spans[a][0], spans[b - 1][1]
        heading = next((u.heading for u in group if u.heading), "")
        src_start, src_end = norm.source_span(start, end)
        prefix = group[0].prefix
        chunks.append(
            Chunk(
                doc_id=doc_id,
                index=len(chunks),
                start=src_start,
                end=src_end,
                page=doc.page_at(src_start),
                page_end=doc.page_at(src_end - 1),
                heading=heading,
                text=f"{prefix}\n{text[start:end]}" if prefix else text[start:end],
                n_tokens=b - a + (count_tokens(prefix) if prefix else 0),
            )
        )
    return chunks


def _paragraph_cut(current: list[_Unit], cfg: ChunkConfig) -> int:
    """Where to end a full chunk: at its last paragraph break if that keeps it at least half full."""
    total = 0
    best = len(current)
    sizes = [u.n for u in current]
    for i, unit in enumerate(current):
        if i > 0 and unit.level >= _PARAGRAPH_B and total >= cfg.max_tokens // 2:
            best = i
        total += sizes[i]
    return best


def _overlap(emitted: list[_Unit], cfg: ChunkConfig) -> list[_Unit]:
    """Trailing whole units of the previous chunk that fit the overlap, else its last tokens."""
    picked: list[_Unit] = []
    total = 0
    if emitted and emitted[-1].table:
        return []
    for unit in reversed(emitted):
        if unit.table or total + unit.n > cfg.overlap_tokens:
            break
        picked.insert(0, unit)
        total += unit.n
    if picked or not emitted:
        return [_Unit(u.a, u.b, _SENTENCE_B, u.heading) for u in picked]
    last = emitted[-1]
    return [_Unit(max(last.a, last.b - cfg.overlap_tokens), last.b, _SENTENCE_B, last.heading)]


def _units(
    doc: ExtractedDocument, spans: list[tuple[int, int]], starts: list[int], cfg: ChunkConfig
) -> list[_Unit]:
    text = doc.text

    def tok(offset: int) -> int:
        return bisect.bisect_left(starts, offset)

    # hard regions: pages (without their [Page N] marker line)
    regions: list[tuple[int, int]] = []
    for page in doc.pages:
        start = page.start
        m = PAGE_MARKER.match(text, start)
        if doc.kind in PAGED_KINDS and m:
            start = m.end()
        regions.append((start, page.end))

    units: list[_Unit] = []
    for region_start, region_end in regions:
        level = _PAGE_B
        # heading boundaries inside the region
        cuts = [(region_start, "")]
        heading = units[-1].heading if units else ""
        for m in _HEADING.finditer(text, region_start, region_end):
            cuts.append((m.start(), m.group(2).strip()))
        for i, (sec_start, sec_heading) in enumerate(cuts):
            sec_end = cuts[i + 1][0] if i + 1 < len(cuts) else region_end
            if sec_heading:
                heading = sec_heading
                level = max(level, _HEADING_B)
            for p_start, p_end, table in _segments(text, sec_start, sec_end):
                if table is not None:
                    units += _table_units(text, table, tok, max(level, _PARAGRAPH_B), heading, cfg)
                    level = _SENTENCE_B
                    continue
                p_level = max(level, _PARAGRAPH_B)
                a, b = tok(p_start), tok(p_end)
                if b <= a:
                    continue
                if b - a <= cfg.max_tokens and b - a <= cfg.max_tokens // 2:
                    units.append(_Unit(a, b, p_level, heading))
                    level = _SENTENCE_B
                    continue
                for s_start, s_end in _split(text, p_start, p_end, _SENTENCE):
                    sa, sb = tok(s_start), tok(s_end)
                    if sb <= sa:
                        continue
                    for wa in range(sa, sb, cfg.max_tokens):
                        units.append(_Unit(wa, min(sb, wa + cfg.max_tokens), p_level, heading))
                        p_level = _SENTENCE_B
                level = _SENTENCE_B
    return units


def _segments(text: str, start: int, end: int) -> list[tuple[int, int, Table | None]]:
    """Paragraphs of ``text[start:end]``, with each table as one segment of its own."""
    out: list[tuple[int, int, Table | None]] = []
    pos = start
    for table in find_tables(text, start, end):
        out += [(a, b, None) for a, b in _split(text, pos, table.start, _PARAGRAPH)]
        out.append((table.start, table.end, table))
        pos = table.end
    out += [(a, b, None) for a, b in _split(text, pos, end, _PARAGRAPH)]
    return out


def _table_units(
    text: str, table: Table, tok: Callable[[int], int], level: int, heading: str, cfg: ChunkConfig
) -> list[_Unit]:
    """A table as one unit, or (too long for a chunk) runs of whole rows, each later run under the header."""
    a, b = tok(table.start), tok(table.end)
    if b - a <= cfg.max_tokens:
        return [_Unit(a, b, level, heading, table=True)]
    head = table.rows[: table.header_rows]
    prefix = text[head[0][0] : head[-1][1]] if head else ""
    budget = cfg.max_tokens - count_tokens(prefix)
    if budget < cfg.max_tokens // 2:  # a header that big is not repeated
        prefix, budget = "", cfg.max_tokens
    units: list[_Unit] = []
    run_a = a
    for row_start, row_end in table.rows:
        ra, rb = tok(row_start), tok(row_end)
        if rb - run_a > budget and ra > run_a:  # close the run before this row
            units.append(_Unit(run_a, ra, level, heading, True, prefix if units else ""))
            level, run_a = _PARAGRAPH_B, ra
        while rb - run_a > budget:  # one row longer than a chunk: cut inside it
            units.append(_Unit(run_a, run_a + budget, level, heading, True, prefix if units else ""))
            level, run_a = _PARAGRAPH_B, run_a + budget
    if b > run_a:
        units.append(_Unit(run_a, b, level, heading, True, prefix if units else ""))
    return units


def _split(text: str, start: int, end: int, sep: re.Pattern[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = start
    for m in sep.finditer(text, start, end):
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = m.end()
    if end > pos:
        out.append((pos, end))
    return out
