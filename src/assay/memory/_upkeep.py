"""Per-chat upkeep: reconcile duplicates and contradictions, consolidate old conversations, prune."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from assay.embed import relatedness
from assay.memory._clock import to_ts
from assay.memory._turn import Evidence, MemoryConfig, Shown, TurnResult
from assay.memory.extract import ExtractionError, consolidate_with_model
from assay.memory.rules import split_sentences
from assay.runs import Usage

if TYPE_CHECKING:
    from assay.memory._store import MemoryStore
    from assay.memory._types import KnowledgeItem
    from assay.memory.extract import CandidateFact
    from assay.models import ChatModel

__all__ = ["UpkeepMixin", "UpkeepReport"]


@dataclass
class UpkeepReport:
    superseded: list[tuple[int, int]] = field(default_factory=list)  # (old, new)
    consolidated: list[int] = field(default_factory=list)
    consolidation_facts: list[int] = field(default_factory=list)
    rejected: list[Any] = field(default_factory=list)
    pruned: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    usage: Usage = field(default_factory=Usage)


class UpkeepMixin:
    store: MemoryStore
    model: ChatModel | None
    config: MemoryConfig
    usage: Usage

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

        def _scrub(self, text: str) -> tuple[str, int]: ...

    async def upkeep(self) -> UpkeepReport:
        """Run at the start of every chat; cheap when nothing changed."""
        t0 = time.perf_counter()
        report = UpkeepReport()
        self.reconcile(report)
        await self.consolidate(report)
        self.prune(report)
        self.store.set_meta("last_upkeep", repr(self.store.now()))
        report.seconds = time.perf_counter() - t0
        return report

    def reconcile(self, report: UpkeepReport) -> None:
        """One current value per (entity, attribute) slot; near-duplicates folded into the newer item."""
        since = float(self.store.get_meta("last_upkeep") or 0.0)
        fresh_items = self.store.created_since(since)
        if not fresh_items:
            return
        slots = sorted({(it.entity, it.attribute) for it in fresh_items if it.attribute})
        for entity, attribute in slots:
            items = self.store.current_items(entity=entity, attribute=attribute)
            if len(items) < 2:
                continue
            items.sort(key=lambda it: (it.valid_from, it.id))
            newest = items[-1]
            for old in items[:-1]:
                self.store.supersede(old.id, newest.id)
                report.superseded.append((old.id, newest.id))
        fresh_items = [it for it in fresh_items if (self.store.get_item(it.id) or it).current]
        for block in range(0, len(fresh_items), 256):
            chunk = fresh_items[block : block + 256]
            vecs = np.asarray(self.store.embedder.embed([it.content for it in chunk]), dtype=np.float32)
            ids, sims = self.store.vector_scores_many("item", vecs)
            for col, it in enumerate(chunk):
                near = relatedness(self.store.embedder, sims[:, col]) >= self.config.duplicate_cosine
                close = [int(i) for i in ids[near] if int(i) != it.id]
                self._fold_duplicates(it, close, report)

    def _fold_duplicates(self, it: KnowledgeItem, close: list[int], report: UpkeepReport) -> None:
        for other in self.store.items_by_ids(close):
            if not other.current or other.entity != it.entity:
                continue
            if other.attribute and it.attribute and other.attribute != it.attribute:
                continue
            old, new = (other, it) if (other.valid_from, other.id) < (it.valid_from, it.id) else (it, other)
            current = self.store.get_item(old.id)
            if current is not None and current.current:
                self.store.supersede(old.id, new.id)
                report.superseded.append((old.id, new.id))

    async def consolidate(self, report: UpkeepReport) -> None:
        """Summarise conversations that ended a while ago; the model's facts go through the same rules."""
        cutoff = to_ts(self.store.clock.now() - self.config.consolidate_after)
        for conv_id, ref in self.store.unconsolidated_conversations(cutoff):
            turns = self.store.turns(conv_id)
            user_text = "\n".join(t.user_text for t in turns)
            transcript = "\n".join(
                f"USER: {t.user_text}" + (f"\nASSISTANT: {t.assistant_text}" if t.assistant_text else "")
                for t in turns
            )
            summary = _extractive_summary(user_text)
            sink = TurnResult(turn_id=-1, shown=Shown("", ""))
            if self.model is not None and turns:
                try:
                    answer, usage = await consolidate_with_model(
                        self.model, conversation=ref, transcript=transcript
                    )
                    report.usage = report.usage + usage
                    self.usage = self.usage + usage
                    summary = answer.summary or summary
                    evidence = Evidence(user_text, "", [], [])
                    prov = {"conversation": ref, "conversation_id": conv_id, "consolidated": True}
                    for fact in answer.facts:
                        item_id = self.apply_fact(fact, evidence, prov, sink)
                        if item_id is not None:
                            report.consolidation_facts.append(item_id)
                except ExtractionError as exc:
                    report.errors.append(f"consolidation of {ref or conv_id}: {exc}")
                    self.usage = self.usage + exc.usage
            summary, _ = self._scrub(summary)
            self.store.mark_consolidated(conv_id, summary)
            report.consolidated.append(conv_id)
            report.rejected += sink.rejected

    def prune(self, report: UpkeepReport) -> None:
        """Delete low-confidence items nobody has used for a long time."""
        cutoff = to_ts(self.store.clock.now() - self.config.prune_after)
        rows = self.store.db.execute(
            "SELECT id FROM knowledge_items WHERE superseded_by IS NULL AND valid_to IS NULL AND confidence < ? "
            "AND COALESCE(last_used_at, updated_at) < ? ORDER BY id",
            (self.config.prune_below_confidence, cutoff),
        ).fetchall()
        ids = [int(r[0]) for r in rows]
        self.store.delete_items(ids)
        report.pruned += ids


def _extractive_summary(user_text: str, limit: int = 3) -> str:
    """Without a model: the first few things the user said."""
    return " ".join(split_sentences(user_text)[:limit])
