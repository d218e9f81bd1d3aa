"""The ``claude-code`` harness: ``claude -p PROMPT --output-format stream-json --verbose``, parsed into the record.

Claude Code reaches its model only through ``route.anthropic_base_url`` (the gateway) with a dummy key, runs in
the workdir with a fresh HOME of its own (kept for the harness's life so ``--resume SESSION`` finds the session),
and is stopped as a process group at the wall clock, keeping every event read until then.

With ``RunSpec.fence`` it runs under bubblewrap (:mod:`assay.agents.fence`): the workdir, its HOME and its own
install bound, the gateway's port its only network.

The binary: ``$ASSAY_CLAUDE_BIN``, else the project-local npm prefix ``.cache/npm`` (what ``.ci/run`` installs),
else ``claude`` on PATH.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.agents._cliproc import OwnGateway, contain, held, relative_path, run_streaming, summarize
from assay.agents._env import run_env
from assay.agents._harness import Harness, RunSpec
from assay.agents._pidns import own_pids
from assay.agents.record import NOT_OFFERED, AgentResult, ToolCallRecord, ToolKind, TranscriptEntry
from assay.agents.world.kinds import WORLD_SERVER, world_tool, world_tool_kind
from assay.errors import ConfigError
from assay.runs import Usage

INSTALL_HINT = "npm install --prefix .cache/npm @anthropic-ai/claude-code"
#: Claude Code's tool names -> the record's kinds (anything else, Task, WebFetch, TodoWrite: "other")
TOOL_KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "Glob": "list",
    "LS": "list",
    "Grep": "search",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Write": "write",
    "Bash": "shell",
}
EDIT_TOOLS = {"Edit", "MultiEdit", "NotebookEdit", "Write"}
DEFAULT_ALLOWED_TOOLS = (
    "Bash",
    "Read",
    "Glob",
    "Grep",
    "LS",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "TodoWrite",
)
#: the name Claude Code asks its own gateway for: with a name it does not know, this version puts system-role
#: entries inside ``messages``; the gateway serves its upstream whatever the name
ASKED_MODEL = "claude-sonnet-4-5"
_EXIT_CODE = re.compile(r"^Exit code (\d+)")
#: Claude Code's answer to a call of a tool it does not have
_NO_SUCH_TOOL = "Error: No such tool available:"
_TRANSCRIPT_CAP = 4000


def npm_prefixes() -> list[Path]:
    """Where a project-local ``npm install --prefix`` may have put agents: under the cwd and the checkout."""
    return [Path.cwd() / ".cache" / "npm", Path(__file__).resolve().parents[3] / ".cache" / "npm"]


def find_claude(explicit: str | None = None) -> str:
    """The ``claude`` binary to run; ConfigError naming the install command when there is none."""
    env_bin = os.environ.get("ASSAY_CLAUDE_BIN")
    if env_bin:
        if not Path(env_bin).is_file():
            raise ConfigError(f"ASSAY_CLAUDE_BIN={env_bin!r}: no such file")
        return env_bin
    if explicit:
        if not Path(explicit).is_file():
            raise ConfigError(f"claude-code harness option claude_bin={explicit!r}: no such file")
        return explicit
    for prefix in npm_prefixes():
        candidate = prefix / "node_modules" / ".bin" / "claude"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("claude")
    if found:
        return found
    raise ConfigError(
        f"claude-code harness: no `claude` binary (install it: {INSTALL_HINT}, or set ASSAY_CLAUDE_BIN)"
    )


@dataclass
class ParsedStream:
    """What a stream-json run said, as far as it got."""

    tool_record: list[ToolCallRecord] = field(default_factory=list)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    answer: str = ""
    session_id: str | None = None
    model_ran: str | None = None
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    result: dict[str, Any] | None = None
    bad_lines: int = 0
    #: the MCP servers the init event reports: name -> status ("connected", "failed", "pending", ...)
    mcp_servers: dict[str, str] = field(default_factory=dict)
    #: how many of ``tool_record``'s calls came before the first answer ended: the first assistant message
    #: with text and no tool call (the model ended its turn), or the first successful result event; None: no
    #: answer
    answer_at: int | None = None
    #: message id -> [calls recorded before it, has text, has a tool call or stopped for one]
    messages: dict[str, list[Any]] = field(default_factory=dict)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return "" if content is None else json.dumps(content)


def _edited(name: str, args: dict[str, Any], workdir: Path) -> list[str]:
    path = args.get("file_path") or args.get("notebook_path")
    return [relative_path(str(path), workdir)] if name in EDIT_TOOLS and path else []


def _kind(name: str) -> ToolKind:
    """The record's kind of a Claude Code tool: its own tools', a world tool's served over MCP, else mcp/other."""
    if name in TOOL_KINDS:
        return TOOL_KINDS[name]
    tool = world_tool(name)
    if tool is not None:
        return world_tool_kind(tool)
    return "mcp" if name.startswith("mcp__") else "other"


