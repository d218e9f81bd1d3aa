"""Session files read into one shape: the records of the conversation's final chain, oldest first.

Claude Code (``~/.claude/projects/<slug>/<session>.jsonl``): every line is a record; ``user`` and ``assistant``
records carry a ``message`` whose content is a string or blocks (``text``, ``tool_use``, ``tool_result``,
``thinking``, ``image``) and a ``uuid`` with its ``parentUuid``. The conversation is the chain from the last
record back to the root; a compaction starts a record with no parent whose ``logicalParentUuid`` continues
it. Records off that chain (a rewound or edited branch) and bookkeeping (``queue-operation``,
``file-history-snapshot``, ``progress``, ``last-prompt``, ``attachment``, ``summary``) are not conversation.
A subagent's own file (``<session>/subagents/agent-*.jsonl``) and records marked ``isSidechain`` are the
subagent's side of a tool call, not the user's conversation.

Codex CLI (``~/.codex/sessions/**/rollout-*.jsonl``): ``session_meta`` (cwd, git commit and branch), then
``response_item`` payloads (``message`` with ``input_text``/``output_text`` blocks, ``function_call``,
``function_call_output``, ``reasoning``) and ``event_msg`` payloads (``turn_aborted`` marks an interruption).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.agents import final_chain, is_claude_session_file
from assay.errors import ConfigError
from assay.evals._jsonl import json_objects

__all__ = ["Entry", "SessionFile", "final_chain", "is_claude_session_file", "read_session_file"]

BOOKKEEPING = {
    "queue-operation",
    "file-history-snapshot",
    "progress",
    "last-prompt",
    "attachment",
    "summary",
    "custom-title",
}
INTERRUPTED = "[Request interrupted by user"


@dataclass
class Entry:
    """One message of the conversation, reduced to what extraction reads."""

    role: str  # user | assistant | system
    text: str = ""
    tool_uses: list[str] = field(default_factory=list)
    tool_results: int = 0
    images: int = 0
    thinking: bool = False
    meta: bool = False
    compact_summary: bool = False
    sidechain: bool = False
    subtype: str = ""
    uuid: str = ""
    timestamp: str = ""


@dataclass
class SessionFile:
    path: Path
    format: str  # claude-code | codex
    session_id: str
    entries: list[Entry]
    cwd: str | None = None
    branch: str | None = None
    commit: str | None = None
    #: a subagent's own transcript (its records are the subagent's side of a tool call)
    subagent: bool = False
    #: records read but not part of the conversation, by why: bookkeeping, off the final chain, ...
    skipped: dict[str, int] = field(default_factory=dict)


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read the session: {exc.strerror or exc}", path=str(path)) from exc
    return json_objects(path, text, "session")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _entry(record: dict[str, Any]) -> Entry:
    message = record.get("message") if isinstance(record.get("message"), dict) else {}
    blocks = _blocks(message.get("content"))
    texts = [str(b.get("text") or "") for b in blocks if b.get("type") == "text"]
    return Entry(
        role=str(record.get("type")),
        text="\n".join(t for t in texts if t.strip()).strip(),
        tool_uses=[str(b.get("name")) for b in blocks if b.get("type") == "tool_use"],
        tool_results=sum(b.get("type") == "tool_result" for b in blocks),
        images=sum(b.get("type") == "image" for b in blocks),
        thinking=any(b.get("type") in ("thinking", "redacted_thinking") for b in blocks),
        meta=bool(record.get("isMeta")),
        compact_summary=bool(record.get("isCompactSummary")),
        sidechain=bool(record.get("isSidechain")),
        subtype=str(record.get("subtype") or ""),
        uuid=str(record.get("uuid") or ""),
        timestamp=str(record.get("timestamp") or ""),
    )


def _bump(counts: dict[str, int], why: str, n: int = 1) -> None:
    counts[why] = counts.get(why, 0) + n


def _claude(path: Path, records: list[dict[str, Any]]) -> SessionFile:
    chain, skipped = final_chain(records)
    for rec in chain:
        kind = str(rec.get("type", ""))
        if kind not in ("user", "assistant", "system"):
            _bump(skipped, f"bookkeeping ({kind or 'untyped'})")
    first = next((r for r in chain if r.get("cwd")), {})
    session_id = str(
        first.get("sessionId") or next((r.get("sessionId") for r in records if r.get("sessionId")), path.stem)
    )
    return SessionFile(
        path=path,
        format="claude-code",
        session_id=session_id,
        entries=[_entry(r) for r in chain if r.get("type") in ("user", "assistant", "system")],
        cwd=first.get("cwd"),
        branch=first.get("gitBranch"),
        subagent=path.parent.name == "subagents" or path.name.startswith("agent-"),
        skipped=skipped,
    )


def _codex(path: Path, records: list[dict[str, Any]]) -> SessionFile:
    meta: dict[str, Any] = {}
    entries: list[Entry] = []
    skipped: dict[str, int] = {}
    for rec in records:
        kind, payload = str(rec.get("type", "")), rec.get("payload") or {}
        stamp = str(rec.get("timestamp") or "")
        ptype = str(payload.get("type", ""))
        if kind == "session_meta":
            meta = payload
        elif kind == "response_item" and ptype == "message":
            blocks = [b for b in payload.get("content") or [] if isinstance(b, dict)]
            text = "\n".join(str(b.get("text") or "") for b in blocks if "text" in str(b.get("type")))
            images = sum("image" in str(b.get("type")) for b in blocks)
            role = str(payload.get("role"))
            if role in ("user", "assistant"):
                entries.append(Entry(role=role, text=text.strip(), images=images, timestamp=stamp))
            else:
                _bump(skipped, f"{role} message")
        elif kind == "response_item" and ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(payload.get("name") or ptype)
            if entries and entries[-1].role == "assistant" and not entries[-1].text:
                entries[-1].tool_uses.append(name)
            else:
                entries.append(Entry(role="assistant", tool_uses=[name], timestamp=stamp))
        elif kind == "response_item" and ptype.endswith("_output"):
            entries.append(Entry(role="user", tool_results=1, timestamp=stamp))
        elif kind == "response_item" and ptype == "reasoning":
            entries.append(Entry(role="assistant", thinking=True, timestamp=stamp))
        elif kind == "event_msg" and ptype == "turn_aborted":
            entries.append(Entry(role="user", text=f"{INTERRUPTED} ({payload.get('reason', 'aborted')})]"))
        else:
            _bump(skipped, f"bookkeeping ({kind}{'/' + ptype if ptype else ''})")
    git = meta.get("git") or {}
    return SessionFile(
        path=path,
        format="codex",
        session_id=str(meta.get("id") or path.stem),
        entries=entries,
        cwd=meta.get("cwd"),
        branch=git.get("branch"),
        commit=git.get("commit_hash"),
        skipped=skipped,
    )


def read_session_file(path: Path) -> SessionFile:
    """A Claude Code or Codex CLI session file (told apart by its records)."""
    records = _lines(path)
    if not records:
        raise ConfigError("empty session file", path=str(path))
    if any(r.get("type") == "session_meta" for r in records[:3]):
        return _codex(path, records)
    if any("uuid" in r or r.get("type") in BOOKKEEPING for r in records):
        return _claude(path, records)
    raise ConfigError(
        f"not a Claude Code or Codex session file (first record type {records[0].get('type')!r})",
        path=str(path),
        line=1,
    )
