"""Numbers read from an answer, each with what is written beside it, so a ground-truth number matches only as
the quantity it claims to be.

A number glued to letters before it is a label, not a quantity (``Q4``, ``v2``, ``x86``, ``SHA256``). A
:class:`~assay.evals.agent._scenario.NumberFact` with a ``unit`` matches a number only with that unit beside it:
``%`` only a number written as a percentage (``4.0%``, ``4 percent``); a currency its sign or code before or
after (``$40``, ``USD 40``, ``40 dollars``); any other unit the unit's first word (or a known spelling of it:
``ms``/``milliseconds``, ``h``/``hours``, singular or plural) among the three words after the number
(``60 calendar days``). A fact without a unit matches any number that is not a label.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from assay.evals.agent._scenario import NumberFact

__all__ = ["Quantity", "claims", "find_quantities", "number_matches", "unit_words"]

_FOLD = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"', "\u2212": "-"}
)
_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
#: suffixes glued to a number that always scale it; m/M and b/B do only after a currency sign ($4M)
_SCALE_SUFFIX = {"k": 1e3, "mn": 1e6, "bn": 1e9}
_CURRENCY_SUFFIX = {"m": 1e6, "b": 1e9}
_NUMBER = re.compile(
    r"(?P<sign>(?<![\w.,])[-])?"
    r"(?P<cur>[$€£¥])?\s?"
    r"(?P<num>(?<![\d.,])(?<![^\W\d_])(?<!\d:)(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|(?<![\d.,])(?<![^\W\d_])\.\d+)"
    r"(?:(?P<suffix>k|mn|bn|m|b)(?![a-z])|\s?(?P<word>thousand|million|billion|trillion)\b)?"
    r"(?P<pct>\s?%)?",
    re.IGNORECASE,
)
#: the words after a number: letters, a sign, or a number (which ends the number's label)
_WORD = re.compile(r"[^\W\d_]+|[%$€£¥]|\d")
_CLOCK = re.compile(r"^:\d\d\b")
#: how far after a number its unit may be written (``60 calendar days``, ``7 business days``)
_AFTER = 3
_PERCENT_WORDS = ("percent", "per cent", "pct", "percentage points")
#: a unit's first word (case-folded) -> every spelling that writes it
_SPELLINGS: dict[str, frozenset[str]] = {
    k: frozenset(v)
    for k, v in {
        "usd": {"usd", "$", "dollar", "dollars", "us$"},
        "eur": {"eur", "€", "euro", "euros"},
        "gbp": {"gbp", "£", "pound", "pounds"},
        "jpy": {"jpy", "¥", "yen"},
        "ms": {"ms", "msec", "millisecond", "milliseconds"},
        "s": {"s", "sec", "secs", "second", "seconds"},
        "minutes": {"min", "mins", "minute", "minutes"},
        "hours": {"h", "hr", "hrs", "hour", "hours"},
        "business": {"business", "working"},
        "gb": {"gb", "gigabyte", "gigabytes"},
        "mb": {"mb", "megabyte", "megabytes"},
    }.items()
}
_ALIASES = {"seconds": "s", "second": "s", "minute": "minutes", "hour": "hours", "h": "hours", "$": "usd"}
_CURRENCIES = ("usd", "eur", "gbp", "jpy")
_CURRENCY_CODES = frozenset(w for c in _CURRENCIES for w in _SPELLINGS[c] if w.isalpha())


@dataclass(frozen=True)
class Quantity:
    """One number of an answer and what is written beside it (case-folded)."""

    value: float
    #: written as a percentage (``12.5%``, ``12.5 percent``)
    percent: bool
    #: the currency sign glued before it, or the words of a label set to it (``timeout_ms = 4500``)
    before: tuple[str, ...]
    #: up to three words after it, up to the next number
    after: tuple[str, ...]
    #: written as a time of day (``12:00``): it claims an hour
    clock: bool = False

    def show(self) -> str:
        return f"{self.value:g}{'%' if self.percent else ''}"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_FOLD)


def find_quantities(text: str) -> list[Quantity]:
    """Every number written in ``text`` (digits only: number words are not read), with its neighbours."""
    folded = _fold(text)
    out = []
    for m in _NUMBER.finditer(folded):
        value = float(m["num"].replace(",", ""))
        suffix = (m["suffix"] or "").lower()
        if suffix in _SCALE_SUFFIX:
            value *= _SCALE_SUFFIX[suffix]
        elif suffix in _CURRENCY_SUFFIX and m["cur"]:
            value *= _CURRENCY_SUFFIX[suffix]
        elif m["word"]:
            value *= _SCALE_WORDS[m["word"].lower()]
        rest = folded[m.end() :]
        clock = bool(_CLOCK.match(rest))
        rest = _CLOCK.sub("", rest)  # 12:00 UTC: the minutes are part of the number
        after: list[str] = []
        for w in _WORD.findall(rest[:80].casefold()):
            if w.isdigit() or len(after) == _AFTER:
                break
            after.append(w)
        head = " ".join(rest[:24].casefold().split())
        percent = bool(m["pct"]) or head.startswith(_PERCENT_WORDS)
        out.append(Quantity(-value if m["sign"] else value, percent, _before(folded, m), tuple(after), clock))
    return out


#: a label set to a number (``timeout_ms = 4500``, ``Price: 40``) or a currency code before it (``USD 40``)
_LABEL_BEFORE = re.compile(r"([^\W\d]+)\s*[=:]\s*$|([^\W\d_]+)\s+$")


def _before(folded: str, m: re.Match[str]) -> tuple[str, ...]:
    if m["cur"]:
        return (m["cur"],)
    label = _LABEL_BEFORE.search(folded[max(0, m.start() - 40) : m.start()])
    if label is None:
        return ()
    if label[1] is not None:
        return tuple(w for w in re.split(r"[_\W]+", label[1].casefold()) if w)
    return (label[2].casefold(),) if label[2].casefold() in _CURRENCY_CODES else ()


def number_matches(found: float, fact: NumberFact) -> bool:
    """Whether ``found`` is ``fact.value`` within its tolerance (absolute, or a fraction of the value)."""
    allowed = fact.tolerance * abs(fact.value) if fact.relative else fact.tolerance
    slack = 1e-9 * max(1.0, abs(fact.value))  # float noise: 0.1 + 0.2 is 0.3
    return math.isclose(found, fact.value) or abs(found - fact.value) <= allowed + slack


def unit_words(unit: str) -> frozenset[str]:
    """The spellings of ``unit``'s first word (``USD per year`` -> usd, $, dollar(s)); empty for no unit."""
    words = unit.casefold().split()
    if not words:
        return frozenset()
    first = _ALIASES.get(words[0], words[0])
    if first == "%":
        return frozenset({"%"})
    if first in _SPELLINGS:
        return _SPELLINGS[first]
    stem = first[:-1] if first.endswith("s") and len(first) > 3 else first
    return frozenset({first, stem, stem + "s"})


def claims(q: Quantity, fact: NumberFact) -> bool:
    """Whether ``q`` is ``fact``'s number written as the quantity it names (see the module docstring)."""
    if not number_matches(q.value, fact):
        return False
    want = unit_words(fact.unit)
    if not want:
        return True
    if want == {"%"}:
        return q.percent
    if q.percent:
        return False
    if q.clock and want == _SPELLINGS["hours"]:
        return True
    return bool(want & set(q.after) or want & set(q.before))