def parse_stream(lines: list[str], workdir: Path, times: list[float] | None = None) -> ParsedStream:
    """Parse Claude Code's stream-json lines (``times[i]``: seconds since start when line i arrived)."""
    out = ParsedStream()
    pending: dict[str, ToolCallRecord] = {}
    message_usage: dict[str, dict[str, Any]] = {}
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            out.bad_lines += 1
            continue
        if not isinstance(event, dict):
            out.bad_lines += 1
            continue
        at = times[i] if times is not None and i < len(times) else None
        kind = event.get("type")
        out.session_id = event.get("session_id") or out.session_id
        if kind == "system" and event.get("subtype") == "init":
            out.model_ran = event.get("model") or out.model_ran
            for server in event.get("mcp_servers") or []:
                if isinstance(server, dict) and server.get("name"):
                    out.mcp_servers[str(server["name"])] = str(server.get("status", ""))
        elif kind == "assistant":
            _assistant(event.get("message") or {}, out, pending, message_usage, workdir, at)
        elif kind == "user":
            _user(event, out, pending, at)
        elif kind == "result":
            out.result = event
            answered = event.get("subtype") in (None, "success") and not event.get("is_error")
            if out.answer_at is None and answered:  # the turn ended here, if no message ended it before
                out.answer_at = _answer_end(out) if _answer_end(out) is not None else len(out.tool_record)
    if out.answer_at is None:
        out.answer_at = _answer_end(out)
    _finish_usage(out, message_usage)
    return out


def _answer_end(out: ParsedStream) -> int | None:
    """The calls before the first assistant message with text and no tool call (None: none yet)."""
    return next((calls for calls, text, tool in out.messages.values() if text and not tool), None)


