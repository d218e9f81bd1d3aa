"""Rules that hold whatever a model extracts: whose words a fact is grounded in, planted instructions, secrets.

These are plain functions over text so they can be tested on their own and applied to every write path
(extraction, consolidation, explicit tools).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Grounding",
    "content_words",
    "ground",
    "looks_like_instruction",
    "normalize",
    "quoted_spans",
    "redact_secrets",
    "split_sentences",
]

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    """a an the and or but if of to in on at for from by with about as is are was were be been being am i
    me my mine we our us you your he she it its they them their this that these those there here do does
    did have has had not no so just now then than too very can could will would should shall may might
    must user user's users really also actually oh ok okay well yes yeah please thanks thank what when
    where which who whom how why all any some more most other into over under again once only own same s
    t don doesn""".split()  # noqa: SIM905
)

#: people and pets a first-person possessive can point at: "my sister is vegan" is not about the user
RELATIONS = frozenset(
    """sister brother mother mom mum father dad parent parents wife husband partner spouse son daughter kid
    kids child children baby friend friends boss manager colleague coworker colleagues team teammate
    neighbor neighbour cousin aunt uncle niece nephew grandma grandpa grandmother grandfather roommate
    landlord doctor dog cat puppy kitten pet girlfriend boyfriend fiance fiancee client customer""".split()  # noqa: SIM905
)

_SECRET_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private-key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    ),
    ("api-key", re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}")),
    ("aws-key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abpors]-[A-Za-z0-9\-]{10,}\b")),
    ("bearer", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-]{16,}")),
]
#: "the wifi password is hunter2", "api key: abc", "PIN = 1234": the value after the word is the secret
_SECRET_VALUE = re.compile(
    r"(?i)\b(pass(?:word|phrase|code)?|passwd|pin|api[ _-]?key|secret|token|access[ _-]?code)"
    r"(\s*(?:is|was|=|:|now)\s*(?:now\s+)?+)([\"'`]?)(?!\[secret redacted\])([^\s\"'`,;]{3,})(\3)"
)
#: the same in JSON or config form: "password": "hunter2", api_key='abc'
_SECRET_FIELD = re.compile(
    r"(?i)([\"']?\b(?:pass(?:word|phrase|code)?|passwd|pin|api[ _-]?key|secret|token|access[ _-]?code)\b[\"']?"
    r"\s*[:=]\s*)([\"'])(?!\[secret redacted\])([^\"']{3,})(\2)"
)
REDACTED = "[secret redacted]"

_HYPOTHETICAL = re.compile(
    r"(?i)^\W*(?:\w+,\s*)?(?:if|suppose|supposing|imagine|hypothetically|let's say|say|pretend|assuming|"
    r"what if|in case|were i|should i ever)\b|\bwhat if\b|\bif i\b|\bwere i\b|\bif we\b|\bpretend\b|"
    r"\bhypothetical(?:ly)?\b|\bwould i\b"
)
_FIRST_PERSON = re.compile(
    r"(?i)^\W*(?:[\w']+[,:;]?\s+){0,4}?(?:i|i'm|im|i've|i'll|i'd|we|we're|we've|we'll)\b"
)
_MY_SUBJECT = re.compile(r"(?i)^\W*(?:[\w']+[,:;]?\s+){0,4}?(?:my|our)\s+(?:[\w'-]+\s+){0,1}?([\w'-]+)")
_REPORTED = re.compile(
    r"(?i)\b(?:wrote|writes|said|says|texted|emailed|messaged|told me|forwarded)\b[^.\n]*:"
)
_INSTRUCTION = re.compile(
    r"(?i)(?:^\W*(?:always|never|ignore|disregard|do not|don't|you must|you should|make sure|be sure|"
    r"remember to|note to (?:ai|assistants?|agents?)|run|delete|send|push|add|set|use|forward|email|copy)\b)|"
    r"\b(?:ai|assistant|assistants|agent|agents|llm|model|chatbot)s?\b[^.\n]{0,40}\b(?:must|should|need to|"
    r"are required|always|never|remember)\b|\bignore (?:all |any )?(?:previous|prior|above) instructions\b|"
    r"\bsystem prompt\b|\bstore this in (?:your )?memory\b"
)


def normalize(text: str) -> str:
    """Lower-case, straight quotes, single spaces."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.lower().split())


