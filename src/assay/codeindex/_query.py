"""Issue text as a code search query: which words point at code, and how much each one counts.

An issue mixes prose with the things that name code: file paths, dotted module names, identifiers in
backticks or code blocks, and traceback frames. Those are weighted up; plain prose keeps weight 1, and
pasted log lines (timestamps, log levels) are weighted down and kept out of the text the embedder sees.
"""

from __future__ import annotations

import builtins
import re
from collections import defaultdict
from dataclasses import dataclass

from assay.codeindex._lexical import code_tokens
from assay.codeindex.discovery import LANGUAGES, TEXT_EXTENSIONS

__all__ = ["CODE", "LOG", "PATH", "PROSE", "WeightedQuery", "parse_query"]

#: weight of one occurrence, by what the text around it says it is
PATH = 3.0  # a file path, or the file of a traceback frame
CODE = 2.5  # backticks, a code block, a traceback's function, a dotted or snake/camel-case name
PROSE = 1.0
LOG = 0.25  # a pasted log line
#: the parts of a weighted identifier (``get``, ``help`` of ``get_help``) count this share of it
PART_SHARE = 0.5
#: a term said again counts this much more each time, up to REPEAT_CAP times its best weight
REPEAT_STEP, REPEAT_CAP = 0.25, 1.5

_FRAME = re.compile(r'File "([^"]+)", line \d+(?:, in ([A-Za-z_<>][\w<>]*))?')
_LOG_LINE = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[?\d\d:\d\d:\d\d|\[?(?:DEBUG|INFO|WARN|WARNING|TRACE)\b)"
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_BACKTICK = re.compile(r"`([^`\n]+)`")
#: a path: a name with the extension of a file the index reads (``core.py``, ``src/a/b.py``, ``docs/x.rst``) or
#: with two slashes (``src/click/``); not "and/or", nor a dotted name such as ``click.echo``
_EXTENSIONS = "|".join(sorted((e[1:] for e in {*LANGUAGES, *TEXT_EXTENSIONS}), key=lambda e: (-len(e), e)))
_PATHLIKE = re.compile(
    rf"(?<![\w/.])(?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS})\b(?!\.\w)|(?<![\w/.])[\w.-]+/[\w.-]+/[\w./-]*"
)
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
#: a built-in exception's name says what went wrong, not where: it keeps the prose weight
_BUILTIN_ERRORS = frozenset(
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
)
_CODE_WORD = re.compile(r"\b[A-Za-z_]\w*\(\)|\b\w*_\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b")


@dataclass(frozen=True)
class WeightedQuery:
    #: lexical term -> weight (the query's side of BM25)
    weights: dict[str, float]
    #: what the embedder sees: the issue without pasted log lines
    dense_text: str


class _Terms:
    def __init__(self) -> None:
        self.best: dict[str, float] = defaultdict(float)
        self.count: dict[str, int] = defaultdict(int)

    def add(self, text: str, weight: float) -> None:
        """Tokens of ``text`` at ``weight``; the parts of a split identifier at a share of it."""
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+", text):
            w = min(weight, PROSE) if word in _BUILTIN_ERRORS else weight
            for j, tok in enumerate(code_tokens(word)):
                tw = w if j == 0 or w <= PROSE else max(PROSE, w * PART_SHARE)
                self.best[tok] = max(self.best[tok], tw)
                self.count[tok] += 1

    def weights(self) -> dict[str, float]:
        return {
            t: round(self.best[t] * min(REPEAT_CAP, 1.0 + REPEAT_STEP * (self.count[t] - 1)), 4)
            for t in sorted(self.best)
        }


def _strong_spans(line: str, terms: _Terms) -> str:
    """Add the code-looking spans of a prose line at their weight; return the line with them blanked."""
    for rx, weight in ((_BACKTICK, CODE), (_PATHLIKE, PATH), (_DOTTED, CODE), (_CODE_WORD, CODE)):

        def take(m: re.Match[str], weight: float = weight) -> str:
            span = m.group(1) if m.re is _BACKTICK else m.group(0)
            if m.re is _PATHLIKE:  # a file's extension says little about which file
                span = _EXTENSION.sub("", span)
            terms.add(span, weight)
            return " "

        line = rx.sub(take, line)
    return line


def parse_query(text: str) -> WeightedQuery:
    """Weighted lexical terms and the dense text of an issue (see the module docstring)."""
    terms = _Terms()
    dense: list[str] = []
    in_block = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_block = not in_block
            continue
        frame = _FRAME.search(line)
        if frame:
            terms.add(frame.group(1), PATH)
            if frame.group(2):
                terms.add(frame.group(2), CODE)
            dense.append(line)
            continue
        if _LOG_LINE.match(line):
            terms.add(line, LOG)
            continue
        dense.append(line)
        if in_block:
            terms.add(line, CODE)
            continue
        terms.add(_strong_spans(line, terms), PROSE)
    return WeightedQuery(weights=terms.weights(), dense_text="\n".join(dense).strip() or text)
