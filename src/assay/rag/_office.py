"""DOCX and PPTX readers (python-docx, python-pptx): the text in reading order, with its structure.

DOCX: paragraphs in body order, ``Heading N`` / ``Title`` styles as Markdown headings, list paragraphs
as ``- `` items, tables as pipe rows (:mod:`assay.rag.tables`). PPTX: one page per slide (``[Page N]``,
so a hit names its slide), the title as a heading, every text frame, table and grouped shape from top
to bottom, then the speaker notes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import Any

from assay.errors import DocumentError, MissingDependencyError
from assay.rag.tables import pipe_row, separator_row

__all__ = ["read_docx", "read_pptx"]

_HEADING_STYLE = re.compile(r"^heading\s*([1-6])$", re.IGNORECASE)
_DIGIT = re.compile(r"\d")


def _table_lines(rows: list[list[str]], header: bool | None = None) -> list[str]:
    """Pipe rows; the first row is the header when ``header`` says so, or (unsaid) when it holds no
    digits and the next row does."""
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        return []
    if header is None:
        header = (
            len(rows) > 1 and not _DIGIT.search(" ".join(rows[0])) and bool(_DIGIT.search(" ".join(rows[1])))
        )
    lines = [pipe_row(rows[0])]
    if header:
        lines.append(separator_row(len(rows[0])))
    return lines + [pipe_row(r) for r in rows[1:]]


# --------------------------------------------------------------------------------------------- DOCX


def _docx_rows(table: Any) -> list[list[str]]:
    out = []
    for row in table.rows:
        cells, last = [], None
        for cell in row.cells:
            if cell._tc is last:  # a merged cell is returned once per grid column it spans
                continue
            last = cell._tc
            cells.append(cell.text)
        out.append(cells)
    return out


def _docx_header(table: Any) -> bool | None:
    try:
        first = table.rows[0]._tr
    except IndexError:
        return None
    marked = first.find(".//{http://schemas.openxmlformats.org/wordprocessingml/2006/main}tblHeader")
    return True if marked is not None else None


def read_docx(data: bytes, name: str) -> tuple[str, str]:
    """``(text, title)`` of a DOCX file."""
    try:
        import docx
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("python-docx", "rag") from exc
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # a zip that is not a Word document raises many types
        raise DocumentError(f"cannot read DOCX: {type(exc).__name__}: {exc}", path=name) from exc
    blocks: list[str] = []
    title = (document.core_properties.title or "").strip()
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            blocks.append("\n".join(_table_lines(_docx_rows(item), _docx_header(item))))
            continue
        text = item.text.strip()
        if not text:
            continue
        style = (item.style.name if item.style is not None else "") or ""
        level = _HEADING_STYLE.match(style)
        if style.lower() == "title" or level:
            title = title or text
            blocks.append("#" * (int(level.group(1)) if level else 1) + " " + text)
        elif "list" in style.lower():
            blocks.append("- " + text)
        else:
            blocks.append(text)
    return "\n\n".join(b for b in blocks if b), title


# --------------------------------------------------------------------------------------------- PPTX


def _shape_lines(shapes: Iterable[Any]) -> list[str]:
    lines: list[str] = []
    ordered = sorted(
        shapes, key=lambda s: (s.top if s.top is not None else 0, s.left if s.left is not None else 0)
    )
    for shape in ordered:
        if hasattr(shape, "shapes"):  # a group of shapes
            lines += _shape_lines(shape.shapes)
        elif getattr(shape, "has_table", False) and shape.has_table:
            table = shape.table
            rows = [[cell.text for cell in row.cells] for row in table.rows]
            lines += ["", *_table_lines(rows, bool(table.first_row)), ""]
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            if shape.is_placeholder and _is_title(shape):
                continue  # the slide's title is its heading
            for para in shape.text_frame.paragraphs:
                text = para.text.strip()
                if text:
                    lines.append(("  " * para.level + "- " + text) if para.level else text)
            lines.append("")  # a shape is a paragraph of its own
    return lines


def _is_title(shape: Any) -> bool:
    try:
        return "TITLE" in str(shape.placeholder_format.type)
    except (AttributeError, ValueError):
        return False


def read_pptx(data: bytes, name: str) -> tuple[list[str], str]:
    """``(slide texts, title)`` of a PPTX file: one text per slide, in order."""
    try:
        import pptx
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("python-pptx", "rag") from exc
    try:
        deck = pptx.Presentation(io.BytesIO(data))
    except Exception as exc:  # a zip that is not a presentation raises many types
        raise DocumentError(f"cannot read PPTX: {type(exc).__name__}: {exc}", path=name) from exc
    slides: list[str] = []
    title = (deck.core_properties.title or "").strip()
    for slide in deck.slides:
        head = slide.shapes.title.text.strip() if slide.shapes.title is not None else ""
        title = title or head
        lines = [f"# {head}"] if head else []
        lines += _shape_lines(slide.shapes)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                lines += ["", "Notes: " + notes.text.strip()]
        slides.append("\n".join(lines))
    return slides, title
