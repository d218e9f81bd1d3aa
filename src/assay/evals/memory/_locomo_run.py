"""Replaying a LoCoMo conversation into the memory store and asking it one question.

The replay plays every session at its own date on the simulated clock through the same pipeline as the
scenarios (``start_chat`` upkeep: reconcile, consolidate, prune; ``process_query`` per turn: recall,
record, extract); each turn is recorded with its ``dia_id`` as its ``ref``, and every item extracted from
it keeps that ref, so what recall returns for a question can be traced to the turns that hold its answer.
It records its progress in the store after every turn: a killed run resumed on the same run directory goes
on from the next turn (at most the turn in flight is recorded twice).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from assay._util import phase
from assay.embed import Embedder
from assay.evals.memory._grading import CATEGORIES
from assay.evals.memory._locomo import LocomoConversation, LocomoQuestion
from assay.memory import Chat, ManualClock, Memory, MemoryConfig, init_memory, recall
from assay.models import ChatModel, Message
from assay.runs import Usage

__all__ = ["KS", "Plan", "answer", "duration", "evidence_ranking", "recall_at", "replay"]

#: the k of evidence recall@k reported
KS = (5, 10)
TURN_GAP = timedelta(seconds=30)
NOT_MENTIONED = "Not mentioned in the conversation"

ANSWER_SYSTEM = (
    "You remember past conversations between {a} and {b}. Today is {today}. What you remember that may "
    "bear on the question is below; the dates are when it was said.\n\n{shown}"
)
ANSWER_USER = (
    "Answer the question in a short phrase, using the exact words of what you remember where you can.\n\n"
    "Question: {question}"
)
TEMPORAL_HINT = " Use the dates of what you remember to give an approximate date."
ADVERSARIAL_USER = "Answer the question.\n\nQuestion: {question} Choose one: (a) {a} (b) {b}."


@dataclass
class Plan:
    """What a run will cost, said before it starts."""

    conversations: int
    sessions: int
    turns: int
    questions: int
    judged: int
    extraction: bool
    answering: bool
    judging: bool

    @property
    def calls(self) -> dict[str, int]:
        return {
            "extraction": self.turns if self.extraction else 0,
            # at most one consolidation per session (a session a week old is summarised at the next start)
            "consolidation (at most)": self.sessions if self.extraction else 0,
            "answers": self.questions if self.answering else 0,
            "judge": self.judged if self.judging else 0,
        }

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def describe(self, call_seconds: float | None = None) -> str:
        parts = ", ".join(f"{n:,} {what}" for what, n in self.calls.items() if n)
        head = (
            f"LoCoMo: {self.conversations} conversation(s), {self.sessions} sessions, {self.turns:,} turns, "
            f"{self.questions:,} questions: {self.total_calls:,} model calls"
            + (f" ({parts})" if parts else "")
        )
        if call_seconds is not None and self.total_calls:
            head += (
                f", about {duration(self.total_calls * call_seconds)} at an assumed {call_seconds:g} s a call"
            )
        return head


def duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def full_plan(conversations: list[LocomoConversation], *, judging: bool) -> Plan:
    """The calls a full answer run over ``conversations`` needs (extraction, answers, and the judge's)."""
    qs = [q for c in conversations for q in c.questions]
    return Plan(
        conversations=len(conversations),
        sessions=sum(len(c.sessions) for c in conversations),
        turns=sum(c.turn_count for c in conversations),
        questions=len(qs),
        judged=sum(q.category != 5 for q in qs),
        extraction=True,
        answering=True,
        judging=judging,
    )


def _model_key(model: ChatModel | None, embedder: Embedder) -> str:
    return f"{getattr(model, 'spec', None) or type(model).__name__ if model else 'none'}|{type(embedder).__name__}"


async def replay(
    conv: LocomoConversation,
    db_path: Path,
    *,
    embedder: Embedder,
    model: ChatModel | None,
    config: MemoryConfig,
) -> Memory:
    """The memory after every session of ``conv``, resuming a replay that a killed run left in ``db_path``."""
    key = f"{conv.sample_id}|{_model_key(model, embedder)}"
    fresh = True
    if db_path.exists():
        probe = init_memory(db_path, embedder=embedder, model=model, clock=ManualClock(conv.sessions[0].at))
        fresh = probe.store.get_meta("locomo:key") != key
        probe.store.close()
    if fresh:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db_path) + suffix).unlink(missing_ok=True)
    clock = ManualClock(conv.sessions[0].at)
    memory = init_memory(db_path, embedder=embedder, model=model, clock=clock, config=config)
    store = memory.store
    store.set_meta("locomo:key", key)
    done = int(store.get_meta("locomo:done") or 0)
    position = 0
    with phase(f"replaying {conv.sample_id}", total=conv.turn_count, unit="turns") as ph:
        ph.advance(min(done, conv.turn_count))
        for session in conv.sessions:
            ref = f"{conv.sample_id}:S{session.number}"
            if position + len(session.turns) <= done:
                position += len(session.turns)
                continue
            into = done - position  # turns of this session already replayed (a resumed run)
            clock.set(max(session.at + TURN_GAP * into, clock.now()))
            row = store.db.execute("SELECT id FROM conversations WHERE ref=?", (ref,)).fetchone()
            if row is not None:  # a resumed run: the session was opened (and its upkeep run) before the kill
                chat = Chat(int(row[0]), ref, into)
            else:
                chat, _ = await memory.start_chat(ref)
            for turn in session.turns[into:]:
                await memory.process_query(chat, turn.said, ref=turn.dia_id)
                position += 1
                store.set_meta("locomo:done", str(position))
                clock.advance(TURN_GAP)
                ph.advance()
            memory.end_chat(chat)
    last = conv.sessions[-1].at
    clock.set(max(last + timedelta(days=1), clock.now()))
    await memory.upkeep()
    return memory


