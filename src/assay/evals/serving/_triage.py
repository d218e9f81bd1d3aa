"""Reading a triage answer, and the JSON schema ``--structured`` sends.

The parser is lenient about *form* and strict about *content*. It accepts, case-insensitively:

- a JSON object (what ``--structured`` makes the server emit), anywhere in the answer:
  ``{"category": "spam", "urgent": false, "personal": false}``; booleans may also be ``"yes"``/``"no"``;
- a field named anywhere in a line, its value later in the same line: ``category: work``,
  ``**Category** - Work``, ``The category is work.``, ``Urgent? No``, ``personal = true``;
- ``not urgent`` / ``non-urgent`` / ``not personal`` anywhere in a line (the field is no);
- for the category only, and only when no line names the field: a line that is nothing but a label
  (``Spam``, ``**work**``).

Value words (the documented synonyms):

- category: each label itself, and work ← job, business, professional; finance ← financial, bank, banking,
  bill, bills, billing, payment, payments; shopping ← order, orders, purchase, delivery, retail;
  newsletter ← newsletters, marketing, promotion, promotions, promotional, advertising, advertisement;
  social ← friends, family; spam ← scam, phishing, junk, fraud, fraudulent;
- urgent / personal: yes ← true; no ← false, none; and for urgent (or urgency) also high (yes), low (no).

An answer is never guessed from prose: "the email is from a colleague" names no label and stays unparsed. A
line that names two different values for one field (an echo of the prompt's ``<work, finance, ...>`` or
``<yes or no>``), or two lines that disagree, leave that field unparsed (``None``). Unparsed is never
correct; it is counted separately as the parse rate.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["CATEGORIES", "FIELDS", "TRIAGE_SCHEMA", "parse_triage_answer", "response_format"]

CATEGORIES = ("work", "finance", "shopping", "newsletter", "social", "spam")
FIELDS = ("category", "urgent", "personal")

CATEGORY_SYNONYMS: dict[str, str] = {
    **{c: c for c in CATEGORIES},
    **dict.fromkeys(("job", "business", "professional"), "work"),
    **dict.fromkeys(
        ("financial", "bank", "banking", "bill", "bills", "billing", "payment", "payments"), "finance"
    ),
    **dict.fromkeys(("order", "orders", "purchase", "delivery", "retail"), "shopping"),
    **dict.fromkeys(
        (
            "newsletters",
            "marketing",
            "promotion",
            "promotions",
            "promotional",
            "advertising",
            "advertisement",
        ),
        "newsletter",
    ),
    **dict.fromkeys(("friends", "family"), "social"),
    **dict.fromkeys(("scam", "phishing", "junk", "fraud", "fraudulent"), "spam"),
}
_BOOL_WORDS: dict[str, bool] = {
    "yes": True,
    "true": True,
    "no": False,
    "false": False,
    "none": False,
}
_URGENCY_WORDS: dict[str, bool] = {**_BOOL_WORDS, "high": True, "low": False}

#: what ``--structured`` asks for: llama.cpp turns the schema into a grammar, so the answer always parses
TRIAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": list(CATEGORIES)},
        "urgent": {"type": "boolean"},
        "personal": {"type": "boolean"},
    },
    "required": list(FIELDS),
    "additionalProperties": False,
}


def response_format() -> dict[str, Any]:
    """The request's ``response_format``: the form llama.cpp's server and llama-cpp-python's both accept.

    llama-cpp-python (0.3.x) rejects OpenAI's newer ``{"type": "json_schema", "json_schema": ...}``
    with HTTP 500 ("Input should be 'text' or 'json_object'"), so the schema rides on ``json_object``.
    """
    return {"type": "json_object", "schema": TRIAGE_SCHEMA}


_WORD = re.compile(r"[a-z]+")
_KEY = {
    "category": re.compile(r"\bcategor(?:y|ies|ised|ized)\b"),
    "urgent": re.compile(r"\burgen(?:t|cy)\b"),
    "personal": re.compile(r"\bpersonal\b"),
}
_NEGATED = {
    "urgent": re.compile(r"\b(?:not|non)[\s-]+urgent\b"),
    "personal": re.compile(r"\b(?:not|non)[\s-]+personal\b"),
}


def _values_in(field: str, text: str) -> set[Any]:
    words = _WORD.findall(text)
    if field == "category":
        table: dict[str, Any] = CATEGORY_SYNONYMS
    else:
        table = _URGENCY_WORDS if field == "urgent" else _BOOL_WORDS
    return {table[w] for w in words if w in table}


def _from_lines(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lines = [ln.strip().lower() for ln in text.splitlines() if ln.strip()]
    for field in FIELDS:
        found: set[Any] = set()
        bad = False
        for line in lines:
            neg = _NEGATED.get(field)
            if neg is not None and neg.search(line):
                found.add(False)
                continue
            m = _KEY[field].search(line)
            if m is None:
                continue
            rest = line[m.end() :]
            for other in FIELDS:  # up to the next field named on the line ("urgent: no, personal: yes")
                if other != field:
                    rest = _KEY[other].split(rest)[0]
            vals = _values_in(field, rest)
            if len(vals) > 1:
                bad = True  # "<yes or no>", "<work, finance, ...>": an echo, not an answer
            found |= vals
        if field == "category" and not found and not bad:
            for line in lines:
                bare = " ".join(_WORD.findall(line))
                if bare in CATEGORY_SYNONYMS:
                    found.add(CATEGORY_SYNONYMS[bare])
        out[field] = found.pop() if len(found) == 1 and not bad else None
    return out


def _from_json(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    while start != -1:
        try:
            doc, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(doc, dict):
            low = {str(k).strip().lower(): v for k, v in doc.items()}
            if any(f in low for f in FIELDS):
                out: dict[str, Any] = {}
                cat = low.get("category")
                out["category"] = CATEGORY_SYNONYMS.get(cat.strip().lower()) if isinstance(cat, str) else None
                for f in ("urgent", "personal"):
                    v = low.get(f)
                    if isinstance(v, bool):
                        out[f] = v
                    elif isinstance(v, str) and v.strip().lower() in _BOOL_WORDS:
                        out[f] = _BOOL_WORDS[v.strip().lower()]
                    else:
                        out[f] = None
                return out
        start = text.find("{", start + 1)
    return None


def parse_triage_answer(text: str) -> dict[str, Any]:
    """``{"category": str|None, "urgent": bool|None, "personal": bool|None}`` from the model's answer.

    ``None`` means the answer did not name a valid value for that field (see the module docstring).
    A JSON object wins; fields it lacks are looked for in the lines of the answer.
    """
    from_json = _from_json(text)
    from_lines = _from_lines(text)
    if from_json is None:
        return from_lines
    return {f: from_json[f] if from_json[f] is not None else from_lines[f] for f in FIELDS}


def answer_format(text: str) -> str:
    """``json`` when the answer holds a JSON object naming a field, else ``text``."""
    return "json" if _from_json(text) is not None else "text"
