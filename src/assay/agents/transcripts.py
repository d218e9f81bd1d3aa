"""Transcript parsers for the ``command`` harness: what a CLI agent left behind, read into the tool record.

A parser gets the run's stdout, its output folder (``{output_dir}`` in the template) and the workdir, and
returns what it could recover. Registered by name; the ``command`` harness names one (or a preset does).

Built in: ``mini-swe-agent`` (its trajectory JSON, ``-o {output_dir}/trajectory.json``), ``codex-json``
(Codex CLI's ``codex exec --json`` events on stdout) and ``aider-history`` (aider's chat history markdown,
``--chat-history-file {output_dir}/history.md``) and ``assay-world`` (the answer on stdout, the calls as the
scenario's world served them over MCP: for an agent whose only tools are the world's).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.agents._cliproc import relative_path, summarize
from assay.agents.record import CutOff, ToolCallRecord, ToolKind, TranscriptEntry
from assay.agents.scripted_agent import STEPS_CUT_OFF
from assay.agents.world import WORLD_LOG
from assay.agents.world.kinds import WORLD_SERVER, world_tool_kind
from assay.errors import ConfigError
from assay.runs import Usage


@dataclass
class TranscriptInput:
    stdout: list[str]
    stderr: str
    workdir: Path
    output_dir: Path
    exit_code: int | None
    #: wall-clock time (epoch seconds) the harness started the agent, to make log times relative
    started_at: float


@dataclass
class ParsedTranscript:
    answer: str = ""
    tool_record: list[ToolCallRecord] = field(default_factory=list)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model_ran: str | None = None
    steps: int = 0
    cut_off: CutOff | None = None
    #: the agent's own failure as its log tells it
    error: str | None = None
    #: the agent's conversation id, for the next turn
    session_id: str | None = None


TranscriptParser = Callable[[TranscriptInput], ParsedTranscript]
_PARSERS: dict[str, TranscriptParser] = {}


def register_parser(name: str, parser: TranscriptParser) -> None:
    _PARSERS[name] = parser


def get_parser(name: str) -> TranscriptParser:
    if name not in _PARSERS:
        raise ConfigError(f"command harness parser={name!r}: unknown (known: {', '.join(sorted(_PARSERS))})")
    return _PARSERS[name]


def parser_names() -> list[str]:
    return sorted(_PARSERS)


# -- mini-swe-agent ---------------------------------------------------------------------------------------------
MINI_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
#: mini-swe-agent's exit statuses that mean a limit stopped it
_MINI_LIMITS: dict[str, CutOff] = {"LimitsExceeded": "steps", "TimeoutError": "wall_clock"}


def _rel_time(ts: Any, started_at: float) -> float | None:
    return round(float(ts) - started_at, 3) if isinstance(ts, int | float) else None


def parse_mini_swe_agent(inp: TranscriptInput) -> ParsedTranscript:
    """mini-swe-agent's trajectory (format ``mini-swe-agent-1.x``): messages with the raw responses and outputs."""
    path = inp.output_dir / "trajectory.json"
    if not path.is_file():
        return ParsedTranscript(error=f"mini-swe-agent wrote no trajectory at {path.name}")
    try:
        data = json.loads(path.read_text())
        messages = list(data["messages"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        return ParsedTranscript(error=f"mini-swe-agent trajectory unreadable: {exc}")
    out = ParsedTranscript()
    pending: dict[str, ToolCallRecord] = {}
    last_time: float | None = None
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        role, extra = msg.get("role"), msg.get("extra") or {}
        content = msg.get("content")
        text = content if isinstance(content, str) and content != "None" else ""
        if role in ("system", "user"):
            if isinstance(extra.get("response"), dict):
                # a reply mini-swe-agent could not act on (no tool call): kept on the error message it sent back
                _count_response(extra["response"], out)
                reply = ((extra["response"].get("choices") or [{}])[0].get("message") or {}).get("content")
                out.transcript.append(TranscriptEntry(role="assistant", content=str(reply or "")))
            out.transcript.append(TranscriptEntry(role=role, content=text))
        elif role == "assistant":
            _mini_assistant(msg, extra, text, out, pending, inp.started_at, last_time)
        elif role == "tool":
            call = pending.pop(str(msg.get("tool_call_id")), None)
            out.transcript.append(
                TranscriptEntry(role="tool", content=text, tool_call_id=msg.get("tool_call_id"))
            )
            last_time = _rel_time(extra.get("timestamp"), inp.started_at)
            if call is not None:
                code = extra.get("returncode")
                call.exit_code = code if isinstance(code, int) and code >= 0 else None
                call.ended_s = last_time
                call.result_summary = summarize(str(extra.get("raw_output", text)))
                if extra.get("exception_info"):
                    call.result_summary = summarize(f"{extra['exception_info']}: {call.result_summary}")
                call.status = "ok" if call.name == "submit" or code == 0 else "error"
        elif role == "exit":
            status = extra.get("exit_status") or (data.get("info") or {}).get("exit_status")
            out.cut_off = _MINI_LIMITS.get(str(status))
            if status not in ("Submitted", None) and out.cut_off is None:
                out.error = f"mini-swe-agent exited: {status}"
            submission = extra.get("submission") or (data.get("info") or {}).get("submission")
            if submission:
                out.answer = str(submission)
    out.steps = sum(1 for e in out.transcript if e.role == "assistant")
    return out


def _count_response(response: dict[str, Any], out: ParsedTranscript) -> None:
    usage = response.get("usage") or {}
    if usage:
        out.usage.input_tokens += int(usage.get("prompt_tokens") or 0)
        out.usage.output_tokens += int(usage.get("completion_tokens") or 0)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        out.usage.cache_read_tokens += int(cached or 0)
        out.usage.calls += 1
        out.usage.cost_source = "harness_counts"
    out.model_ran = response.get("model") or out.model_ran


def _mini_assistant(
    msg: dict[str, Any],
    extra: dict[str, Any],
    text: str,
    out: ParsedTranscript,
    pending: dict[str, ToolCallRecord],
    started_at: float,
    last_time: float | None,
) -> None:
    _count_response(extra.get("response") or {}, out)
    calls = msg.get("tool_calls") or []
    out.transcript.append(TranscriptEntry(role="assistant", content=text, tool_calls=calls))
    if text:
        out.answer = text
    # mini-swe-agent stamps the reply only; a call starts when the previous output was returned
    started = _rel_time(extra.get("timestamp"), started_at) or last_time
    for call in calls:
        try:
            args = json.loads((call.get("function") or {}).get("arguments") or "{}")
        except json.JSONDecodeError:
            args = {"raw": (call.get("function") or {}).get("arguments")}
        command = str(args.get("command", ""))
        submit = command.strip().startswith("echo ") and command.strip().endswith(MINI_SUBMIT)
        record = ToolCallRecord(
            name="submit" if submit else str((call.get("function") or {}).get("name", "bash")),
            kind="other" if submit else "shell",
            arguments=args,
            command=command or None,
            started_s=started,
            status="error",
            result_summary="no output: the agent was stopped",
        )
        pending[str(call.get("id"))] = record
        out.tool_record.append(record)


register_parser("mini-swe-agent", parse_mini_swe_agent)


# -- Codex CLI ----------------------------------------------------------------------------------------------------
_CODEX_KINDS: dict[str, ToolKind] = {
    "command_execution": "shell",
    "file_change": "edit",
    "mcp_tool_call": "mcp",
    "web_search": "other",
}


def parse_codex_json(inp: TranscriptInput) -> ParsedTranscript:
    """``codex exec --json``: thread/turn/item events, one JSON object a line."""
    out = ParsedTranscript()
    calls: dict[str, ToolCallRecord] = {}
    for line in inp.stdout:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "thread.started":
            out.session_id = event.get("thread_id") or out.session_id
        elif kind == "turn.completed":
            _codex_usage(event.get("usage") or {}, out)
        elif kind == "turn.failed":
            out.error = f"codex: {(event.get('error') or {}).get('message', 'turn failed')}"
        elif kind == "error":
            out.error = f"codex: {event.get('message', 'error')}"
        elif kind in ("item.started", "item.updated", "item.completed") and isinstance(
            event.get("item"), dict
        ):
            _codex_item(event["item"], kind == "item.completed", out, calls, inp.workdir)
    out.steps = out.usage.calls
    return out


def _codex_usage(usage: dict[str, Any], out: ParsedTranscript) -> None:
    out.usage.input_tokens += int(usage.get("input_tokens") or 0)
    out.usage.output_tokens += int(usage.get("output_tokens") or 0)
    out.usage.cache_read_tokens += int(usage.get("cached_input_tokens") or 0)
    out.usage.cache_write_tokens += int(usage.get("cache_write_input_tokens") or 0)
    out.usage.calls += 1  # one turn: Codex reports its model calls summed per turn
    out.usage.cost_source = "harness_counts"


def _codex_item(
    item: dict[str, Any], done: bool, out: ParsedTranscript, calls: dict[str, ToolCallRecord], workdir: Path
) -> None:
    kind, item_id = str(item.get("type")), str(item.get("id"))
    if kind == "agent_message":
        if done:
            out.answer = str(item.get("text", ""))
            out.transcript.append(TranscriptEntry(role="assistant", content=out.answer))
        return
    if kind not in _CODEX_KINDS:
        return  # reasoning, todo lists, the CLI's own warnings
    call = calls.get(item_id)
    if call is None:
        call = ToolCallRecord(
            name=kind,
            kind=_CODEX_KINDS[kind],
            status="error",
            result_summary="no result: the agent was stopped",
        )
        calls[item_id] = call
        out.tool_record.append(call)
    if kind == "command_execution":
        call.command = str(item.get("command", ""))
        call.arguments = {"command": call.command}
        call.exit_code = item.get("exit_code") if isinstance(item.get("exit_code"), int) else None
    elif kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        call.arguments = {"changes": changes}
        call.edited_paths = [relative_path(str(c.get("path", "")), workdir) for c in changes if c.get("path")]
    elif kind == "mcp_tool_call":
        server, tool = str(item.get("server", "")), str(item.get("tool", ""))
        # a tool of the scenario's world is named as Claude Code names it, with its kind
        call.name = f"mcp__{server}__{tool}" if server == WORLD_SERVER else f"{server}.{tool}"
        call.kind = world_tool_kind(tool) if server == WORLD_SERVER else "mcp"
        call.arguments = item.get("arguments") if isinstance(item.get("arguments"), dict) else {}
    if done:
        status = str(item.get("status", "completed"))
        call.status = "ok" if status == "completed" else "error"
        output = item.get("aggregated_output") or item.get("result") or item.get("error") or ""
        call.result_summary = summarize(output if isinstance(output, str) else json.dumps(output))
        if call.status == "error" and kind == "file_change":
            call.edited_paths = []
        out.transcript.append(TranscriptEntry(role="tool", content=call.result_summary, tool_call_id=item_id))


register_parser("codex-json", parse_codex_json)


# -- aider ------------------------------------------------------------------------------------------------------
_AIDER_EDIT = re.compile(r"^Applied edit to (.+?)\s*$")
_AIDER_RUN = re.compile(r"^Running (.+?)\s*$")


def parse_aider_history(inp: TranscriptInput) -> ParsedTranscript:
    """aider's chat history: ``#### `` starts a user message, ``> `` lines are aider's own output (edits applied,
    commands run), the rest is the model's reply. It prints rounded token counts only: the gateway counts them."""
    path = inp.output_dir / "history.md"
    if not path.is_file():
        return ParsedTranscript(error=f"aider wrote no chat history at {path.name}")
    out = ParsedTranscript()
    reply: list[str] = []

    def end_reply() -> None:
        text = "\n".join(reply).strip()
        if text:
            out.transcript.append(TranscriptEntry(role="assistant", content=text))
            out.answer = text
            out.steps += 1
        reply.clear()

    started = False
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("#### "):
            end_reply()
            started = True
            out.transcript.append(TranscriptEntry(role="user", content=line[5:].strip()))
        elif line.startswith("> ") or line == ">":
            if not started:
                continue  # the banner before the first message
            end_reply()
            note = line[2:].strip()
            if m := _AIDER_EDIT.match(note):
                path_ = relative_path(m.group(1), inp.workdir)
                out.tool_record.append(
                    ToolCallRecord(
                        name="edit",
                        kind="edit",
                        arguments={"path": path_},
                        edited_paths=[path_],
                        result_summary=note,
                    )
                )
            elif m := _AIDER_RUN.match(note):
                out.tool_record.append(
                    ToolCallRecord(
                        name="shell", kind="shell", command=m.group(1), arguments={"command": m.group(1)}
                    )
                )
            elif (
                out.tool_record and out.tool_record[-1].kind == "shell" and note.startswith("Command exited")
            ):
                out.tool_record[-1].status = "error"
                out.tool_record[-1].result_summary = note
        elif started and not line.startswith("# aider chat started"):
            reply.append(line)
    end_reply()
    return out


register_parser("aider-history", parse_aider_history)


# -- the world's own log ----------------------------------------------------------------------------------------


def parse_assay_world(inp: TranscriptInput) -> ParsedTranscript:
    """The answer from stdout and the tool record from the world's log of the run (``{mcp_config}``'s server
    writes it): the whole record of an agent whose only tools are the world's."""
    out = ParsedTranscript(answer="\n".join(inp.stdout).strip())
    log = inp.output_dir / WORLD_LOG
    if log.is_file():
        for line in log.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.tool_record.append(ToolCallRecord.model_validate_json(line))
    if STEPS_CUT_OFF in inp.stderr:  # the scripted external agent says so when its step cap stopped it
        out.cut_off = "steps"
    return out


register_parser("assay-world", parse_assay_world)