def content_words(text: str) -> set[str]:
    """Words that carry meaning (no stopwords, no one-letter words)."""
    return {w for w in _WORD.findall(normalize(text)) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def split_sentences(text: str) -> list[str]:
    """Sentences and lines, each stripped; good enough for chat messages."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if p and p.strip()]


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of someone else's words: "..." quotes, ``>`` lines, and text after "X wrote:"."""
    spans: list[tuple[int, int]] = []
    for m in re.finditer(r'"[^"\n]{2,}"|\u201c[^\u201d]{2,}\u201d', text):
        spans.append((m.start(), m.end()))
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith(">"):
            spans.append((offset, offset + len(line)))
        offset += len(line)
    for m in _REPORTED.finditer(text):
        end = text.find("\n\n", m.end())
        spans.append((m.end(), len(text) if end < 0 else end))
    return spans


def redact_secrets(text: str) -> tuple[str, bool]:
    """Replace passwords, keys and tokens by a marker; return the text and whether anything was found."""
    found = False

    def value(m: re.Match[str]) -> str:
        nonlocal found
        found = True
        return f"{m.group(1)}{m.group(2)}{REDACTED}"

    def field(m: re.Match[str]) -> str:
        nonlocal found
        found = True
        return f"{m.group(1)}{m.group(2)}{REDACTED}{m.group(2)}"

    out = _SECRET_FIELD.sub(field, text)
    out = _SECRET_VALUE.sub(value, out)
    for _label, pattern in _SECRET_PATTERNS:
        out, n = pattern.subn(REDACTED, out)
        found = found or n > 0
    return out, found


def looks_like_instruction(text: str) -> bool:
    """Imperatives and directions aimed at an assistant: what planted text in a document looks like."""
    return any(_INSTRUCTION.search(s) for s in split_sentences(text))


@dataclass
class Grounding:
    """Where a candidate memory's words were found, and whether they may become a fact about the user."""

    where: str  # "user", "document", "tool", "assistant" or "none"
    sentence: str | None
    quoted: bool = False
    hypothetical: bool = False
    first_person: bool = False
    third_party_subject: str | None = None

    def rejects_user_fact(self) -> str | None:
        """The reason this grounding cannot support a fact about the user, or None if it can."""
        if self.where != "user":
            return f"grounded in {self.where} text, not the user's own words"
        if self.quoted:
            return "someone else's quoted words"
        if self.hypothetical:
            return "a hypothetical"
        if self.third_party_subject:
            return f"about the user's {self.third_party_subject}, not the user"
        if not self.first_person:
            return "not a first-person statement"
        return None


def _locate(needle: str, text: str) -> int:
    return normalize(text).find(normalize(needle)) if needle.strip() else -1


def _best_sentence(content: str, evidence: str | None, text: str) -> tuple[str, int] | None:
    """The sentence of ``text`` the candidate came from: the evidence span if present, else best overlap."""
    if evidence and _locate(evidence, text) >= 0:
        for sentence in split_sentences(text):
            if normalize(evidence) in normalize(sentence) or normalize(sentence) in normalize(evidence):
                return sentence, text.find(sentence)
        return evidence, _locate(evidence, text)
    want = content_words(evidence or content)
    if not want:
        return None
    best: tuple[float, str] | None = None
    for sentence in split_sentences(text):
        overlap = len(want & content_words(sentence)) / len(want)
        if overlap >= 0.5 and (best is None or overlap > best[0]):
            best = (overlap, sentence)
    return (best[1], text.find(best[1])) if best else None


def ground(
    content: str,
    evidence: str | None,
    user_text: str,
    others: dict[str, list[str]],
) -> Grounding:
    """Find where a candidate's words come from: the user's message first, then documents, tool output..."""
    hit = _best_sentence(content, evidence, user_text)
    if hit is not None:
        sentence, pos = hit
        span_end = pos + len(sentence) if pos >= 0 else -1
        quoted = pos >= 0 and any(a <= pos + 1 and span_end - 1 <= b for a, b in quoted_spans(user_text))
        if pos >= 0 and not quoted:
            # also quoted if the evidence itself sits inside a quote within the sentence
            ev_pos = _raw_find(evidence, user_text) if evidence else -1
            quoted = ev_pos >= 0 and any(a <= ev_pos < b for a, b in quoted_spans(user_text))
        third = None
        m = _MY_SUBJECT.match(sentence)
        if m and not _FIRST_PERSON.match(sentence) and m.group(1).lower().rstrip("'s") in RELATIONS:
            third = m.group(1).lower()
        first = bool(_FIRST_PERSON.match(sentence)) or (m is not None and third is None)
        return Grounding(
            where="user",
            sentence=sentence,
            quoted=quoted,
            hypothetical=bool(_HYPOTHETICAL.search(sentence)),
            first_person=first,
            third_party_subject=third,
        )
    for where, texts in others.items():
        for text in texts:
            found = _best_sentence(content, evidence, text)
            if found is not None:
                return Grounding(where=where, sentence=found[0])
    return Grounding(where="none", sentence=None)


def _raw_find(needle: str | None, text: str) -> int:
    if not needle:
        return -1
    return text.lower().find(needle.lower())
