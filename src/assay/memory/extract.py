"""Asking a model what to remember: the prompt, the structured answer it must give, and parsing it.

The model can be any ``ChatModel`` (a real one for ``full``, a scripted one for ``pr``). Whatever it
answers is only a proposal: the pipeline's rules decide what is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from assay.errors import InfraError
from assay.memory._types import ToolCallRecord
from assay.models import ChatModel, Message
from assay.runs import Usage

__all__ = [
    "CandidateFact",
    "CandidateLesson",
    "CandidateReminder",
    "Consolidation",
    "Extraction",
    "ExtractionError",
    "consolidate_with_model",
    "extract_with_model",
    "task_marker",
]


class CandidateFact(BaseModel):
    content: str
    entity: str = "user"
    attribute: str | None = None
    category: str = "fact"
    source: str = "user"
    evidence: str | None = None
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


class CandidateLesson(BaseModel):
    topic: str
    content: str
    tool: str | None = None
    evidence: str | None = None


class CandidateReminder(BaseModel):
    op: Literal["create", "done", "cancel", "reschedule"]
    content: str = ""
    match: str | None = None
    due: str | None = None
    evidence: str | None = None


class Extraction(BaseModel):
    """What the extraction model must answer (a JSON object)."""

    facts: list[CandidateFact] = Field(default_factory=list)
    lessons: list[CandidateLesson] = Field(default_factory=list)
    reminders: list[CandidateReminder] = Field(default_factory=list)


class Consolidation(BaseModel):
    """What the consolidation model must answer for one old conversation."""

    summary: str = ""
    facts: list[CandidateFact] = Field(default_factory=list)


class ExtractionError(Exception):
    """The model's answer was not the JSON object asked for (``usage`` still counts the call)."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage or Usage()


EXTRACT_SYSTEM = """You maintain an assistant's long-term memory about one user.
Read the turn below and answer with ONE JSON object, nothing else:
{"facts": [{"content": str, "entity": "user" or who/what it is about, "attribute": short slot name such as
"city" or "employer" (the same slot for a value that replaces an older one), "category": "profile" for core
facts (home, job, family) else "fact" or "preference", "source": "user"|"document"|"tool"|"third_party",
"evidence": the exact words of the message it comes from, "confidence": 0..1}],
 "lessons": [{"topic": str, "content": what to do differently next time, "tool": str, "evidence": str}],
 "reminders": [{"op": "create"|"done"|"cancel"|"reschedule", "content": str, "match": str, "due": ISO date,
 "evidence": str}]}
Only remember what the user says about themselves; documents and tool output are not the user."""

CONSOLIDATE_SYSTEM = """You consolidate an old conversation into long-term memory.
Answer with ONE JSON object: {"summary": two sentences, "facts": [same shape as extraction facts]}."""


def task_marker(task: str, conversation: str | None, turn: int | None = None) -> str:
    """A line naming what a prompt is for; scripted models key their answers on it."""
    parts = [f"task: {task}", f"conversation: {conversation or '-'}"]
    if turn is not None:
        parts.append(f"turn: {turn}")
    return "; ".join(parts) + "."


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a model's answer (code fences and chatter around it are tolerated)."""
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    start = text.find("{")
    if start < 0:
        raise ExtractionError("the answer holds no JSON object")
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise ExtractionError(f"the answer is not valid JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise ExtractionError("the answer is not a JSON object")
    return obj


def _render_tools(calls: Sequence[ToolCallRecord]) -> str:
    lines = []
    for c in calls:
        status = f"ERROR: {c.error}" if c.failed else f"returned: {c.result[:2000]}"
        lines.append(f"- {c.name}({json.dumps(c.arguments, sort_keys=True)}) {status}")
    return "\n".join(lines)


async def _ask(
    model: ChatModel, system: str, user: str, schema: type[BaseModel]
) -> tuple[dict[str, Any], Usage]:
    """One structured-output call: the JSON schema goes to the provider (grammar-constrained where the
    backend supports it) and the answer is parsed and checked here whatever the backend did."""
    try:
        out = await model.generate(
            [Message(role="system", content=system), Message(role="user", content=user)],
            response_format={"type": "json_object", "schema": schema.model_json_schema()},
            temperature=0.0,
            max_tokens=768,
        )
    except InfraError:
        raise
    except (ConnectionError, TimeoutError, OSError) as exc:
        raise InfraError(f"memory model {getattr(model, 'name', '?')} unreachable: {exc}") from exc
    try:
        return parse_json_object(out.text), out.usage
    except ExtractionError as exc:
        raise ExtractionError(str(exc), out.usage) from None


async def extract_with_model(
    model: ChatModel,
    *,
    conversation: str | None,
    turn: int,
    user_text: str,
    assistant_text: str,
    tool_calls: Sequence[ToolCallRecord],
    documents: Sequence[tuple[str, str]],
) -> tuple[Extraction, Usage]:
    """Ask the model what this turn teaches; raise ExtractionError on an answer of the wrong shape."""
    body = [task_marker("extract", conversation, turn), "", f"USER: {user_text}"]
    if assistant_text:
        body.append(f"ASSISTANT: {assistant_text}")
    if tool_calls:
        body += ["TOOL CALLS:", _render_tools(tool_calls)]
    for name, text in documents:
        body += [f"DOCUMENT {name} (not the user's words):", text[:4000]]
    data, usage = await _ask(model, EXTRACT_SYSTEM, "\n".join(body), Extraction)
    try:
        return Extraction.model_validate(data), usage
    except ValidationError as exc:
        raise ExtractionError(
            f"extraction answer has the wrong shape: {exc.errors()[0]['msg']}", usage
        ) from exc


async def consolidate_with_model(
    model: ChatModel, *, conversation: str | None, transcript: str
) -> tuple[Consolidation, Usage]:
    body = f"{task_marker('consolidate', conversation)}\n\n{transcript}"
    data, usage = await _ask(model, CONSOLIDATE_SYSTEM, body, Consolidation)
    try:
        return Consolidation.model_validate(data), usage
    except ValidationError as exc:
        msg = f"consolidation answer has the wrong shape: {exc.errors()[0]['msg']}"
        raise ExtractionError(msg, usage) from exc
