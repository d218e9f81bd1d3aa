"""Turn a file into text: PDF (per-page ``[Page N]`` markers), DOCX, PPTX (a page per slide), Markdown,
HTML and plain text.

Every extractor returns an :class:`ExtractedDocument` whose ``text`` is what chunk spans point into, and
whose ``pages`` map character ranges of that text back to 1-based page numbers (a non-PDF is one page).
A page that is mostly image (images cover more than half of it and its text layer holds fewer than
``_MIN_WORDS_PER_IMAGE_PAGE`` words per page-area of image: a scan with a watermark or a caption) is read
by OCR when ``ocr`` is on (:mod:`assay.rag.ocr`), else the document is flagged ``degraded`` naming the
page, never silently indexed as its watermark. A PDF whose every page is such a page (or empty) is
refused without OCR. A damaged or truncated PDF either fails with :class:`~assay.errors.DocumentError` or
is returned flagged ``degraded``.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Literal

from assay.errors import DocumentError, MissingDependencyError
from assay.rag.tables import layout_tables, pipe_row, separator_row

__all__ = [
    "PAGED_KINDS",
    "SUFFIXES",
    "DocKind",
    "ExtractedDocument",
    "Page",
    "extract",
    "extract_bytes",
    "kind_of",
]

DocKind = Literal["pdf", "docx", "pptx", "markdown", "html", "text"]
#: kinds whose text is cut into ``[Page N]`` pages
PAGED_KINDS = frozenset({"pdf", "pptx"})

SUFFIXES: dict[str, DocKind] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
    ".text": "text",
    ".rst": "text",
}

#: a page whose text layer has fewer characters than this counts as having no text
_MIN_PAGE_CHARS = 16
#: images covering more than this share of a page make it an image page, when its text is thin ...
_IMAGE_COVER = 0.5
#: ... fewer words than this per page-area of image (a page of text holds hundreds)
_MIN_WORDS_PER_IMAGE_PAGE = 25
#: an OCR reading with fewer words than this read nothing usable
_MIN_OCR_WORDS = 3
#: a page with fewer numbers than this is not searched for tables (its layout is not extracted)
_MIN_TABLE_NUMBERS = 6
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
PAGE_MARKER = re.compile(r"^\[Page (\d+)\]$", re.MULTILINE)


@dataclass(frozen=True)
class Page:
    """Characters ``start:end`` of the extracted text are page ``number`` (1-based)."""

    number: int
    start: int
    end: int


@dataclass
class ExtractedDocument:
    text: str
    kind: DocKind
    pages: list[Page]
    sha256: str
    title: str = ""
    degraded: bool = False
    warnings: list[str] = field(default_factory=list)
    #: pages that are mostly image and were read by OCR
    ocr_pages: list[int] = field(default_factory=list)
    #: pages that are mostly image and were *not* read (OCR off, or it read nothing): content missing
    image_pages: list[int] = field(default_factory=list)

    def page_at(self, offset: int) -> int:
        """The page number the character at ``offset`` lies on."""
        for page in self.pages:
            if page.start <= offset < page.end:
                return page.number
        return self.pages[-1].number if self.pages else 1

    def page_text(self, number: int) -> str:
        for page in self.pages:
            if page.number == number:
                return self.text[page.start : page.end]
        raise KeyError(number)


def kind_of(path: str | Path) -> DocKind:
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise DocumentError(
            f"unsupported document type {suffix or '(no suffix)'!r}; "
            f"supported: {', '.join(sorted(SUFFIXES))}",
            path=str(path),
        )
    return SUFFIXES[suffix]


def extract(path: str | Path, *, ocr: bool = False) -> ExtractedDocument:
    """Read and extract one file; raises DocumentError naming the file when it cannot be used.

    With ``ocr`` the image pages of a PDF are read by OCR (see :mod:`assay.rag.ocr`)."""
    p = Path(path)
    kind = kind_of(p)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}", path=str(p)) from exc
    return extract_bytes(data, kind, name=str(p), ocr=ocr)


def extract_bytes(
    data: bytes, kind: DocKind, *, name: str = "<bytes>", ocr: bool = False
) -> ExtractedDocument:
    sha = hashlib.sha256(data).hexdigest()
    if kind == "pdf":
        return _extract_pdf(data, sha, name, ocr)
    if kind == "pptx":
        from assay.rag._office import read_pptx

        slides, title = read_pptx(data, name)
        return _paged([_normalise_newlines(s).strip() for s in slides], "pptx", sha, name, title)
    if kind == "docx":
        from assay.rag._office import read_docx

        text, title = read_docx(data, name)
    else:
        text = _decode(data, name)
    if kind == "html":
        title, text = _html_to_text(text)
    elif kind != "docx":
        title = _first_heading(text) if kind == "markdown" else ""
    text = _normalise_newlines(text)
    if not text.strip():
        raise DocumentError("document is empty (no text to index)", path=name)
    title = title or Path(name).stem
    return ExtractedDocument(text=text, kind=kind, pages=[Page(1, 0, len(text))], sha256=sha, title=title)


def _decode(data: bytes, name: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if b"\x00" in data[:4096]:
            raise DocumentError("looks like a binary file, not text", path=name) from exc
        return data.decode("latin-1")


def _normalise_newlines(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def _first_heading(text: str) -> str:
    m = re.search(r"^#{1,6}\s+(.+?)\s*#*$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


# --------------------------------------------------------------------------------------------- HTML


class _HtmlText(HTMLParser):
    """Visible text of an HTML page; headings become Markdown headings and tables pipe rows (a first row
    of ``th`` cells is marked the header), so the chunker sees structure."""

    _SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
    _BLOCK = frozenset(
        {"p", "div", "section", "article", "li", "br", "ul", "ol", "pre", "blockquote",
         "header", "footer", "main", "nav", "aside", "dd", "dt", "figure", "figcaption", "hr"}
    )  # fmt: skip

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._all_th = True
        self._rows = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skip += 1
        if tag == "title":
            self._in_title = True
        elif tag == "table":
            self.parts.append("\n\n")
            self._rows = 0
        elif tag == "tr":
            self._row, self._all_th = [], True
        elif tag in {"td", "th"}:
            if self._row is None:  # a cell outside any row: give it one
                self._row, self._all_th = [], True
            self._cell = []
            self._all_th = self._all_th and tag == "th"
        elif self._cell is not None:  # block structure inside a cell stays inside it
            self._cell.append(" ")
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in self._BLOCK:
            self.parts.append("\n\n" if tag in {"p", "div", "section", "article", "pre"} else "\n")
            if tag == "li":
                self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        if tag == "title":
            self._in_title = False
        elif tag in {"td", "th"}:
            if self._cell is not None and self._row is not None:
                self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" or (tag == "table" and self._row):
            if self._row:
                self.parts.append("\n" + pipe_row(self._row))
                if self._rows == 0 and self._all_th:
                    self.parts.append("\n" + separator_row(len(self._row)))
                self._rows += 1
            self._row, self._cell = None, None
            if tag == "table":
                self.parts.append("\n\n")
        elif tag == "table":
            self.parts.append("\n\n")
        elif self._cell is not None:
            self._cell.append(" ")
        elif re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCK:
            self.parts.append("\n\n" if tag.startswith("h") or tag == "p" else "\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip:
            return
        if self._cell is not None:
            self._cell.append(data)
            return
        self.parts.append(re.sub(r"\s+", " ", data))


def _html_to_text(html: str) -> tuple[str, str]:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n")]
    return parser.title.strip(), "\n".join(lines)


# ---------------------------------------------------------------------------------------------- PDF


def _extract_pdf(data: bytes, sha: str, name: str, ocr: bool) -> ExtractedDocument:
    try:
        import pypdf
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("pypdf", "rag") from exc

    warnings: list[str] = []
    degraded = False
    if not data.lstrip()[:5].startswith(b"%PDF-"):
        raise DocumentError("not a PDF (no %PDF- header)", path=name)
    if b"%%EOF" not in data[-2048:]:
        degraded = True
        warnings.append("no %%EOF marker at the end: the file looks truncated")
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its warnings about damage become our own `warnings` and errors
    try:
        return _read_pdf(pypdf, PdfReadError, data, sha, name, degraded, warnings, ocr)
    finally:
        quiet.setLevel(level)


def _read_pdf(
    pypdf: Any,
    PdfReadError: type[Exception],
    data: bytes,
    sha: str,
    name: str,
    degraded: bool,
    warnings: list[str],
    ocr: bool,
) -> ExtractedDocument:
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise DocumentError("PDF is encrypted; decrypt it before indexing", path=name)
        pages = list(reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, AttributeError) as exc:
        hint = " (the file looks truncated)" if degraded else ""
        raise DocumentError(f"cannot parse PDF{hint}: {exc}", path=name) from exc
    if not pages:
        raise DocumentError("PDF has no readable pages" + (" (truncated?)" if degraded else ""), path=name)

    texts: list[str] = []
    image_pages: list[int] = []
    ocr_pages: list[int] = []
    empty: list[int] = []
    for number, page in enumerate(pages, start=1):
        placed: list[float] = []
        try:
            raw = page.extract_text(visitor_operand_before=_image_visitor(page, placed)) or ""
        except Exception as exc:  # pypdf raises many types on damaged content streams
            degraded = True
            warnings.append(f"page {number}: text could not be extracted ({type(exc).__name__}: {exc})")
            raw = ""
        raw = _normalise_newlines(raw).strip()
        if len(_NUMBER.findall(raw)) >= _MIN_TABLE_NUMBERS:
            raw = _with_layout_tables(page, raw)
        cover = _cover(page, placed)
        if _is_image_page(raw, cover, page):
            image_pages.append(number)
        elif len(raw) < _MIN_PAGE_CHARS:
            empty.append(number)
        texts.append(raw)
    if ocr and image_pages:
        ocr_pages = _ocr_pages(data, image_pages, name, texts, warnings)
        image_pages = [n for n in image_pages if n not in ocr_pages]

    if not ocr and len(image_pages) + len(empty) == len(pages):
        if image_pages:
            raise DocumentError(
                f"PDF has no text layer worth the name ({len(image_pages)} of {len(pages)} pages are images "
                "with at most a watermark): it looks scanned. Index it with OCR on (--ocr, "
                "DocumentIndex(ocr=True)) or run OCR first (for example `ocrmypdf in.pdf out.pdf`)",
                path=name,
            )
        raise DocumentError("PDF contains no extractable text", path=name)
    if len(empty) + len(image_pages) == len(pages) and not ocr_pages:
        raise DocumentError(
            "PDF contains no extractable text, and OCR read none on its image pages", path=name
        )
    if image_pages:
        degraded = True
        how = "OCR read no text there" if ocr else "OCR is off: index with --ocr to read it"
        which = f"page {image_pages[0]} is" if len(image_pages) == 1 else f"pages {_ranges(image_pages)} are"
        warnings.append(f"{which} mostly image: its content is not indexed ({how})")

    title = ""
    try:
        meta = reader.metadata
        title = (meta.title or "") if meta else ""
    except Exception:  # metadata of a damaged file is optional
        title = ""
    doc = _paged(texts, "pdf", sha, name, str(title))
    doc.degraded, doc.warnings, doc.ocr_pages, doc.image_pages = degraded, warnings, ocr_pages, image_pages
    return doc


def _paged(texts: list[str], kind: DocKind, sha: str, name: str, title: str) -> ExtractedDocument:
    """One ``[Page N]`` block per page (or slide) text, with the spans of the pages."""
    if not any(t.strip() for t in texts):
        raise DocumentError("document is empty (no text to index)", path=name)
    parts: list[str] = []
    spans: list[Page] = []
    offset = 0
    for number, body in enumerate(texts, start=1):
        block = f"[Page {number}]\n{body}\n\n" if body else f"[Page {number}]\n\n"
        spans.append(Page(number, offset, offset + len(block)))
        parts.append(block)
        offset += len(block)
    return ExtractedDocument("".join(parts), kind, spans, sha, title.strip() or Path(name).stem)


def _with_layout_tables(page: Any, raw: str) -> str:
    """The page's plain text with the lines that are rows of a table (found in its layout text, where
    columns survive) written as pipe rows, so cells keep their row and the chunker keeps rows together."""
    try:
        rows = layout_tables(page.extract_text(extraction_mode="layout") or "")
    except Exception:  # layout mode fails on some damaged pages: the plain text stands
        return raw
    if not rows:
        return raw
    return "\n".join(rows.get(" ".join(line.split()), line) for line in raw.split("\n"))


def _image_visitor(page: Any, placed: list[float]) -> Any:
    """A content-stream visitor that records the area of every image the page draws (``Do`` of an image
    XObject, on the page or inside a form XObject it draws: the current matrix maps the unit square onto
    the page; pypdf visits a form's operators with the matrix it is drawn under)."""
    images: set[str] = set()
    try:
        _image_names(page.get("/Resources") or {}, images, depth=0)
    except Exception:  # a damaged resource dictionary: no placements, the fallback rule applies
        images = set()

    def visit(op: bytes, args: list[Any], cm: list[float], tm: list[float]) -> None:
        if op == b"Do" and args and str(args[0]) in images:
            a, b, c, d = (float(x) for x in cm[:4])
            placed.append(abs(a * d - b * c))

    return visit


def _image_names(resources: Any, out: set[str], depth: int) -> None:
    xobjects = resources.get("/XObject") or {}
    for key in xobjects:
        obj = xobjects[key]
        if obj.get("/Subtype") == "/Image":
            out.add(str(key))
        elif obj.get("/Subtype") == "/Form" and depth < 4:
            _image_names(obj.get("/Resources") or {}, out, depth + 1)


def _cover(page: Any, placed: list[float]) -> float:
    """The share of the page the placed images cover (overlaps counted once each, capped at 1)."""
    try:
        box = page.mediabox
        area = abs(float(box.width) * float(box.height))
    except Exception:
        return 0.0
    return min(1.0, sum(placed) / area) if area > 0 else 0.0


def _is_image_page(raw: str, cover: float, page: Any) -> bool:
    """Mostly image: images over half the page and a thin text layer, or no text at all beside an image."""
    if cover > _IMAGE_COVER:
        return len(re.findall(r"\w+", raw)) < _MIN_WORDS_PER_IMAGE_PAGE * cover
    return len(raw) < _MIN_PAGE_CHARS and _has_images(page)


def _ocr_pages(
    data: bytes, numbers: list[int], name: str, texts: list[str], warnings: list[str]
) -> list[int]:
    """OCR the image pages ``numbers``; the ones it read (words, not specks) replace their text layer."""
    from assay.rag.ocr import ocr_pdf_pages

    read: list[int] = []
    for number, got in ocr_pdf_pages(data, numbers, name=name).items():
        text = _normalise_newlines(got).strip()
        if len(re.findall(r"\w+", text)) >= _MIN_OCR_WORDS:
            texts[number - 1] = text
            read.append(number)
            warnings.append(f"page {number} is mostly image: read by OCR")
    return read


def _has_images(page: object) -> bool:
    try:
        return len(page.images) > 0  # type: ignore[attr-defined]
    except Exception:
        try:
            resources = page.get("/Resources") or {}  # type: ignore[attr-defined]
            xobjects = resources.get("/XObject") or {}
            return any(xobjects[k].get("/Subtype") == "/Image" for k in xobjects)
        except Exception:
            return False


def _ranges(numbers: list[int]) -> str:
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(out)
