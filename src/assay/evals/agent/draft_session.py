"""Reading a session for a draft: what the user asked, turn by turn, and which tools the agent called.

Every format is read by the parser the agents layer already has; this module only finds which one a file is
and cuts the parsed transcript into user turns:

* ``claude-code``: Claude Code's stream-json (``claude -p --output-format stream-json``; with
  ``--input-format stream-json --replay-user-messages`` its user turns are in it) or its session file, of
  which only the conversation's final chain is read (eval sessions' rule: a rewound branch is not drafted);
* ``codex-json``: ``codex exec --json`` events; ``mini-swe-agent``: its trajectory JSON; ``aider-history``:
  aider's chat history markdown;
* ``agent-record``: an :class:`~assay.agents.AgentResult` (``assay agent run --save FILE``);
* ``run``: an ``assay eval agent`` run (its folder or ``results.jsonl``): one scenario attempt's conversation.

A file none of these read, malformed JSON (named by line) or a session without a user turn is a ConfigError.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.agents import AgentResult, ToolCallRecord, TranscriptEntry
from assay.errors import ConfigError
from assay.evals._jsonl import json_objects

__all__ = ["FORMATS", "Session", "SessionTurn", "detect_format", "read_session"]

FORMATS = ("claude-code", "codex-json", "mini-swe-agent", "aider-history", "agent-record", "run")
_CLAUDE_EVENTS = {"system", "assistant", "user", "result", "summary", "file-history-snapshot"}
_CODEX_EVENTS = {"thread.started", "turn.started", "turn.completed", "turn.failed", "error"}


@dataclass
class SessionTurn:
    """One user turn: the message, what the agent answered last, and the objective where the record has one."""

    user: str
    answer: str = ""
    objective: str | None = None


@dataclass
class Session:
    format: str
    turns: list[SessionTurn]
    #: every tool call of the session, in order
    tool_record: list[ToolCallRecord] = field(default_factory=list)
    #: folders the agent worked in (scrubbed to the fixture workdir)
    workdirs: list[str] = field(default_factory=list)
    session_id: str | None = None
    #: the scenario or case the session came from (a run), for the source link
    case_id: str | None = None


def _jsonl(path: Path, text: str) -> list[dict[str, Any]]:
    return json_objects(path, text, "transcript")


def detect_format(path: Path) -> str:
    """Which of :data:`FORMATS` ``path`` is (a run folder, aider markdown, one JSON object, or JSONL)."""
    if path.is_dir():
        if (path / "results.jsonl").is_file():
            return "run"
        raise ConfigError(
            "a folder given as a session must be a run directory (results.jsonl)", path=str(path)
        )
    text = _read(path)
    if path.suffix == ".md" or text.lstrip().startswith("# aider chat started"):
        return "aider-history"
    stripped = text.strip()
    if not stripped:
        raise ConfigError("empty file: not a transcript", path=str(path))
    if stripped.startswith("{") and "\n{" not in stripped:  # one JSON object (perhaps over many lines)
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"malformed JSON ({exc.msg})", path=str(path), line=exc.lineno) from exc
        data = data if isinstance(data, dict) else {}
        if "harness" in data and ("transcript" in data or "tool_record" in data):
            return "agent-record"
        if isinstance(data.get("messages"), list):
            return "mini-swe-agent"
        if "type" not in data and "case_id" not in data:  # else: JSONL of one line
            raise ConfigError(
                "not a transcript: one JSON object that is neither an agent record (assay agent run --save) "
                "nor a mini-swe-agent trajectory",
                path=str(path),
                line=1,
            )
    events = _jsonl(path, text)
    for event in events:  # the first event a format owns (a session file opens with its own bookkeeping)
        kind = str(event.get("type", ""))
        if "case_id" in event and "status" in event:
            return "run"
        if kind in _CLAUDE_EVENTS:
            return "claude-code"
        if kind in _CODEX_EVENTS or kind.startswith("item."):
            return "codex-json"
    kind = str(events[0].get("type", ""))
    raise ConfigError(
        f"not a transcript this reads (first event type {kind or 'missing'!r}; formats: {', '.join(FORMATS)})",
        path=str(path),
        line=1,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read the session: {exc.strerror or exc}", path=str(path)) from exc


def _turns(transcript: Sequence[TranscriptEntry]) -> list[SessionTurn]:
    """Cut a transcript at each user message; a turn's answer is the agent's last text before the next one."""
    turns: list[SessionTurn] = []
    for entry in transcript:
        if entry.role == "user" and entry.content.strip():
            turns.append(SessionTurn(user=entry.content.strip()))
        elif entry.role == "assistant" and entry.content.strip() and turns:
            turns[-1].answer = entry.content.strip()
    return turns


def _claude_code(path: Path, text: str) -> Session:
    from assay.agents import final_chain, is_claude_session_file
    from assay.agents.claude_code import parse_stream

    events = _jsonl(path, text)
    lines = text.splitlines()
    if is_claude_session_file(events):  # the conversation's final chain, as eval sessions reads it
        chain, _ = final_chain(events)
        events = [e for e in chain if not e.get("isSidechain")]
        lines = [json.dumps(e) for e in events]
    cwd = next((str(e["cwd"]) for e in events if isinstance(e.get("cwd"), str)), None)
    workdir = Path(cwd) if cwd else path.parent
    parsed = parse_stream(lines, workdir)
    return Session(
        format="claude-code",
        turns=_turns(parsed.transcript),
        tool_record=parsed.tool_record,
        workdirs=[cwd] if cwd else [],
        session_id=parsed.session_id,
    )


def _with_parser(name: str, path: Path, text: str) -> Session:
    """The ``command`` harness's parsers read a run's stdout or a named file in its output folder."""
    from assay.agents.transcripts import TranscriptInput, get_parser

    with tempfile.TemporaryDirectory(prefix="assay-draft-") as tmp:
        out_dir = Path(tmp)
        stdout: list[str] = []
        if name == "codex-json":
            _jsonl(path, text)  # a malformed line is named, not skipped
            stdout = text.splitlines()
        else:
            shutil.copyfile(path, out_dir / ("trajectory.json" if name == "mini-swe-agent" else "history.md"))
        inp = TranscriptInput(
            stdout=stdout, stderr="", workdir=out_dir, output_dir=out_dir, exit_code=0, started_at=0.0
        )
        parsed = get_parser(name)(inp)
    if parsed.error and not parsed.transcript:
        raise ConfigError(f"not a {name} transcript: {parsed.error}", path=str(path))
    return Session(
        format=name,
        turns=_turns(parsed.transcript),
        tool_record=parsed.tool_record,
        session_id=parsed.session_id,
    )


def _agent_record(path: Path, text: str) -> Session:
    try:
        result = AgentResult.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"not an agent record: {where}: {first['msg']}", path=str(path)) from exc
    return Session(
        format="agent-record",
        turns=_turns(result.transcript),
        tool_record=result.tool_record,
        session_id=result.session_id,
    )


def _run(path: Path, case: str | None) -> Session:
    from assay.evals.agent._record import ScenarioRecord
    from assay.runs import latest_attempts, read_journal

    journal = path / "results.jsonl" if path.is_dir() else path
    _jsonl(journal, _read(journal))
    attempts = [a for a in latest_attempts(read_journal(journal)).values() if (a.details or {}).get("turns")]
    if not attempts:
        raise ConfigError(
            "the run holds no scenario conversation (an `assay eval agent` run)", path=str(journal)
        )
    cases = sorted({a.case_id for a in attempts})
    if case is None and len(cases) > 1:
        raise ConfigError(f"the run has {len(cases)} scenarios; name one with --case ({', '.join(cases)})")
    chosen = case or cases[0]
    if chosen not in cases:
        raise ConfigError(f"--case {chosen!r}: not in the run ({', '.join(cases)})", path=str(journal))
    attempt = min((a for a in attempts if a.case_id == chosen), key=lambda a: a.iteration)
    record = ScenarioRecord.model_validate(attempt.details)
    turns = []
    for t in record.turns:
        users = [m.text for m in t.messages if m.role == "user" and m.text.strip()]
        if users:
            turns.append(
                SessionTurn(user=users[0].strip(), answer=(t.answers or [""])[-1], objective=t.objective)
            )
    calls = [c for t in record.turns for c in t.tool_calls]
    return Session(format="run", turns=turns, tool_record=calls, case_id=chosen)


def read_session(path: Path, *, fmt: str = "auto", case: str | None = None) -> Session:
    """Read ``path`` (format ``fmt``, or found out) into its user turns and tool calls."""
    path = Path(path)
    if not path.exists():
        raise ConfigError("--from-session: no such file", path=str(path))
    if fmt != "auto" and fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: one of auto, {', '.join(FORMATS)}")
    fmt = detect_format(path) if fmt == "auto" else fmt
    if case is not None and fmt != "run":
        raise ConfigError(f"--case picks a scenario of a run; {path} is a {fmt} transcript")
    if fmt == "run":
        session = _run(path, case)
    else:
        text = _read(path)
        if fmt == "claude-code":
            session = _claude_code(path, text)
        elif fmt == "agent-record":
            session = _agent_record(path, text)
        else:
            session = _with_parser(fmt, path, text)
    if not session.turns:
        hint = " (codex exec --json does not echo the prompt)" if fmt == "codex-json" else ""
        hint = (
            " (claude -p writes the user's turns only with --input-format stream-json --replay-user-messages)"
            if fmt == "claude-code"
            else hint
        )
        raise ConfigError(f"the {fmt} transcript has no user turn to draft from{hint}", path=str(path))
    return session