def _assistant(
    message: dict[str, Any],
    out: ParsedStream,
    pending: dict[str, ToolCallRecord],
    message_usage: dict[str, dict[str, Any]],
    workdir: Path,
    at: float | None,
) -> None:
    # the model the server answered with is the one that ran (the init event only echoes what was asked)
    if message.get("model") and message.get("model") != "<synthetic>":
        out.model_ran = message["model"]
    msg_id = message.get("id") or f"anon-{len(message_usage)}"
    if msg_id not in message_usage:
        out.steps += 1
    seen = out.messages.setdefault(str(msg_id), [len(out.tool_record), False, False])
    seen[2] = seen[2] or message.get("stop_reason") == "tool_use"
    if isinstance(message.get("usage"), dict):
        message_usage[msg_id] = message["usage"]
    text_parts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            text_parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            name, args = str(block.get("name", "")), block.get("input") or {}
            kind = _kind(name)
            call = ToolCallRecord(
                name=name,
                kind=kind,
                arguments=args,
                started_s=at,
                edited_paths=_edited(name, args, workdir),
                command=str(args.get("command")) if kind == "shell" and "command" in args else None,
                status="pending",
            )
            pending[str(block.get("id"))] = call
            out.tool_record.append(call)
            calls.append(
                {
                    "id": block.get("id"),
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            )
    seen[1] = seen[1] or any(p.strip() for p in text_parts)
    seen[2] = seen[2] or bool(calls)
    if text_parts or calls:
        out.transcript.append(
            TranscriptEntry(role="assistant", content="\n".join(text_parts), tool_calls=calls)
        )
        if text_parts:
            out.answer = "\n".join(text_parts)


def _user(
    event: dict[str, Any], out: ParsedStream, pending: dict[str, ToolCallRecord], at: float | None
) -> None:
    content = (event.get("message") or {}).get("content")
    if isinstance(content, str):
        out.transcript.append(TranscriptEntry(role="user", content=content))
        return
    for block in content or []:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        call_id = str(block.get("tool_use_id"))
        text = _result_text(block.get("content"))
        out.transcript.append(
            TranscriptEntry(role="tool", content=text[:_TRANSCRIPT_CAP], tool_call_id=call_id)
        )
        call = pending.pop(call_id, None)
        if call is None:
            continue
        failed = bool(block.get("is_error"))
        call.status = "error" if failed else "ok"
        if failed and _NO_SUCH_TOOL in text:  # a tool it was not given: a try, not a use
            call.status = NOT_OFFERED
        call.result_summary = summarize(text)
        call.ended_s = at
        if failed and call.edited_paths:
            call.edited_paths = []  # a refused or failed edit changed nothing
        if call.kind == "shell":
            call.exit_code = _exit_code(text, failed, event.get("tool_use_result"))
            if isinstance(event.get("tool_use_result"), dict) and event["tool_use_result"].get(
                "returnCodeInterpretation"
            ):
                call.result_summary = summarize(
                    f"[{event['tool_use_result']['returnCodeInterpretation']}] {text}"
                )


def _exit_code(text: str, failed: bool, extra: Any) -> int | None:
    """Claude Code reports a non-zero exit as the error "Exit code N"; a non-zero exit it reads as benign
    (grep finding nothing) as a ``returnCodeInterpretation`` without the code (unknown: None); else it was 0."""
    match = _EXIT_CODE.match(text.strip())
    if match:
        return int(match.group(1))
    if failed or (
        isinstance(extra, dict) and (extra.get("returnCodeInterpretation") or extra.get("interrupted"))
    ):
        return None
    return 0


def _finish_usage(out: ParsedStream, message_usage: dict[str, dict[str, Any]]) -> None:
    res = out.result
    if res is not None and isinstance(res.get("usage"), dict):
        u = res["usage"]
        cost = res.get("total_cost_usd")
        out.usage = Usage(
            input_tokens=int(u.get("input_tokens") or 0),
            output_tokens=int(u.get("output_tokens") or 0),
            cache_read_tokens=int(u.get("cache_read_input_tokens") or 0),
            cache_write_tokens=int(u.get("cache_creation_input_tokens") or 0),
            calls=len(message_usage),
            cost_usd=float(cost) if cost is not None else None,
            cost_source="api_equivalent" if cost is not None else "harness_counts",
        )
        out.steps = int(res.get("num_turns") or out.steps)
        if isinstance(res.get("result"), str):
            out.answer = res["result"]
        return
    # cut off before the result event: count what the assistant messages reported; no cost is known
    total = Usage(cost_source="harness_counts" if message_usage else None)
    for u in message_usage.values():
        total.input_tokens += int(u.get("input_tokens") or 0)
        total.output_tokens += int(u.get("output_tokens") or 0)
        total.cache_read_tokens += int(u.get("cache_read_input_tokens") or 0)
        total.cache_write_tokens += int(u.get("cache_creation_input_tokens") or 0)
        total.calls += 1
    out.usage = total


def world_not_connected(parsed: ParsedStream) -> str | None:
    """Why the scenario's world was not given to the agent (its MCP server reported anything but connected),
    or None: a run without its tools measured another agent, so it is the run's error, never a tool-check FAIL."""
    status = parsed.mcp_servers.get(WORLD_SERVER)
    if status is None or status == "connected":
        return None
    return f"claude-code: the scenario's MCP server {WORLD_SERVER!r} did not connect ({status}): its tools were not offered"


def _is_infra(res: dict[str, Any]) -> bool:
    """An API failure behind the agent (down, overloaded, refusing the key, out of quota), not its own mistake
    (a 400 for a request it built badly)."""
    status = res.get("api_error_status")
    if isinstance(status, int):
        return status >= 500 or status in (401, 403, 429)
    return str(res.get("result", "")).startswith("API Error")


class ClaudeCodeHarness(Harness):
    """Claude Code in print mode. Options: ``claude_bin``, ``permission_mode`` (default ``acceptEdits``),
    ``allowed_tools`` (default: the file, search and shell tools), ``max_retries`` (of a failed API call;
    default 0: the gateway already answers an outage as one), ``extra_args``, ``model`` (an ``assay.models``
    spec: a run without a route gets a gateway of the harness's own in front of it)."""

    name = "claude-code"
    takes_world = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        known = {"claude_bin", "permission_mode", "allowed_tools", "max_retries", "extra_args", "model"}
        unknown = set(options) - known
        if unknown:
            raise ConfigError(
                f"claude-code harness: unknown option(s) {sorted(unknown)} (known: {sorted(known)})"
            )
        self._home: tempfile.TemporaryDirectory[str] | None = None
        self._runs = 0
        self._own_gateway = OwnGateway(str(options["model"])) if options.get("model") else None

    def argv(self, prompt: str, spec: RunSpec, binary: str, mcp_config: Path | None = None) -> list[str]:
        if spec.route is None or not spec.route.anthropic_base_url:
            raise ConfigError(
                "claude-code harness: the run has no route with an anthropic_base_url (the gateway); give --model"
            )
        argv = [binary, "-p", prompt, "--output-format", "stream-json", "--verbose"]
        argv += ["--model", spec.route.model]
        if spec.session_id:
            argv += ["--resume", spec.session_id]
        if spec.limits.max_steps is not None:
            argv += ["--max-turns", str(spec.limits.max_steps)]
        argv += ["--permission-mode", str(self.options.get("permission_mode", "acceptEdits"))]
        tools = list(self.options.get("allowed_tools", DEFAULT_ALLOWED_TOOLS))
        if mcp_config is not None:  # the scenario's world: every tool of its server, allowed
            argv += ["--mcp-config", str(mcp_config), "--strict-mcp-config"]
            tools.append(f"mcp__{WORLD_SERVER}")
        if tools:
            argv += ["--allowedTools", " ".join(tools)]
        return argv + [str(a) for a in self.options.get("extra_args", ())]

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        if spec.route is None and self._own_gateway is not None:
            spec = dataclasses.replace(spec, route=self._own_gateway.route(ask=ASKED_MODEL))
        binary = find_claude(self.options.get("claude_bin"))
        if spec.fence:  # inside, the binary is seen at its real path, its own folder bound read-only
            binary = str(Path(binary).resolve())
        if not spec.workdir.is_dir():
            raise ConfigError(f"--workdir {spec.workdir}: not a directory")
        if self._home is None:
            self._home = tempfile.TemporaryDirectory(prefix="assay-claude-home-")
        config = None
        mcp_urls: list[str] = []
        if spec.world is not None:
            self._runs += 1
            config = spec.world.mcp_config(
                Path(self._home.name) / f".assay-mcp-{self._runs}.json", prompt=prompt
            )
            server = json.loads(config.read_text(encoding="utf-8"))["mcpServers"][WORLD_SERVER]
            if spec.fence and server.get("type") != "http":
                raise ConfigError("--fence: the scenario's tools are served inside the fence only over HTTP")
            mcp_urls = [server["url"]] if server.get("type") == "http" else []
        argv = self.argv(prompt, spec, binary, config)
        assert spec.route is not None and spec.route.anthropic_base_url
        retries = {"CLAUDE_CODE_MAX_RETRIES": str(int(self.options.get("max_retries", 0)))}
        env = run_env(spec, home=self._home.name, extra=retries)
        env |= {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
        if config is not None:  # the world's tools are there from the first turn (else: "still connecting")
            env["MCP_CONNECTION_NONBLOCKING"] = "false"
        if spec.fence:
            from assay.agents.fence import fence_argv

            argv = fence_argv(
                spec, argv, env=env, binds_ro=[Path(binary).parent], home=self._home.name, urls=mcp_urls
            )
        else:  # unfenced, the eval's processes (and their environ) stay out of sight
            argv = own_pids(held(argv, spec.limits, spec.workdir))
        started = time.monotonic()
        times: list[float] = []
        tokens = [0]
        max_tokens = spec.limits.max_tokens

        def on_line(line: str) -> bool:
            times.append(time.monotonic() - started)
            if max_tokens is None or '"usage"' not in line:
                return False
            try:
                usage = (json.loads(line).get("message") or {}).get("usage") or {}
            except (json.JSONDecodeError, AttributeError):
                return False
            tokens[0] += int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
            return tokens[0] > max_tokens

        proc = await run_streaming(
            argv,
            cwd=spec.workdir,
            env=env,
            wall_clock_s=spec.limits.wall_clock_s,
            on_line=on_line,
            limits=spec.limits,
        )
        parsed = parse_stream(proc.stdout_lines, spec.workdir, times)
        result = self._result(
            parsed, proc.exit_code, proc.elapsed_s, proc.timed_out, proc.stopped, proc.stderr
        )
        if config is not None and result.error is None and result.infra_error is None:
            result.error = world_not_connected(parsed)
        return contain(result, proc, spec.limits, fenced=spec.fence)

    def _result(
        self,
        p: ParsedStream,
        exit_code: int | None,
        elapsed: float,
        timed_out: bool,
        stopped: bool,
        stderr: str,
    ) -> AgentResult:
        result = AgentResult(
            harness=self.name,
            answer=p.answer,
            answer_at=p.answer_at,
            tool_record=p.tool_record,
            transcript=p.transcript,
            usage=p.usage,
            model_ran=p.model_ran,
            steps=p.steps,
            elapsed_s=elapsed,
            exit_code=exit_code,
            session_id=p.session_id,
        )
        for call in result.tool_record:
            if call.status == "pending":
                call.status = "error"
                call.result_summary = call.result_summary or "no result: the agent was stopped"
        res = p.result or {}
        if timed_out:
            result.cut_off = "wall_clock"
        elif stopped:
            result.cut_off = "tokens"
        elif res.get("subtype") == "error_max_turns":
            result.cut_off = "steps"
        elif res.get("is_error") and _is_infra(res):
            result.infra_error = (
                f"claude-code: the model endpoint failed: {summarize(str(res.get('result', '')), 500)}"
            )
        elif res.get("is_error"):
            result.error = f"claude-code: {res.get('subtype')}: {summarize(str(res.get('result', '')), 500)}"
        elif not res:
            tail = summarize(stderr.strip().splitlines()[-1] if stderr.strip() else "", 500)
            result.error = f"claude-code exited {exit_code} without a result event" + (
                f": {tail}" if tail else ""
            )
        return result

    async def close(self) -> None:
        if self._own_gateway is not None:
            self._own_gateway.close()
        if self._home is not None:
            self._home.cleanup()
            self._home = None
