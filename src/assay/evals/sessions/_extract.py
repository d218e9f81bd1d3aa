"""Picky extraction: which user messages of a session are requests worth replaying, and why.

Each user message on the conversation's chain starts an exchange, unless it is not the user asking:
a tool result, an interruption marker, a compaction summary or a caveat (``isMeta``). An exchange is
dropped, with its reason, when its message is a hook's feedback, a task notification, a slash-command echo,
an image attachment, a pasted dump or a bare acknowledgement; when the user interrupted it; or when the
assistant never answered it in text. The reference is the assistant's last text in the exchange. A
follow-up ("do the same for the other one") carries the exchange before it (and that one's own context) as
context, replayed as its own turn first. A subagent's file is dropped whole: its work is part of the answer
to the parent's request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assay.evals.sessions._records import INTERRUPTED, Entry, SessionFile

__all__ = ["Dropped", "Exchange", "Extraction", "extract"]

#: a pasted dump: this many lines, or characters, most of them not prose
DUMP_LINES = 30
DUMP_CHARS = 4000
ACKS = {
    "ok", "okay", "k", "thanks", "thank you", "thx", "ty", "cool", "great", "nice", "perfect", "yes", "yep",
    "yeah", "no", "nope", "sure", "go ahead", "go on", "continue", "proceed", "lgtm", "sounds good", "done",
    "got it", "awesome", "good", "looks good", "great thanks", "ok thanks", "thanks!", "do it",
}  # fmt: skip
_ECHO = ("<command-name>", "<command-message>", "<command-args>")
#: what Codex CLI puts in a user message of its own (the environment, AGENTS.md)
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
#: what a slash command printed: part of the command's echo, not a message of its own
_COMMAND_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>")
_HOOK = re.compile(r"^\s*(<user-prompt-submit-hook>|\w+ hook (feedback|error)|<hook[-_])", re.IGNORECASE)
_NOTIFICATION = re.compile(r"^\s*<(task-notification|bash-notification|system-reminder)>", re.IGNORECASE)
_FOLLOW_UP = re.compile(
    r"^\W*(and |also |now |ok,? |then |great,? )?(do (the same|that|it|this|so)|same (for|with|thing)|"
    r"the same|what about|how about|and (which|what|where|why|how)|which one|again\b|now (for|do))|"
    r"\b(the same (for|with|to)|the other one|as well\b|likewise|same thing)\b",
    re.IGNORECASE,
)
#: dropped messages that do not change what a follow-up after them refers to
_TRANSPARENT = {"bare acknowledgement", "slash-command echo"}
_NOT_PROSE = re.compile(
    r"^\s*(\S+:\d+|\d{4}-\d\d-\d\d|\[?\d\d:\d\d|at |File \"|Traceback|[{}\[\]<>#$|]|\w+\(|\s{4})"
)


@dataclass
class Exchange:
    """A request kept for replay: the user's message, the reference answer and what led to them."""

    index: int
    prompt: str
    reference: str
    tools: list[str]
    timestamp: str
    context: list[tuple[str, str]] = field(default_factory=list)
    follow_up: bool = False
    kept_because: str = ""


@dataclass
class Dropped:
    index: int | None
    reason: str
    excerpt: str = ""


@dataclass
class Extraction:
    session: SessionFile
    kept: list[Exchange] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)


def _excerpt(text: str, n: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def drop_reason(entry: Entry) -> str | None:
    """Why a user's message is not a request to replay (None: it is one)."""
    text = entry.text
    if text.startswith(_INJECTED):
        return "environment context (injected by the client)"
    if text.startswith(_ECHO):
        return "slash-command echo"
    if _HOOK.search(text):
        return "hook feedback"
    if _NOTIFICATION.search(text):
        return "task notification"
    if entry.images:
        return "image attachment (the replay cannot show the image)"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) >= DUMP_LINES or len(text) >= DUMP_CHARS:
        dumped = sum(bool(_NOT_PROSE.match(ln)) for ln in lines)
        if dumped * 2 >= len(lines) or len(text) >= 2 * DUMP_CHARS:
            return f"pasted dump ({len(lines)} lines, {len(text)} characters)"
    if re.sub(r"[^\w\s!]", "", text.lower()).strip().rstrip("!") in ACKS:
        return "bare acknowledgement"
    if not text.strip():
        return "no text"
    return None


@dataclass
class _Open:
    index: int
    entry: Entry
    reason: str | None
    answer: str = ""
    tools: list[str] = field(default_factory=list)
    interrupted: bool = False


def _close(ex: _Open, out: Extraction, previous: Exchange | None) -> Exchange | None:
    """File the exchange as kept or dropped; the kept one (for a follow-up's context), else None."""
    reason = ex.reason
    if reason is None and ex.interrupted:
        reason = "interrupted by the user (its answer is unfinished)"
    if reason is None and not ex.answer.strip():
        reason = "no final answer in text"
    follow = bool(_FOLLOW_UP.search(ex.entry.text))
    if reason is None and follow and previous is None:
        reason = "a follow-up of nothing kept (the exchange it refers to was dropped)"
    if reason is not None:
        out.dropped.append(Dropped(ex.index, reason, _excerpt(ex.entry.text)))
        return None
    used = f" after {len(ex.tools)} tool call(s): {', '.join(dict.fromkeys(ex.tools))}" if ex.tools else ""
    why = f"a request answered in text{used}"
    context: list[tuple[str, str]] = []
    if follow and previous is not None:
        context = [*previous.context, (previous.prompt, previous.reference)]
        why += f"; a follow-up of exchange {previous.index}, replayed after it"
    kept = Exchange(
        index=ex.index,
        prompt=ex.entry.text,
        reference=ex.answer.strip(),
        tools=ex.tools,
        timestamp=ex.entry.timestamp,
        context=context,
        follow_up=bool(context),
        kept_because=why,
    )
    out.kept.append(kept)
    return kept


def extract(session: SessionFile) -> Extraction:
    """The requests of ``session`` worth replaying, and every one that is not, with its reason."""
    out = Extraction(session=session)
    if session.subagent:
        out.dropped.append(Dropped(None, "a subagent's transcript: its work is part of the parent's answer"))
        return out
    current: _Open | None = None
    previous: Exchange | None = None
    n = 0
    for entry in session.entries:
        if entry.sidechain:
            out.dropped.append(Dropped(None, "sidechain record (a subagent's)", _excerpt(entry.text)))
            continue
        if entry.role == "assistant":
            if current is not None:
                current.tools += entry.tool_uses
                if entry.text:
                    current.answer = entry.text
            continue
        if entry.role != "user":
            continue  # system records: compaction boundaries, local command output
        if entry.tool_results:
            continue  # a tool's result, part of the exchange it belongs to
        if entry.text.startswith(INTERRUPTED):
            if current is not None:
                current.interrupted = True
            continue
        if entry.compact_summary:
            out.dropped.append(Dropped(None, "compaction summary (written by the agent, not the user)"))
            continue
        if entry.text.startswith(_COMMAND_OUTPUT):
            out.dropped.append(Dropped(None, "slash-command output", _excerpt(entry.text)))
            continue
        if entry.meta:
            out.dropped.append(Dropped(None, "meta message (a caveat the client adds)", _excerpt(entry.text)))
            continue
        if current is not None:
            kept = _close(current, out, previous)
            if kept is not None or current.reason not in _TRANSPARENT:
                previous = kept
        n += 1
        current = _Open(index=n, entry=entry, reason=drop_reason(entry))
    if current is not None:
        _close(current, out, previous)
    out.dropped.sort(key=lambda d: (d.index is None, d.index or 0))
    return out