def evidence_ranking(memory: Memory, question: str, k: int) -> list[set[str]]:
    """The dia_ids behind each of the ``k`` memories recall ranks first for ``question`` (items and turns)."""
    store = memory.store
    found = recall(store, question, k=k, kinds=("item", "turn"), weights=memory.config.weights)
    items = {it.id: it for it in store.items_by_ids([r.id for r in found if r.kind == "item"])}
    turn_ids = [r.id for r in found if r.kind == "turn"]
    turn_ids += [int(it.provenance["turn_id"]) for it in items.values() if "turn_id" in it.provenance]
    refs = store.turn_refs(turn_ids)
    out: list[set[str]] = []
    for r in found:
        if r.kind == "turn":
            out.append({refs[r.id]} if refs.get(r.id) else set())
            continue
        prov = items[r.id].provenance if r.id in items else {}
        dias = {str(prov["ref"])} if prov.get("ref") else set()
        if "turn_id" in prov and refs.get(int(prov["turn_id"])):
            dias.add(str(refs[int(prov["turn_id"])]))
        out.append(dias)
    return out


def recall_at(ranking: list[set[str]], evidence: list[str], k: int) -> float:
    """The share of ``evidence`` dia_ids behind the first ``k`` memories ranked."""
    seen: set[str] = set().union(*ranking[:k]) if ranking[:k] else set()
    return sum(e in seen for e in evidence) / len(evidence)


def _adversarial_options(q: LocomoQuestion, seed: int) -> tuple[str, str]:
    """(a, b): the not-mentioned choice and the offered answer, in an order fixed by the question and seed."""
    other = q.adversarial_answer or q.answer or "something else"
    flip = hashlib.sha256(f"{seed}:{q.id}".encode()).digest()[0] % 2
    return (NOT_MENTIONED, other) if flip else (other, NOT_MENTIONED)


def _chosen(reply: str, options: tuple[str, str]) -> str:
    """A one-letter reply ("a", "(b)") stands for the option it names; a longer reply is kept as written."""
    low = reply.strip().lower().rstrip(".")
    if low in ("a", "(a)"):
        return options[0]
    if low in ("b", "(b)"):
        return options[1]
    return reply.strip()


async def answer(
    memory: Memory, conv: LocomoConversation, q: LocomoQuestion, model: ChatModel, *, seed: int
) -> tuple[str, str, Usage]:
    """The model's answer to ``q`` from what the memory shows for it: (answer, shown, usage)."""
    shown = memory.context_for(q.question, touch=False).text
    today = memory.store.clock.now().date().isoformat()
    system = ANSWER_SYSTEM.format(a=conv.speakers[0], b=conv.speakers[1], today=today, shown=shown)
    options: tuple[str, str] | None = None
    if q.category == 5:
        options = _adversarial_options(q, seed)
        user = ADVERSARIAL_USER.format(question=q.question, a=options[0], b=options[1])
    else:
        hint = TEMPORAL_HINT if CATEGORIES[q.category] == "temporal" else ""
        user = ANSWER_USER.format(question=q.question + hint)
    out = await model.generate([Message("system", system), Message("user", user)])
    reply = out.text.strip()
    return (_chosen(reply, options) if options else reply), shown, out.usage


def question_details(q: LocomoQuestion, known: list[str], unknown: list[str]) -> dict[str, Any]:
    details: dict[str, Any] = {
        "question": q.question,
        "category": q.category_name,
        "gold": q.answer if q.category != 5 else NOT_MENTIONED,
        "evidence": known,
    }
    if unknown:
        details["evidence_not_in_conversation"] = unknown
    return details
