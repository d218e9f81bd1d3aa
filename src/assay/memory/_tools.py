"""The explicit memory tools an agent calls: remember, update_memory, forget, and the reminder tools.

``forget`` is permanent: the items go, a tombstone stays, and the words are scrubbed from stored chats so
that re-reading them or a later consolidation cannot bring them back.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from assay.memory._turn import Evidence, Rejection, TurnResult
from assay.memory._types import KnowledgeItem, Reminder
from assay.memory.extract import CandidateFact
from assay.memory.rules import content_words, normalize, split_sentences

if TYPE_CHECKING:
    from assay.memory._store import MemoryStore

__all__ = ["FORGOTTEN", "TOOL_NAMES", "MemoryTools", "parse_when"]

FORGOTTEN = "[forgotten]"
TOOL_NAMES = (
    "remember",
    "update_memory",
    "forget",
    "set_reminder",
    "reschedule_reminder",
    "complete_reminder",
    "cancel_reminder",
)
_NAME_AFTER = r"(?:'s name)?\s*(?:is|was|named|called|,)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
_NAME_BEFORE = r"([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?),?\s+(?:is\s+)?(?:my|the user's|user's|our)\s+"


def parse_when(value: Any) -> datetime:
    """An ISO date or datetime (naive means UTC)."""
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError(f"not an ISO date: {value!r}") from exc
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _overlap(a: str, b: str) -> float:
    wa, wb = content_words(a), content_words(b)
    return len(wa & wb) / len(wa) if wa else 0.0


class MemoryTools:
    store: MemoryStore

    if TYPE_CHECKING:

        def apply_fact(
            self,
            fact: CandidateFact,
            ev: Evidence,
            prov: dict[str, Any],
            into: TurnResult,
            *,
            explicit: bool = False,
        ) -> int | None: ...

    def call_tool(
        self, name: str, args: dict[str, Any], *, prov: dict[str, Any], evidence: Evidence, into: TurnResult
    ) -> dict[str, Any]:
        """Run one memory tool call; the answer is what the agent would get back."""
        try:
            if name == "remember":
                fact = CandidateFact(
                    content=str(args["content"]),
                    entity=str(args.get("entity") or "user"),
                    attribute=args.get("attribute"),
                    category=str(args.get("category") or "fact"),
                    evidence=args.get("evidence"),
                )
                item_id = self.apply_fact(fact, evidence, prov, into, explicit=True)
                return {"tool": name, "ok": item_id is not None, "id": item_id}
            if name == "update_memory":
                return self._update(args, prov, evidence, into)
            if name == "forget":
                return {
                    "tool": name,
                    "ok": True,
                    **self.forget(str(args.get("target") or ""), args.get("entity")),
                }
            if name == "set_reminder":
                rid = self.store.add_reminder(str(args["content"]), parse_when(args["due"]), prov)
                return {"tool": name, "ok": True, "id": rid}
            if name in ("reschedule_reminder", "complete_reminder", "cancel_reminder"):
                rem = self._find_reminder(args)
                if rem is None:
                    return {"tool": name, "ok": False, "error": "no open reminder matches"}
                if name == "reschedule_reminder":
                    self.store.update_reminder(rem.id, due_at=parse_when(args["due"]))
                else:
                    self.store.update_reminder(
                        rem.id, status="done" if name == "complete_reminder" else "cancelled"
                    )
                return {"tool": name, "ok": True, "id": rem.id}
        except (KeyError, ValueError) as exc:
            into.rejected.append(Rejection("tool", name, f"bad arguments: {exc}"))
            return {"tool": name, "ok": False, "error": f"bad arguments: {exc}"}
        into.rejected.append(Rejection("tool", name, "unknown memory tool"))
        return {
            "tool": name,
            "ok": False,
            "error": f"unknown memory tool {name!r}; known: {', '.join(TOOL_NAMES)}",
        }

    # ------------------------------------------------------------------ update
    def find_item(self, match: str, entity: str | None = None) -> KnowledgeItem | None:
        best: tuple[float, int, KnowledgeItem] | None = None
        for it in self.store.current_items(entity=entity):
            score = _overlap(match, it.content)
            if score > 0 and (best is None or (score, it.id) > best[:2]):
                best = (score, it.id, it)
        return best[2] if best and best[0] >= 0.34 else None

    def _update(
        self, args: dict[str, Any], prov: dict[str, Any], evidence: Evidence, into: TurnResult
    ) -> dict[str, Any]:
        old = self.store.get_item(int(args["id"])) if args.get("id") is not None else None
        if old is None:
            old = self.find_item(str(args.get("match") or args["content"]), args.get("entity"))
        if old is None or not old.current:
            return {"tool": "update_memory", "ok": False, "error": "no current memory matches"}
        fact = CandidateFact(
            content=str(args["content"]),
            entity=old.entity,
            attribute=args.get("attribute") or old.attribute,
            category=old.category,
            evidence=args.get("evidence"),
        )
        new_id = self.apply_fact(fact, evidence, prov, into, explicit=True)
        if new_id is None:
            return {"tool": "update_memory", "ok": False, "error": "the new value was refused"}
        still = self.store.get_item(old.id)
        if new_id != old.id and still is not None and still.current:
            self.store.supersede(old.id, new_id)
        return {"tool": "update_memory", "ok": True, "id": new_id, "replaced": old.id}

    # ------------------------------------------------------------------ forget
    def forget(self, target: str, entity: str | None = None) -> dict[str, Any]:
        """Forget for good: delete matching items (every version), tombstone them, scrub stored chats."""
        victims: dict[int, KnowledgeItem] = {}
        if entity:
            ent = normalize(str(entity))
            self.store.add_tombstone("entity", ent, reason="forget tool")
            for it in self.store.all_items():
                if it.entity == ent or set(ent.split()) <= content_words(it.content):
                    victims[it.id] = it
            for name in self._names_of(ent, list(victims.values())):
                self.store.add_tombstone("term", name, reason="name of a forgotten entity")
            for it in self.store.all_items():  # items that only name the person
                if it.id not in victims and self.store.forgotten_by(it.content, it.entity):
                    victims[it.id] = it
        if target and not entity:
            for it in self.store.all_items():
                if _overlap(target, it.content) >= 0.5 or _overlap(it.content, target) >= 0.6:
                    victims[it.id] = it
            self.store.add_tombstone("content", target, reason="forget tool")
            for it in victims.values():
                self.store.add_tombstone("content", it.content, reason="forgotten item")
        self.store.delete_items(sorted(victims))
        scrubbed = self.scrub_forgotten()
        self.store.purge()
        return {"forgotten_items": len(victims), "scrubbed": scrubbed}

    def _names_of(self, entity: str, items: list[KnowledgeItem]) -> set[str]:
        names: set[str] = set()
        word = re.escape(entity)
        for it in items:
            if it.attribute == "name":
                names |= {w.lower() for w in re.findall(r"\b[A-Z][a-z]+\b", it.content)}
            for m in re.finditer(rf"(?i:\b{word}\b){_NAME_AFTER}", it.content):
                names.add(m.group(1).lower())
            for m in re.finditer(rf"{_NAME_BEFORE}(?i:{word})\b", it.content):
                names.add(m.group(1).lower())
        return {n for n in names if n not in {"user", "the", "my"}}

    def scrub_forgotten(self) -> int:
        """Replace every stored sentence a tombstone covers; drop lessons and reminders it covers."""
        count = 0
        for turn in self.store.turns():
            user, n1 = self._scrub(turn.user_text)
            assistant, n2 = self._scrub(turn.assistant_text)
            if n1 or n2:
                self.store.rewrite_turn(turn.id, user, assistant)
                count += n1 + n2
        for conv_id, summary in self.store.summaries():
            text, n = self._scrub(summary)
            if n:
                self.store.set_summary(conv_id, text)
                count += n
        gone = [ls.id for ls in self.store.lessons(current_only=False) if self.store.forgotten_by(ls.content)]
        self.store.delete_lessons(gone)
        rems = [r.id for r in self.store.reminders() if self.store.forgotten_by(r.content)]
        self.store.delete_reminders(rems)
        return count + len(gone) + len(rems)

    def _scrub(self, text: str) -> tuple[str, int]:
        if not text:
            return text, 0
        n = 0
        out = text
        for sentence in split_sentences(text):
            if sentence != FORGOTTEN and self.store.forgotten_by(sentence) is not None:
                out = out.replace(sentence, FORGOTTEN)
                n += 1
        return out, n

    # ------------------------------------------------------------------ reminders
    def _find_reminder(self, args: dict[str, Any]) -> Reminder | None:
        open_ = self.store.reminders("open")
        if args.get("id") is not None:
            return next((r for r in open_ if r.id == int(args["id"])), None)
        match = str(args.get("match") or args.get("content") or "")
        scored = sorted(
            ((_overlap(match, r.content), -r.id, r) for r in open_), key=lambda t: t[:2], reverse=True
        )
        return scored[0][2] if scored and scored[0][0] >= 0.34 else None
