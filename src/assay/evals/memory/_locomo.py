"""LoCoMo import (the published ``locomo10.json`` layout): conversations, their dated sessions, their questions.

A file is a JSON list of samples: ``sample_id``; ``conversation`` with ``speaker_a``/``speaker_b``,
``session_N`` (a list of ``{speaker, dia_id, text}`` turns, an image turn adding ``blip_caption``) and
``session_N_date_time`` ("1:56 pm on 8 May, 2023"); ``qa`` with ``question``, ``answer`` (the adversarial
category has ``adversarial_answer`` instead), ``evidence`` (the dia_ids that hold the answer) and
``category`` (1-5, see :data:`assay.evals.memory._grading.CATEGORIES`). A malformed record is refused with
the file and the sample/question at fault.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from assay._util import read_json_file
from assay.errors import ConfigError
from assay.evals._pinned import parse_dated
from assay.evals.memory._grading import CATEGORIES

__all__ = [
    "LocomoConversation",
    "LocomoQuestion",
    "LocomoSession",
    "LocomoTurn",
    "load_locomo",
    "parse_locomo_date",
    "sample_locomo",
]

_SESSION = re.compile(r"session_(\d+)$")
_DIA = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class LocomoTurn:
    dia_id: str
    speaker: str
    text: str

    @property
    def said(self) -> str:
        """The turn as the memory records it: who said it, then what."""
        return f"{self.speaker}: {self.text}"


@dataclass
class LocomoSession:
    number: int
    at: datetime
    turns: list[LocomoTurn]


@dataclass
class LocomoQuestion:
    conversation: str
    index: int
    question: str
    answer: str
    category: int
    evidence: list[str]
    #: the plausible wrong answer an adversarial question offers (category 5)
    adversarial_answer: str = ""

    @property
    def id(self) -> str:
        return f"{self.conversation}/q{self.index:03d}"

    @property
    def category_name(self) -> str:
        return CATEGORIES[self.category]


@dataclass
class LocomoConversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[LocomoSession]
    questions: list[LocomoQuestion] = field(default_factory=list)

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def dia_ids(self) -> set[str]:
        return {t.dia_id for s in self.sessions for t in s.turns}


def parse_locomo_date(value: str, *, path: str, where: str) -> datetime:
    """LoCoMo dates look like ``1:56 pm on 8 May, 2023``; ISO dates are accepted too."""
    text = " ".join(str(value).split())
    formats = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")
    return parse_dated(text, formats, raw=value, path=path, where=where)


def _evidence(raw: object) -> list[str]:
    """The dia_ids a question names (a few in the published file are written "D8:6; D9:17" in one string)."""
    items = raw if isinstance(raw, list) else [raw] if raw else []
    out: list[str] = []
    for item in items:
        for dia in _DIA.findall(str(item)):
            if dia not in out:
                out.append(dia)
    return out


def _sessions(conv: dict[str, object], path: str, where: str) -> list[LocomoSession]:
    out: list[LocomoSession] = []
    for key in conv:
        m = _SESSION.match(key)
        if not m:
            continue
        n = int(m.group(1))
        turns_raw = conv[key]
        if not isinstance(turns_raw, list):
            raise ConfigError(f"{where}: {key} is not a list of turns", path=path)
        if not turns_raw:
            continue
        date = conv.get(f"{key}_date_time")
        if not date:
            raise ConfigError(f"{where}: {key} has no {key}_date_time", path=path)
        turns = []
        for j, t in enumerate(turns_raw):
            if not isinstance(t, dict) or not {"speaker", "dia_id", "text"} <= t.keys():
                raise ConfigError(f"{where}: {key} turn {j} lacks speaker, dia_id or text", path=path)
            text = str(t["text"])
            if t.get("blip_caption"):
                text += f" [shares {t['blip_caption']}]"
            turns.append(LocomoTurn(str(t["dia_id"]), str(t["speaker"]), text))
        out.append(LocomoSession(n, parse_locomo_date(str(date), path=path, where=f"{where} {key}"), turns))
    out.sort(key=lambda s: s.number)
    return out


def load_locomo(path: Path) -> list[LocomoConversation]:
    """Read a LoCoMo JSON file; ConfigError names the file and the sample or question at fault."""
    data = read_json_file(path, missing="LoCoMo file not found (--dataset locomo:FILE)")
    if not isinstance(data, list) or not data:
        raise ConfigError("a LoCoMo file is a non-empty JSON list of samples", path=str(path))
    out: list[LocomoConversation] = []
    seen: set[str] = set()
    for i, rec in enumerate(data):
        where = f"sample {i}"
        if not isinstance(rec, dict) or not isinstance(rec.get("conversation"), dict):
            raise ConfigError(f"{where} has no conversation object", path=str(path))
        sample_id = str(rec.get("sample_id", f"conv-{i}"))
        where = f"sample {i} ({sample_id})"
        if sample_id in seen:
            raise ConfigError(f"{where}: duplicate sample_id", path=str(path))
        seen.add(sample_id)
        conv = rec["conversation"]
        sessions = _sessions(conv, str(path), where)
        if not sessions:
            raise ConfigError(f"{where}: no session_N turn lists", path=str(path))
        conversation = LocomoConversation(
            sample_id, (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))), sessions
        )
        for j, qa in enumerate(rec.get("qa") or []):
            qwhere = f"{where} question {j}"
            if not isinstance(qa, dict) or "question" not in qa:
                raise ConfigError(f"{qwhere} has no question", path=str(path))
            category = qa.get("category")
            if category not in CATEGORIES:
                raise ConfigError(f"{qwhere}: category {category!r} is not one of 1-5", path=str(path))
            answer = qa.get("answer")
            if answer is None and category != 5:
                raise ConfigError(f"{qwhere} has no answer", path=str(path))
            conversation.questions.append(
                LocomoQuestion(
                    conversation=sample_id,
                    index=j,
                    question=str(qa["question"]),
                    answer="" if answer is None else str(answer),
                    category=int(category),
                    evidence=_evidence(qa.get("evidence")),
                    adversarial_answer=str(qa.get("adversarial_answer") or ""),
                )
            )
        out.append(conversation)
    return out


def sample_locomo(
    conversations: list[LocomoConversation],
    *,
    conversations_n: int | None,
    questions_n: int | None,
    seed: int,
) -> list[LocomoConversation]:
    """``conversations_n`` conversations and at most ``questions_n`` questions of each, drawn with ``seed``.

    The draw depends only on the file and the seed, so a resumed or repeated run asks the same questions.
    """
    rng = random.Random(seed)
    chosen = list(conversations)
    if conversations_n is not None and conversations_n < len(chosen):
        keep = set(rng.sample(range(len(chosen)), conversations_n))
        chosen = [c for i, c in enumerate(chosen) if i in keep]
    out = []
    for conv in chosen:
        qs = conv.questions
        if questions_n is not None and questions_n < len(qs):
            keep = set(random.Random(f"{seed}:{conv.sample_id}").sample(range(len(qs)), questions_n))
            qs = [q for i, q in enumerate(qs) if i in keep]
        out.append(LocomoConversation(conv.sample_id, conv.speakers, conv.sessions, qs))
    return out
