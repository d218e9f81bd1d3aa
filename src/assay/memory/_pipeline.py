"""The memory pipeline an agent runs: open the store, upkeep per chat, ``process_query`` per turn."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.embed import Embedder
from assay.memory._clock import Clock
from assay.memory._recall import recall
from assay.memory._store import ItemDraft, MemoryStore
from assay.memory._tools import MemoryTools
from assay.memory._turn import Chat, Evidence, MemoryConfig, Rejection, Shown, TurnResult
from assay.memory._types import ToolCallRecord
from assay.memory._upkeep import UpkeepMixin, UpkeepReport
from assay.memory.extract import (
    CandidateFact,
    CandidateLesson,
    CandidateReminder,
    Extraction,
    ExtractionError,
    extract_with_model,
)
from assay.memory.rules import content_words, ground, looks_like_instruction, normalize
from assay.models import ChatModel
from assay.runs import Usage

__all__ = ["Chat", "Memory", "MemoryConfig", "Rejection", "Shown", "TurnResult", "init_memory"]


class Memory(MemoryTools, UpkeepMixin):
    """Long-term memory for one user: a store, an optional extraction model, and the rules."""

    def __init__(
        self, store: MemoryStore, model: ChatModel | None = None, config: MemoryConfig | None = None
    ):
        self.store = store
        self.model = model
        self.config = config or MemoryConfig()
        self.usage = Usage()

    # ------------------------------------------------------------------ chats
    async def start_chat(self, ref: str | None = None) -> tuple[Chat, UpkeepReport]:
        """A fresh agent starts: run upkeep, then open a conversation."""
        report = await self.upkeep()
        return Chat(self.store.start_conversation(ref), ref), report

    def end_chat(self, chat: Chat) -> None:
        self.store.end_conversation(chat.conversation_id)

    # ------------------------------------------------------------------ what the agent is shown
    def context_for(self, query: str, *, touch: bool = True) -> Shown:
        cfg = self.config
        now = self.store.clock.now()
        system: list[str] = []
        profile = self.store.current_items(entity="user", category="profile")
        profile.sort(key=lambda it: (-it.confidence, -it.updated_at.timestamp(), it.id))
        if profile:
            system.append("## What you know about the user")
            system += [f"- {it.content}" for it in profile[: cfg.profile_items]]
        lessons = self.store.lessons()[-cfg.lessons_shown :]
        if lessons:
            system.append("## Lessons from earlier mistakes")
            system += [f"- {ls.content}" for ls in lessons]
        due = [r for r in self.store.reminders("open") if r.due_at <= now + cfg.reminder_horizon]
        if due:
            system.append("## Reminders due")
            system += [f"- {r.due_at.date().isoformat()}: {r.content}" for r in due]
        shown_ids = [it.id for it in profile[: cfg.profile_items]]
        context: list[str] = []
        items = recall(self.store, query, k=cfg.recall_items, kinds=("item",), weights=cfg.weights)
        items = [r for r in items if r.id not in shown_ids]
        if items:
            context.append("## Recalled")
            context += [f"- {r.text} ({r.when.date().isoformat() if r.when else '?'})" for r in items]
            shown_ids += [r.id for r in items]
        if cfg.recall_turns:
            turns = recall(self.store, query, k=cfg.recall_turns, kinds=("turn",), weights=cfg.weights)
            if turns:
                context.append("## From earlier conversations")
                context += [
                    f"- ({r.when.date().isoformat() if r.when else '?'}) user said: {r.text}" for r in turns
                ]
        if touch:
            self.store.touch(shown_ids)
        return Shown("\n".join(system), "\n".join(context), shown_ids)

    # ------------------------------------------------------------------ per turn
    async def process_query(
        self,
        chat: Chat,
        user_text: str,
        *,
        assistant_text: str = "",
        tool_calls: Sequence[ToolCallRecord] = (),
        documents: Sequence[tuple[str, str]] = (),
        memory_tools: Sequence[tuple[str, dict[str, Any]]] = (),
        ref: str | None = None,
    ) -> TurnResult:
        """One turn: show the agent its memory, record the turn, run its memory tools, extract and learn.

        ``ref`` names where an imported turn came from (a LoCoMo ``dia_id``); the turn and every item
        learnt from it keep it, so what the agent is later shown can be traced back to the source.
        """
        shown = self.context_for(user_text)
        record = [_tool_entry(c) for c in tool_calls]
        # what was forgotten stays forgotten even when the user or the agent says it again
        kept_user, _ = self._scrub(user_text)
        kept_assistant, _ = self._scrub(assistant_text)
        turn_id = self.store.add_turn(chat.conversation_id, kept_user, kept_assistant, record, ref=ref)
        result = TurnResult(turn_id=turn_id, shown=shown)
        prov: dict[str, Any] = {
            "conversation": chat.ref,
            "conversation_id": chat.conversation_id,
            "turn_id": turn_id,
        }
        if ref is not None:
            prov["ref"] = ref
        evidence = Evidence(user_text, assistant_text, tool_calls, documents)
        for name, args in memory_tools:
            result.tool_results.append(self.call_tool(name, args, prov=prov, evidence=evidence, into=result))
        extraction = Extraction()
        if self.model is not None:
            try:
                extraction, usage = await extract_with_model(
                    self.model,
                    conversation=chat.ref,
                    turn=chat.turns,
                    user_text=user_text,
                    assistant_text=assistant_text,
                    tool_calls=tool_calls,
                    documents=documents,
                )
                result.usage = result.usage + usage
                self.usage = self.usage + usage
            except ExtractionError as exc:
                result.extraction_error = str(exc)
                result.usage = result.usage + exc.usage
                self.usage = self.usage + exc.usage
        for fact in extraction.facts:
            self.apply_fact(fact, evidence, prov, result)
        if extraction.lessons:
            for lesson in extraction.lessons:
                self.apply_lesson(lesson, evidence, prov, result)
        else:
            for lesson in evidence.derived_lessons():
                self.apply_lesson(lesson, evidence, prov, result)
        for rem in extraction.reminders:
            self.apply_reminder(rem, evidence, prov, result)
        chat.turns += 1
        return result

    async def reread(self, ref: str) -> TurnResult:
        """Re-read a past conversation with the extraction model (say, after changing models).

        Everything it proposes goes through the same rules as a live turn, so what was forgotten, planted
        or someone else's stays out.
        """
        row = self.store.db.execute("SELECT id FROM conversations WHERE ref=?", (ref,)).fetchone()
        result = TurnResult(turn_id=-1, shown=Shown("", ""))
        if row is None or self.model is None:
            return result
        for turn in self.store.turns(int(row[0])):
            evidence = Evidence(turn.user_text, turn.assistant_text, [], [])
            prov = {"conversation": ref, "conversation_id": int(row[0]), "turn_id": turn.id, "reread": True}
            try:
                extraction, usage = await extract_with_model(
                    self.model,
                    conversation=ref,
                    turn=turn.idx,
                    user_text=turn.user_text,
                    assistant_text=turn.assistant_text,
                    tool_calls=[],
                    documents=[],
                )
            except ExtractionError as exc:
                result.extraction_error = str(exc)
                self.usage = self.usage + exc.usage
                continue
            result.usage = result.usage + usage
            self.usage = self.usage + usage
            for fact in extraction.facts:
                self.apply_fact(fact, evidence, prov, result)
        return result

    # ------------------------------------------------------------------ the rules, applied
    def apply_fact(
        self,
        fact: CandidateFact,
        ev: Evidence,
        prov: dict[str, Any],
        into: TurnResult,
        *,
        explicit: bool = False,
    ) -> int | None:
        entity = normalize(fact.entity) or "user"
        tomb = self.store.forgotten_by(fact.content, entity)
        if tomb is not None:
            into.rejected.append(Rejection("fact", fact.content, f"forgotten ({tomb.kind}: {tomb.value})"))
            return None
        g = ground(fact.content, fact.evidence, ev.user_text, ev.others())
        source = "user"
        confidence = fact.confidence
        if g.where in ("document", "tool") or (g.where == "none" and not explicit):
            if g.where == "none":
                reason = "not found in the user's words"
            elif looks_like_instruction(g.sentence or fact.content):
                reason = f"an instruction inside {g.where} text"
            else:
                reason = f"grounded in {g.where} text, not the user's own words"
            into.rejected.append(Rejection("fact", fact.content, reason))
            return None
        if g.where == "none":  # an explicit remember() the agent paraphrased
            source, confidence = "assistant", min(confidence, 0.7)
        elif g.hypothetical:
            into.rejected.append(Rejection("fact", fact.content, "a hypothetical"))
            return None
        elif entity == "user":
            reason = g.rejects_user_fact()
            if reason:
                into.rejected.append(Rejection("fact", fact.content, reason))
                return None
        elif g.quoted:
            source, confidence = "third_party", min(confidence, 0.5)
        if looks_like_instruction(fact.content) and g.where != "user":
            into.rejected.append(Rejection("fact", fact.content, "an instruction"))
            return None
        provenance = {**prov, "evidence": g.sentence, "extracted_by": "tool" if explicit else "model"}
        draft = ItemDraft(
            content=fact.content,
            entity=entity,
            attribute=normalize(fact.attribute) if fact.attribute else None,
            category=fact.category,
            source=source,
            confidence=confidence,
            provenance=provenance,
        )
        new_id = self.write_reconciled(draft)
        into.stored.append(new_id)
        return new_id

    def write_reconciled(self, draft: ItemDraft) -> int:
        """Write an item; a near-duplicate reinforces the old one, a new value for a slot supersedes it."""
        same_slot = (
            self.store.current_items(entity=draft.entity, attribute=draft.attribute)
            if draft.attribute
            else []
        )
        fingerprint = content_words(draft.content)
        for old in [*same_slot, *self.store.similar_current(draft.content, draft.entity)]:
            if content_words(old.content) == fingerprint and (
                old.attribute == draft.attribute or not draft.attribute
            ):
                self.store.reinforce(old.id, draft.confidence)
                return old.id
        new_id = self.store.add_item(draft)
        for old in same_slot:
            self.store.supersede(old.id, new_id)
        return new_id

    def apply_lesson(
        self, lesson: CandidateLesson, ev: Evidence, prov: dict[str, Any], into: TurnResult
    ) -> None:
        failed = [c for c in ev.tool_calls if c.failed and (lesson.tool is None or c.name == lesson.tool)]
        if not failed:
            into.rejected.append(
                Rejection("lesson", lesson.content, "no tool mistake in this turn to learn from")
            )
            return
        tomb = self.store.forgotten_by(lesson.content)
        if tomb is not None:
            into.rejected.append(Rejection("lesson", lesson.content, "forgotten"))
            return
        failures = ev.failure_texts()
        in_failure = bool(lesson.evidence) and any(
            normalize(lesson.evidence or "") in normalize(t) for t in failures
        )
        from_docs = ground(lesson.content, lesson.evidence, "", {"document": ev.trusted_not()})
        if from_docs.where == "document" and not in_failure:
            into.rejected.append(
                Rejection(
                    "lesson", lesson.content, "taken from a document or tool output, not from a mistake"
                )
            )
            return
        lesson_id = self.store.add_lesson(
            lesson.topic, lesson.content, lesson.tool or failed[0].name, {**prov, "error": failed[0].error}
        )
        into.lessons.append(lesson_id)

    def apply_reminder(
        self, rem: CandidateReminder, ev: Evidence, prov: dict[str, Any], into: TurnResult
    ) -> None:
        g = ground(rem.content or rem.match or "", rem.evidence, ev.user_text, ev.others())
        if g.where != "user" or g.quoted or g.hypothetical:
            into.rejected.append(
                Rejection("reminder", rem.content or rem.match or "", "not the user's own request")
            )
            return
        args: dict[str, Any] = {"content": rem.content, "match": rem.match or rem.content}
        if rem.due:
            args["due"] = rem.due
        name = {"create": "set_reminder", "done": "complete_reminder", "cancel": "cancel_reminder"}.get(
            rem.op, "reschedule_reminder"
        )
        into.tool_results.append(self.call_tool(name, args, prov=prov, evidence=ev, into=into))


def _tool_entry(call: ToolCallRecord) -> dict[str, Any]:
    """What the turn's tool record keeps: the call and its error; a result only by size and digest."""
    entry: dict[str, Any] = {"name": call.name, "arguments": call.arguments, "ok": not call.failed}
    if call.failed:
        entry["error"] = call.error
    else:
        entry["result_chars"] = len(call.result)
        entry["result_sha256"] = hashlib.sha256(call.result.encode()).hexdigest()[:16]
    return entry


def init_memory(
    path: str | Path,
    *,
    embedder: Embedder,
    model: ChatModel | None = None,
    clock: Clock | None = None,
    config: MemoryConfig | None = None,
) -> Memory:
    """Open (creating and migrating if needed) the memory database at ``path``."""
    return Memory(MemoryStore(path, embedder=embedder, clock=clock), model, config)
