"""LongMemEval-format import: chat histories with timestamps, a question, its answer and question type.

Each question is a case: its haystack sessions are played through the same memory pipeline on a fresh
database at their own dates (every turn keeps its session id as its ref), then the question is asked at
``question_date``. Beside the grade, **session recall@5/@10**: the share of the evidence sessions
(``answer_session_ids``) behind the memories recall ranks first. With a model, the answer is graded as
LongMemEval's authors grade it: a judge (``--judge-model``) given the question type's own rule
(:func:`assay.evals.memory._grading.longmemeval_prompt`). Without one, the case passes when the gold
answer is in what the agent is shown (an upper bound on what any answerer could do with this memory).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assay._util import read_json_file, ticking
from assay.embed import Embedder
from assay.errors import ConfigError
from assay.evals._pinned import parse_dated
from assay.evals.memory._grading import judge_longmemeval
from assay.evals.memory._locomo_run import KS, evidence_ranking, recall_at
from assay.exec import Case
from assay.judge import Judge
from assay.memory import ManualClock, MemoryConfig, init_memory
from assay.models import ChatModel, Message
from assay.runs import Usage

__all__ = ["LMEQuestion", "answer_question", "contains_answer", "load_longmemeval"]

_REQUIRED = ("question_id", "question_type", "question", "answer", "haystack_sessions")


def contains_answer(text: str, answer: str) -> bool:
    """True when the gold ``answer`` occurs in ``text`` as whole words ("2" is not in "2023")."""
    want = _norm(answer)
    return bool(want) and f" {want} " in f" {_norm(text)} "


@dataclass
class LMEQuestion:
    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: datetime
    sessions: list[tuple[str, datetime, list[dict[str, str]]]]
    #: the sessions that hold the answer (``answer_session_ids``); empty when the file names none
    evidence_sessions: list[str] = field(default_factory=list)

    @property
    def abstention(self) -> bool:
        return self.question_id.endswith("_abs")


def parse_date(value: str, *, path: str, where: str) -> datetime:
    """LongMemEval dates look like ``2023/05/20 (Sat) 02:21``; ISO dates are accepted too."""
    text = re.sub(r"\s*\([A-Za-z]{3}\)\s*", " ", str(value)).strip()
    formats = ("%Y/%m/%d %H:%M", "%Y/%m/%d", "%Y-%m-%d %H:%M")
    return parse_dated(text, formats, raw=value, path=path, where=where)


def load_longmemeval(path: Path) -> list[LMEQuestion]:
    """Read a LongMemEval JSON file (a list of question records); ConfigError names the record at fault."""
    data = read_json_file(path, missing="LongMemEval file not found (--dataset longmemeval:FILE)")
    if not isinstance(data, list) or not data:
        raise ConfigError("a LongMemEval file is a non-empty JSON list of question records", path=str(path))
    out: list[LMEQuestion] = []
    for i, rec in enumerate(data):
        where = f"record {i}"
        if not isinstance(rec, dict):
            raise ConfigError(f"{where} is not an object", path=str(path))
        missing = [k for k in _REQUIRED if k not in rec]
        if missing:
            raise ConfigError(f"{where} lacks {', '.join(missing)}", path=str(path))
        sessions_raw = rec["haystack_sessions"]
        dates = rec.get("haystack_dates") or []
        ids = rec.get("haystack_session_ids") or [f"s{j}" for j in range(len(sessions_raw))]
        if dates and len(dates) != len(sessions_raw):
            raise ConfigError(
                f"{where}: {len(dates)} haystack_dates for {len(sessions_raw)} sessions", path=str(path)
            )
        qdate = parse_date(rec.get("question_date") or "2100/01/01", path=str(path), where=where)
        sessions = []
        for j, sess in enumerate(sessions_raw):
            if not isinstance(sess, list) or not all(isinstance(t, dict) and "role" in t for t in sess):
                raise ConfigError(
                    f"{where}: session {j} is not a list of {{role, content}} turns", path=str(path)
                )
            when = parse_date(dates[j], path=str(path), where=where) if dates else qdate
            sessions.append((str(ids[j]), when, sess))
        sessions.sort(key=lambda s: s[1])
        out.append(
            LMEQuestion(
                question_id=str(rec["question_id"]),
                question_type=str(rec["question_type"]),
                question=str(rec["question"]),
                answer=str(rec["answer"]),
                question_date=qdate,
                sessions=sessions,
                evidence_sessions=[str(x) for x in rec.get("answer_session_ids") or []],
            )
        )
    return out


def cases(questions: list[LMEQuestion]) -> list[Case]:
    return [
        Case(id=q.question_id, category=q.question_type, input={"index": i}, tags=["longmemeval"])
        for i, q in enumerate(questions)
    ]


async def answer_question(
    q: LMEQuestion, db_path: Path, *, embedder: Embedder, model: ChatModel | None, judge: Judge | None = None
) -> dict[str, Any]:
    """Play the question's history into a fresh memory and grade what it yields."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    first = q.sessions[0][1] if q.sessions else q.question_date
    clock = ManualClock(first)
    # extraction per turn over hundreds of haystack turns is out of reach here: recall reads past turns
    memory = init_memory(
        db_path,
        embedder=embedder,
        model=None,
        clock=clock,
        config=MemoryConfig(recall_turns=5, recall_items=6),
    )
    usage = Usage()
    try:
        for ref, when, turns in ticking(q.sessions, f"replaying {q.question_id}", "sessions"):
            clock.set(max(when, clock.now()))
            chat, _ = await memory.start_chat(ref)
            pending_user: str | None = None
            for t in turns:
                role, content = t.get("role"), str(t.get("content", ""))
                if role == "user":
                    if pending_user is not None:
                        await memory.process_query(chat, pending_user, ref=ref)
                    pending_user = content
                elif role == "assistant" and pending_user is not None:
                    await memory.process_query(chat, pending_user, assistant_text=content, ref=ref)
                    pending_user = None
            if pending_user is not None:
                await memory.process_query(chat, pending_user, ref=ref)
            memory.end_chat(chat)
        clock.set(max(q.question_date, clock.now()))
        shown = memory.context_for(q.question, touch=False).text
        recall: dict[str, float] = {}
        if q.evidence_sessions:
            ranking = evidence_ranking(memory, q.question, max(KS))
            recall = {f"lme_recall@{k}": recall_at(ranking, q.evidence_sessions, k) for k in KS}
    finally:
        memory.store.close()
    answer: str | None = None
    reason: str | None = None
    if model is not None:
        if judge is None:
            raise ValueError("a LongMemEval answer is graded by a judge")
        out = await model.generate(
            [
                Message(
                    role="system",
                    content=f"Answer from memory, briefly. Today is {q.question_date:%Y-%m-%d}.\n\n" + shown,
                ),
                Message(role="user", content=q.question),
            ]
        )
        usage = usage + out.usage
        answer = out.text
        judged = await judge_longmemeval(
            judge, q.question_type, q.question, q.answer, answer, abstention=q.abstention
        )
        usage = usage + judged.usage
        correct, reason = judged.correct, judged.reason or judged.error
    else:
        correct = (not q.answer.strip()) if q.abstention else contains_answer(shown, q.answer)
    return {
        "correct": correct,
        "shown": shown,
        "answer": answer,
        "judge_reason": reason,
        "recall": recall,
        "usage": usage,
        "graded_on": "answer (judge)" if model else "shown",
    }


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))
