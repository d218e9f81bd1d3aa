"""Tables in extracted text: one form (pipe rows) that every extractor writes and the chunker keeps whole.

A table is two or more consecutive lines that start with ``|`` and hold another ``|`` (Markdown tables
as they are; HTML, DOCX and PPTX tables and the tables of PDF page layouts are written this way by their
extractors). When its second row is a Markdown separator (``|---|---|``) the first row is its header,
which the chunker repeats on every chunk of a table too long for one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Table", "find_tables", "layout_tables", "pipe_row", "separator_row"]

_ROW = re.compile(r"^[ \t]*\|[^\n]*\|[^\n]*$", re.MULTILINE)
_SEPARATOR = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+(?:[ \t]*:?-{3,}:?[ \t]*)?$")
_CELL_GAP = re.compile(r"\S(?:.*?\S)??(?=\s{2,}|\s*$)")
#: a cell of more words than this is prose, never a table cell
_MAX_CELL_WORDS = 5
_NUMBER = re.compile(r"\d")


@dataclass(frozen=True)
class Table:
    """Rows ``rows`` (line spans, newline excluded) of ``text[start:end]``; the first ``header_rows`` head it."""

    start: int
    end: int
    rows: tuple[tuple[int, int], ...]
    header_rows: int


def find_tables(text: str, start: int = 0, end: int | None = None) -> list[Table]:
    """The tables in ``text[start:end]``, in order."""
    end = len(text) if end is None else end
    tables: list[Table] = []
    run: list[tuple[int, int]] = []

    def close() -> None:
        if len(run) >= 2:
            header = 2 if len(run) > 2 and _SEPARATOR.match(text[run[1][0] : run[1][1]]) else 0
            tables.append(Table(run[0][0], run[-1][1], tuple(run), header))

    for m in _ROW.finditer(text, start, end):
        gap = text[run[-1][1] : m.start()] if run else ""
        if run and not (gap.count("\n") == 1 and gap.strip() == ""):
            close()
            run = []
        run.append((m.start(), m.end()))
    close()
    return tables


def pipe_row(cells: Sequence[str]) -> str:
    """One table row: cells with their whitespace folded and any ``|`` in them written as ``/``."""
    return "| " + " | ".join(" ".join(c.replace("|", "/").split()) for c in cells) + " |"


def separator_row(n: int) -> str:
    return "|" + "---|" * max(1, n)


def _near(x: tuple[int, int, str], y: tuple[int, int, str]) -> bool:
    """Same column: starts or ends within two characters (layout text places characters approximately)."""
    return abs(x[0] - y[0]) <= 2 or abs(x[1] - y[1]) <= 2


def _aligned(first: list[tuple[int, int, str]], cells: list[tuple[int, int, str]]) -> tuple[int, int]:
    """How many leading and how many trailing cells of ``cells`` line up with those of ``first``."""
    n = min(len(first), len(cells))

    def ok(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
        return _near(a, b) and len(b[2].split()) <= _MAX_CELL_WORDS

    head = 0
    while head < n and ok(first[head], cells[head]):
        head += 1
    tail = 0
    while tail < n and ok(first[-1 - tail], cells[-1 - tail]):
        tail += 1
    return head, tail


def layout_tables(layout: str, min_rows: int = 3, min_cells: int = 3) -> dict[str, str]:
    """Rows of the tables in a page's *layout* text (columns kept as runs of spaces), keyed by the plain
    line they appear as (cells joined by one space) and valued as a pipe row.

    Cells are separated by two or more spaces. A table is ``min_rows`` or more non-blank lines in a row
    whose first (or last) ``min_cells`` or more cells line up with the first row's, each starting or
    ending within two characters of it, none of more than five words, and every row after the first
    holding a number: justified prose has wide gaps too, but they do not line up line after line with a
    number in each. A table beside a column of prose (a two-column page) is its lines' aligned tail (or
    head). When the first row has no digits, it is the header; else the line just above, when its
    cells over the table's columns are short and hold no digits (a header whose width the layout text
    misjudges, so it does not line up).
    """
    out: dict[str, str] = {}
    block: list[list[tuple[int, int, str]]] = []
    span = [0, 0]  # aligned head and tail cell counts over the block
    above: list[list[tuple[int, int, str]]] = [[]]  # the line just above the block

    def flush() -> None:
        k, from_head = (span[0], True) if span[0] >= span[1] else (span[1], False)
        if len(block) >= min_rows and k >= min_cells:
            rows = [[c for _, _, c in (cells[:k] if from_head else cells[-k:])] for cells in block]
            header = not _NUMBER.search(" ".join(rows[0]))
            over = [c for _, _, c in (above[0][:k] if from_head else above[0][-k:])]
            short = all(len(c.split()) <= 3 for c in over)
            if not header and len(over) == k and short and not _NUMBER.search(" ".join(over)):
                rows.insert(0, over)
                header = True
            if all(_NUMBER.search(" ".join(r)) for r in rows[1:]):  # prose never has numbers on every line
                for i, cells in enumerate(rows):
                    extra = "\n" + separator_row(len(cells)) if header and i == 0 else ""
                    # a plain line may hold the row's table cells only, or (a table beside prose) more
                    for j in range(len(cells), min_cells - 1, -1):
                        part = cells[:j] if from_head else cells[len(cells) - j :]
                        out.setdefault(" ".join(" ".join(part).split()), pipe_row(part) + extra)
        block.clear()

    last: list[tuple[int, int, str]] = []
    for line in layout.splitlines():
        if not line.strip():
            continue
        cells = [(m.start(), m.end(), m.group(0)) for m in _CELL_GAP.finditer(line)]
        if block:
            head, tail = _aligned(block[0], cells)
            head, tail = min(head, span[0]), min(tail, span[1])
            if max(head, tail) >= min_cells:
                block.append(cells)
                span[:] = [head, tail]
                last = cells
                continue
            flush()
        if len(cells) >= min_cells:
            block.append(cells)
            span[:] = [len(cells), len(cells)]
            above[0] = last
        last = cells
    flush()
    return out
