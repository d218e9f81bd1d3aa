"""Play a scenario on a simulated clock against one real memory database, checking probes on the way."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from assay._util import ticking
from assay.embed import Embedder
from assay.evals.memory._scenario import Probe, Scenario
from assay.memory import ManualClock, Memory, ToolCallRecord, init_memory
from assay.models import ChatModel, Message
from assay.runs import Usage

__all__ = ["ProbeVerdict", "ScenarioRun", "check_probe", "simulate"]

ANSWER_SYSTEM = (
    "You are a helpful personal assistant. Use what you remember about the user. Answer briefly.\n\n"
)


@dataclass
class ProbeVerdict:
    probe_id: str
    kind: str
    passed: bool
    failures: list[str]
    at: datetime
    shown: str | None = None
    answer: str | None = None
    skipped: str | None = None


@dataclass
class ScenarioRun:
    scenario_id: str
    verdicts: dict[str, ProbeVerdict]
    upkeep_seconds: list[float] = field(default_factory=list)
    turn_seconds: list[float] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    extraction_errors: list[str] = field(default_factory=list)
    stored_items: int = 0
    usage: Usage = field(default_factory=Usage)


def _has(text: str, needle: str) -> bool:
    return needle.lower() in text.lower()


async def check_probe(memory: Memory, probe: Probe, answer_model: ChatModel | None) -> ProbeVerdict:
    """Evaluate one probe against the memory as it is now."""
    now = memory.store.clock.now()
    failures: list[str] = []
    verdict = ProbeVerdict(probe.id, probe.kind, False, failures, now)
    if probe.kind in ("shown_recall", "shown_clean", "answer"):
        await memory.upkeep()  # a fresh agent would run upkeep before its first turn
        shown = memory.context_for(probe.query, touch=False).text
        verdict.shown = shown
        if probe.kind == "shown_recall":
            failures += [f"not shown: {s!r}" for s in probe.expect if not _has(shown, s)]
        if probe.kind in ("shown_clean", "shown_recall"):
            failures += [f"shown but should not be: {s!r}" for s in probe.forbid if _has(shown, s)]
        if probe.kind == "answer":
            if answer_model is None:
                verdict.skipped = "answer accuracy needs a model (suite full)"
                return verdict
            out = await answer_model.generate(
                [
                    Message(role="system", content=ANSWER_SYSTEM + shown),
                    Message(role="user", content=probe.query),
                ]
            )
            verdict.answer = out.text
            memory.usage = memory.usage + out.usage
            if not any(_has(out.text, s) for s in probe.expect):
                failures.append(f"answer uses none of {probe.expect!r}")
            failures += [f"answer says {s!r}" for s in probe.forbid if _has(out.text, s)]
    else:
        current = [it.content for it in memory.store.current_items()]
        lessons = [ls.content for ls in memory.store.lessons()]
        failures += [
            f"no current item holds {s!r}" for s in probe.current if not any(_has(c, s) for c in current)
        ]
        failures += [
            f"a current item still holds {s!r}" for s in probe.not_current if any(_has(c, s) for c in current)
        ]
        for s in probe.absent:
            where = memory.store.holds(s)
            if where:
                failures.append(f"{s!r} is still in the store ({', '.join(where)})")
        failures += [
            f"no current lesson holds {s!r}" for s in probe.lessons if not any(_has(c, s) for c in lessons)
        ]
        for status, wanted in probe.reminders.items():
            have = [r.content for r in memory.store.reminders(status)]
            failures += [
                f"no {status} reminder holds {s!r}" for s in wanted if not any(_has(c, s) for c in have)
            ]
    verdict.passed = not failures
    return verdict


async def simulate(
    scenario: Scenario,
    db_path: Path,
    *,
    embedder: Embedder,
    model: ChatModel | None,
    answer_model: ChatModel | None = None,
) -> ScenarioRun:
    """Run every chat of ``scenario`` in order on a fresh database, probing after the chats they name."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    clock = ManualClock(scenario.chats[0].at)
    memory = init_memory(db_path, embedder=embedder, model=model, clock=clock)
    run = ScenarioRun(scenario.id, {})
    try:
        for chat_spec in ticking(scenario.chats, f"replaying {scenario.id}", "chats"):
            clock.set(max(chat_spec.at, clock.now()))
            for ref in chat_spec.reread:
                reread = await memory.reread(ref)
                run.rejected += [
                    {"chat": f"reread {ref}", "kind": r.kind, "content": r.content, "reason": r.reason}
                    for r in reread.rejected
                ]
            chat, report = await memory.start_chat(chat_spec.id)
            run.upkeep_seconds.append(report.seconds)
            run.rejected += [
                {"chat": chat_spec.id, "kind": r.kind, "content": r.content, "reason": r.reason}
                for r in report.rejected
            ]
            run.extraction_errors += report.errors
            for turn in chat_spec.turns:
                t0 = time.perf_counter()
                result = await memory.process_query(
                    chat,
                    turn.user,
                    assistant_text=turn.assistant,
                    tool_calls=[
                        ToolCallRecord(t.name, dict(_plain(t.args)), t.result, t.error) for t in turn.tools
                    ],
                    documents=[(d.name, d.text) for d in turn.documents],
                    memory_tools=[(m.name, dict(_plain(m.args))) for m in turn.memory_tools],
                )
                run.turn_seconds.append(time.perf_counter() - t0)
                run.rejected += [
                    {"chat": chat_spec.id, "kind": r.kind, "content": r.content, "reason": r.reason}
                    for r in result.rejected
                ]
                if result.extraction_error:
                    run.extraction_errors.append(f"{chat_spec.id}: {result.extraction_error}")
                clock.advance(timedelta(minutes=2))
            memory.end_chat(chat)
            for probe in scenario.probes_after(chat_spec.id):
                if probe.days:
                    clock.advance(timedelta(days=probe.days))
                run.verdicts[probe.id] = await check_probe(memory, probe, answer_model)
        run.stored_items = memory.store.count_items()
        run.usage = memory.usage
    finally:
        memory.store.close()
    return run


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "__line__"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
