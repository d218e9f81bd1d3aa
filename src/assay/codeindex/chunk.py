"""Split source files into chunks: Python by ``ast``, other languages by tree-sitter, text by line blocks.

Every chunk keeps its path, symbol (``Class.method`` for methods), kind and 1-based inclusive line span.
Symbols longer than ``max_lines`` are split into parts that keep the symbol name.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any

__all__ = ["Chunk", "chunk_file", "python_symbols", "tree_sitter_symbols"]

MAX_LINES = 60
BLOCK_LINES = 40


@dataclass(frozen=True)
class Chunk:
    path: str
    symbol: str
    kind: str  # function | method | class | module | block | doc
    start_line: int
    end_line: int
    text: str

    def embed_text(self) -> str:
        """What the embedder sees: where the code lives, then the code."""
        head = f"{self.path}" + (f" {self.kind} {self.symbol}" if self.symbol else "")
        return f"{head}\n{self.text}"


@dataclass(frozen=True)
class _Span:
    symbol: str
    kind: str
    start: int  # 1-based inclusive
    end: int


def _slice(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start - 1 : end])


def _emit(path: str, lines: list[str], span: _Span, max_lines: int) -> list[Chunk]:
    if span.end < span.start:
        return []
    length = span.end - span.start + 1
    if length <= max_lines:
        text = _slice(lines, span.start, span.end)
        return [Chunk(path, span.symbol, span.kind, span.start, span.end, text)] if text.strip() else []
    parts = (length + max_lines - 1) // max_lines
    out = []
    for i in range(parts):
        s = span.start + i * max_lines
        e = min(span.end, s + max_lines - 1)
        text = _slice(lines, s, e)
        if text.strip():
            out.append(Chunk(path, span.symbol, span.kind, s, e, text))
    return out


def _fill_gaps(spans: list[_Span], n_lines: int, gap_kind: str = "module") -> list[_Span]:
    """Add block spans for the lines no symbol covers (imports, constants, top-level code)."""
    covered = [False] * (n_lines + 2)
    for sp in spans:
        for ln in range(sp.start, min(sp.end, n_lines) + 1):
            covered[ln] = True
    out = list(spans)
    ln = 1
    while ln <= n_lines:
        if covered[ln]:
            ln += 1
            continue
        start = ln
        while ln <= n_lines and not covered[ln] and ln - start < BLOCK_LINES:
            ln += 1
        out.append(_Span("", gap_kind, start, ln - 1))
    return out


def python_symbols(source: str) -> list[_Span] | None:
    """Spans of functions, classes (header to first method) and methods; None when ``source`` is not Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    spans: list[_Span] = []

    def start_of(node: Any) -> int:
        decos = getattr(node, "decorator_list", [])
        return min([node.lineno, *[d.lineno for d in decos]])

    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                kind = "method" if in_class else "function"
                spans.append(_Span(prefix + node.name, kind, start_of(node), node.end_lineno or node.lineno))
            elif isinstance(node, ast.ClassDef):
                name = prefix + node.name
                end = node.end_lineno or node.lineno
                inner = [
                    n
                    for n in node.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                ]
                # the class chunk is its header, docstring and attributes; methods get their own
                first_inner = min((start_of(n) for n in inner), default=end + 1)
                spans.append(_Span(name, "class", start_of(node), first_inner - 1 if inner else end))
                visit(node.body, name + ".", True)
                # attribute lines between methods belong to the class too
                prev_end = None
                for n in node.body:
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        prev_end = n.end_lineno
                    elif prev_end is not None and n.lineno > first_inner:
                        spans.append(_Span(name, "class", n.lineno, n.end_lineno or n.lineno))

    visit(tree.body, "", False)
    doc = ast.get_docstring(tree, clean=False)
    if doc is not None and tree.body and isinstance(tree.body[0], ast.Expr):
        first = tree.body[0]
        spans.append(_Span("", "doc", first.lineno, first.end_lineno or first.lineno))
    return spans


