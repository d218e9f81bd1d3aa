"""Text normalisation between extraction and chunking, with a map back to the extracted characters.

Three repairs, each language-agnostic:

- Unicode NFKC, so ligatures (``ﬁ`` ``ﬂ``), full-width forms and no-break spaces become the letters a
  query types; soft hyphens and zero-width spaces are dropped.
- De-hyphenation of a word split at a line end. The document's own vocabulary decides, counted away
  from the breaks themselves: the parts are joined when the joined word occurs elsewhere more often than
  the hyphenated one; the hyphen is kept when the hyphenated form occurs elsewhere, or when both parts
  are words found elsewhere (``well-`` / ``known``); otherwise (``adip-`` / ``iscing``: fragments, not
  words) they are joined. A hyphen followed by a space on the same line (``adip- iscing``) is joined only
  on the first rule, or when neither part is a word elsewhere, so ``pre- and post-`` keeps its hyphen.
- Whitespace: runs of spaces and tabs become one space, lines lose their edge spaces, and more than one
  blank line becomes one.

:func:`normalize` returns the new text with, for every character of it, the span of extracted text it
came from, so a chunk of normalised text maps back to exact offsets of the extracted text.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

__all__ = ["Normalized", "normalize"]

_DROP = frozenset("\u00ad\u200b\u2060\ufeff")  # soft hyphen, zero-width space, word joiner, BOM
_WORD = re.compile(r"[^\W\d_]+")
_COMPOUND = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
# a word part, a hyphen, then a line break (or a space) and the next part
_ODD_SPACE = re.compile(r"[\t\r\f\v]")
_BREAK = re.compile(r"(\w*[^\W\d_])-([ \t]*\n[ \t]*|[ \t]+)([^\W\d_]\w*)")


@dataclass(frozen=True)
class Normalized:
    """``text[i]`` came from ``source[starts[i]:ends[i]]`` (a dropped hyphen maps to nothing)."""

    text: str
    starts: list[int]
    ends: list[int]
    source_len: int

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the extracted text that normalised characters ``start:end`` came from."""
        if end <= start:
            at = self.starts[start] if start < len(self.starts) else self.source_len
            return at, at
        return self.starts[start], self.ends[end - 1]

    def index_of(self, source_offset: int) -> int:
        """The first normalised character that came from ``source_offset`` or later."""
        return bisect.bisect_left(self.ends, source_offset + 1)


def _nfkc(text: str) -> tuple[str, list[int], list[int]]:
    """NFKC per base character with its combining marks, keeping where each output character came from."""
    if text.isascii():  # NFKC leaves ASCII alone and none of _DROP is ASCII: each character maps to itself
        return text, list(range(len(text))), list(range(1, len(text) + 1))
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        piece = "".join(c for c in text[i:j] if c not in _DROP)
        if piece:
            piece = unicodedata.normalize("NFKC", piece)
            out.append(piece)
            starts.extend([i] * len(piece))
            ends.extend([j] * len(piece))
        i = j
    return "".join(out), starts, ends


def _vocabulary(text: str, breaks: list[re.Match[str]]) -> tuple[Counter[str], Counter[str]]:
    """Words and hyphenated pairs of ``text`` (lower-cased), the words around the breaks left out."""
    masked = list(text)
    for m in breaks:
        masked[m.start() : m.end()] = " " * (m.end() - m.start())
    flat = "".join(masked)
    words = Counter(w.lower() for w in _WORD.findall(flat))
    pairs: Counter[str] = Counter()
    for m in _COMPOUND.finditer(flat):
        parts = m.group(0).lower().split("-")
        pairs.update(f"{a}-{b}" for a, b in pairwise(parts))
    return words, pairs


def _decide(m: re.Match[str], words: Counter[str], pairs: Counter[str]) -> str | None:
    """``join``, ``hyphen`` (drop the break, keep the hyphen) or None (leave the text as it is)."""
    left, gap, right = m.group(1), m.group(2), m.group(3)
    if right[0].isupper():  # a new sentence or a name, not the rest of a word
        return None
    lo_left, lo_right = left.lower(), right.lower()
    joined = words[lo_left + lo_right]
    hyphened = pairs[f"{lo_left}-{lo_right}"]
    if joined > hyphened:
        return "join"
    both_words = words[lo_left] > 0 and words[lo_right] > 0
    if "\n" in gap:
        return "hyphen" if hyphened or both_words else "join"
    # same line: only an unmistakable fragment pair is joined
    if not hyphened and words[lo_left] == 0 and words[lo_right] == 0:
        return "join"
    return None


def normalize(text: str) -> Normalized:
    """Normalise extracted text (NFKC, de-hyphenation, whitespace), keeping the map back to ``text``."""
    flat, starts, ends = _nfkc(text)
    breaks = list(_BREAK.finditer(flat))
    if not breaks:
        return _whitespace(flat, starts, ends, len(text))
    words, pairs = _vocabulary(flat, breaks)
    keep = [True] * len(flat)
    for m in breaks:
        decision = _decide(m, words, pairs)
        if decision is None:
            continue
        gap_from, gap_to = m.start(2), m.end(2)
        if decision == "join":
            gap_from -= 1  # the hyphen goes too
        for k in range(gap_from, gap_to):
            keep[k] = False
    chars = [c for c, k in zip(flat, keep, strict=True) if k]
    s = [x for x, k in zip(starts, keep, strict=True) if k]
    e = [x for x, k in zip(ends, keep, strict=True) if k]
    return _whitespace("".join(chars), s, e, len(text))


def _whitespace(text: str, starts: list[int], ends: list[int], source_len: int) -> Normalized:
    out: list[str] = []
    s: list[int] = []
    e: list[int] = []
    blank_run = 0
    for line_start, line in _lines(text):
        body = line.strip(" \t\r\f\v")
        if not body:
            blank_run += 1
            if blank_run > 1 or not out:
                continue
        else:
            blank_run = 0
        offset = line_start + (len(line) - len(line.lstrip(" \t\r\f\v")))
        plain = "  " not in body and not _ODD_SPACE.search(body)
        if plain and body:  # nothing to fold: the line as it is
            out.append(body)
            s.extend(starts[offset : offset + len(body)])
            e.extend(ends[offset : offset + len(body)])
        prev_space = False
        for k, c in enumerate("" if plain else body):
            space = c in " \t\r\f\v"
            if space and prev_space:
                continue
            out.append(" " if space else c)
            s.append(starts[offset + k])
            e.append(ends[offset + k])
            prev_space = space
        newline_at = line_start + len(line)
        if newline_at < len(text):
            out.append("\n")
            s.append(starts[newline_at])
            e.append(ends[newline_at])
    while len(out) > 1 and out[-1] == "\n" and out[-2] == "\n":
        out.pop(), s.pop(), e.pop()
    return Normalized("".join(out), s, e, source_len)


def _lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out