# tree-sitter node types that define a symbol, across the grammars we map
_TS_DEF_TYPES = frozenset(
    {
        "function_declaration",
        "function_definition",
        "function_item",
        "method_declaration",
        "method_definition",
        "method",
        "singleton_method",
        "constructor_declaration",
        "class_declaration",
        "class_definition",
        "class",
        "class_specifier",
        "struct_specifier",
        "struct_item",
        "enum_item",
        "trait_item",
        "impl_item",
        "interface_declaration",
        "enum_declaration",
        "type_declaration",
        "module",
        "object_declaration",
        "function_signature_item",
    }
)
_TS_CONTAINERS = frozenset(
    {
        "class",
        "class_declaration",
        "class_definition",
        "class_specifier",
        "impl_item",
        "trait_item",
        "interface_declaration",
        "module",
        "object_declaration",
    }
)
#: definitions that are types, not callables (kind "class" even when they hold no methods)
_TS_TYPES = _TS_CONTAINERS | frozenset(
    {"struct_specifier", "struct_item", "enum_item", "enum_declaration", "type_declaration"}
)
_TS_NAME_TYPES = frozenset({"identifier", "type_identifier", "constant", "name", "property_identifier"})


@functools.lru_cache(maxsize=32)
def _ts_parser(language: str) -> Any:
    try:
        from tree_sitter_language_pack import get_parser
    except ImportError:
        return None
    try:
        return get_parser(language)  # type: ignore[arg-type]
    except Exception:  # an unknown grammar, or a 1.x pack that wants to download parsers
        return None


def _ts_name(node: Any, src: bytes) -> str:
    name = node.child_by_field_name("name")
    if name is None:
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.child_by_field_name("declarator") is not None:
            decl = decl.child_by_field_name("declarator")
        name = decl
    if name is None:
        name = node.child_by_field_name("type")  # rust impl blocks
    if name is None:  # e.g. go's type_declaration -> type_spec -> name
        stack = list(node.named_children)
        while stack and name is None:
            n = stack.pop(0)
            if n.type in _TS_NAME_TYPES:
                name = n
            elif n.child_by_field_name("name") is not None:
                name = n.child_by_field_name("name")
            else:
                stack.extend(n.named_children)
    if name is None:
        return ""
    return src[name.start_byte : name.end_byte].decode("utf-8", "replace").split("(")[0].strip()


def tree_sitter_symbols(source: str, language: str) -> list[_Span] | None:
    """Spans of definitions found by the tree-sitter grammar for ``language``; None if unavailable."""
    parser = _ts_parser(language)
    if parser is None:
        return None
    src = source.encode("utf-8", "surrogatepass")
    try:
        tree = parser.parse(src)
    except Exception:
        return None
    spans: list[_Span] = []

    def visit(node: Any, prefix: str, in_container: bool) -> None:
        for child in node.named_children:
            if child.type in _TS_DEF_TYPES:
                name = _ts_name(child, src) or child.type
                start, end = child.start_point[0] + 1, child.end_point[0] + 1
                if child.type in _TS_CONTAINERS:
                    inner_start = [
                        g.start_point[0] + 1 for g in _descendant_defs(child) if g.start_point[0] + 1 > start
                    ]
                    head_end = min(inner_start) - 1 if inner_start else end
                    spans.append(_Span(prefix + name, "class", start, head_end))
                    visit(child, prefix + name + ".", True)
                elif child.type in _TS_TYPES:
                    spans.append(_Span(prefix + name, "class", start, end))
                else:
                    kind = "method" if in_container else "function"
                    spans.append(_Span(prefix + name, kind, start, end))
            else:
                visit(child, prefix, in_container)

    visit(tree.root_node, "", False)
    return spans


def _descendant_defs(node: Any) -> list[Any]:
    out = []
    stack = list(node.named_children)
    while stack:
        n = stack.pop()
        if n.type in _TS_DEF_TYPES:
            out.append(n)
        else:
            stack.extend(n.named_children)
    return out


def _line_blocks(n_lines: int) -> list[_Span]:
    return [
        _Span("", "block", s, min(n_lines, s + BLOCK_LINES - 1)) for s in range(1, n_lines + 1, BLOCK_LINES)
    ]


def chunk_file(path: str, text: str, language: str | None, *, max_lines: int = MAX_LINES) -> list[Chunk]:
    """Chunks of one file, ordered by start line."""
    lines = text.splitlines()
    n = len(lines)
    if n == 0:
        return []
    spans: list[_Span] | None = None
    if language == "python":
        spans = python_symbols(text)
        if spans is None:
            spans = tree_sitter_symbols(text, "python")
    elif language is not None:
        spans = tree_sitter_symbols(text, language)
    spans = _line_blocks(n) if spans is None else _fill_gaps(spans, n)
    chunks: list[Chunk] = []
    for span in spans:
        chunks.extend(_emit(path, lines, span, max_lines))
    chunks.sort(key=lambda c: (c.start_line, c.end_line, c.symbol))
    return chunks
