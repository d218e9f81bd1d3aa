"""The ``reference`` harness: assay's own tool-calling agent over any ``assay.models`` chat model.

    harness = ReferenceHarness(model="local/smollm2")
    result = await harness.run("Make the failing test pass", RunSpec(workdir=Path("work")))

The loop: one model call with the profile's tools, then each tool call it asked for, results appended, until the
model answers without a tool call or a limit (wall clock, steps, tokens) cuts it off; a cut-off run keeps all it
did. With ``RunSpec.route`` set the agent talks to the gateway (``openai-compat/{route.model}@{openai_base_url}``)
instead of its own model. A model outage is ``infra_error``, any other model failure ``error``; neither raises.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.agents._cliproc import held, summarize
from assay.agents._env import run_env
from assay.agents._harness import Harness, Route, RunSpec
from assay.agents._pidns import own_pids
from assay.agents._workdir import PathRefused, Workdir
from assay.agents.record import NOT_OFFERED, AgentResult, CutOff, ToolCallRecord, TranscriptEntry
from assay.agents.reference._mcp import McpHub, load_mcp_servers
from assay.agents.reference._profile import Profile, load_profile
from assay.agents.reference._search import CodeSearch
from assay.agents.reference._tools import TOOLS, ToolContext, ToolOutcome, ToolSpec, check_arguments
from assay.agents.reference.memory import MEMORY_TOOLS, MemoryAccess, MemoryTurn, open_memory
from assay.errors import ConfigError, InfraError
from assay.models import ChatModel, Message, Tool, ToolCall, Usage, get_model

__all__ = ["ReferenceHarness"]

#: the MCP server name the scenario's world (these tools, served by ``assay.agents.world``) goes by
WORLD_SERVER = "assay"
#: every tool the agent can run: its own and the memory store's
ALL_TOOLS: dict[str, ToolSpec] = {**TOOLS, **MEMORY_TOOLS}

#: characters of a tool's result kept in the record (the model sees up to ``output_cap``)
SUMMARY_CAP = 300
#: how long one model call through the gateway (loopback) may wait for its answer: longer than any run's wall
#: clock, which cuts a slow call off itself (the embedded model on a busy CPU takes minutes for one answer)
ROUTE_READ_TIMEOUT_S = 3600.0
#: how long past the run's deadline a tool may take to stop by itself before it is cancelled
TOOL_GRACE_S = 0.5


class ReferenceHarness(Harness):
    """assay's own agent. Options:

    ``model``            an ``assay.models`` spec (``local/smollm2``) or a ChatModel; unused when a route is given
    ``profile``          a profile folder (default: the built-in one)
    ``tools``            names of the profile's tools to offer (default: every tool the profile describes)
    ``model_args``       keyword options for ``get_model`` (``max_retries``, ``ctx_size``, ...)
    ``generate_options`` options of every model call (``temperature``, ``max_tokens``, ``tool_choice``)
    ``output_cap``       characters of a tool result the model is shown (8000)
    ``shell_timeout_s``, ``test_timeout_s``  caps of one command / one test run (60, 300)
    ``python``           the interpreter run_tests uses (default: this one)
    ``code_embedder``    the embedder of search_code's index (an ``assay.embed`` spec; default: assay's default)
    ``documents``        an ``assay.rag.DocumentIndex`` (or its saved folder) for query_documents, which is
                         offered only when there are documents
    ``memory``           a memory database file (``assay.memory``; created if missing) for the memory tools
                         (remember, recall_memory, forget, reminders, ...), which are offered only with it
    ``memory_embedder``  the embedder of that store (an ``assay.embed`` spec or Embedder; default: assay's)
    ``mcp_servers``      MCP servers ``{name: {command, args, env}}`` (default: the profile's ``mcp.json``); they
                         start on the first turn, their tools are offered as ``<server>__<tool>``, and they end
                         on :meth:`close`
    ``toolchain``        folders put first on PATH of the agent's commands (and bound read-only into the fence)

    The agent's commands get :func:`~assay.agents._env.agent_env` (no provider key, no host venv on PATH) with
    the workdir as cwd and HOME. With ``RunSpec.fence`` they run under bubblewrap (the file tools stay in this
    process, held to the workdir by :class:`~assay.agents._workdir.Workdir`); where bubblewrap cannot run, the
    run is refused with a ConfigError.
    """

    name = "reference"

    def __init__(
        self,
        *,
        model: str | ChatModel | None = None,
        profile: str | os.PathLike[str] | None = None,
        tools: list[str] | None = None,
        model_args: dict[str, Any] | None = None,
        generate_options: dict[str, Any] | None = None,
        output_cap: int = 8000,
        shell_timeout_s: float = 60.0,
        test_timeout_s: float = 300.0,
        python: str | None = None,
        toolchain: list[str | os.PathLike[str]] | None = None,
        code_embedder: Any = None,
        documents: Any = None,
        memory: str | os.PathLike[str] | None = None,
        memory_embedder: Any = None,
        mcp_servers: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        if options:
            raise ConfigError(f"reference harness: unknown option(s) {', '.join(sorted(options))}")
        self.model = model
        self.profile: Profile = load_profile(profile, set(ALL_TOOLS), tools)
        if documents is None and "query_documents" in self.profile.tools:
            if tools is not None:
                raise ConfigError(
                    "reference harness: the query_documents tool needs documents= (a document index)"
                )
            # a tool with nothing to search is not offered
            self.profile = replace(
                self.profile, tools={n: d for n, d in self.profile.tools.items() if n != "query_documents"}
            )
        if memory is None:
            asked = [n for n in self.profile.tools if n in MEMORY_TOOLS]
            if asked and tools is not None:
                raise ConfigError(f"reference harness: the {asked[0]} tool needs memory= (a memory database)")
            self.profile = replace(
                self.profile, tools={n: d for n, d in self.profile.tools.items() if n not in MEMORY_TOOLS}
            )
            if not self.profile.tools:
                raise ConfigError("reference harness: the profile offers only memory tools, and no memory=")
        elif isinstance(memory, bool) or not isinstance(memory, str | os.PathLike) or not str(memory):
            raise ConfigError(f"reference harness: memory= should be a file path, got {memory!r}")
        self.memory: MemoryAccess | None = None if memory is None else open_memory(memory, memory_embedder)
        if isinstance(documents, str | os.PathLike):
            from assay.rag import open_index

            documents = open_index(Path(documents))
        self.documents = documents
        self.model_args = dict(model_args or {})
        self.generate_options = dict(generate_options or {})
        self.output_cap = output_cap
        self.shell_timeout_s = shell_timeout_s
        self.test_timeout_s = test_timeout_s
        self.python = python or sys.executable
        self.toolchain = [Path(t) for t in toolchain or []]
        self.tools = [Tool(n, d, ALL_TOOLS[n].parameters) for n, d in self.profile.tools.items()]
        self._models: dict[str, ChatModel] = {}
        self.code_search = CodeSearch(code_embedder) if "search_code" in self.profile.tools else None
        self._sessions: dict[str, list[Message]] = {}
        servers = load_mcp_servers(self.profile.path, mcp_servers)
        self.mcp: McpHub | None = McpHub(servers) if servers else None
        self._mcp_listed = False

    # -- the model -----------------------------------------------------------------------------------------
    def _model_for(self, route: Route | None) -> ChatModel:
        if route is not None:
            if not route.openai_base_url:
                raise ConfigError(
                    "reference harness: the route has no openai_base_url (the gateway's /v1 URL)"
                )
            spec = f"openai-compat/{route.model}@{route.openai_base_url}"
        elif isinstance(self.model, str):
            spec = self.model
        elif self.model is not None:
            return self.model
        else:
            raise ConfigError("reference harness: no model (pass --model provider/model, e.g. local/smollm2)")
        if spec not in self._models:
            args = dict(self.model_args)
            if route is not None:  # the gateway retries its upstream; an outage it reports is final
                args.setdefault("max_retries", 0)
                # a slow answer is the run's wall clock to cut off (a limit, measured), never an outage
                args.setdefault("timeout_s", ROUTE_READ_TIMEOUT_S)
            self._models[spec] = get_model(spec, **args)
        return self._models[spec]

    def _fence(self, spec: RunSpec, workdir: Workdir) -> Callable[[list[str], dict[str, str]], list[str]]:
        from assay.agents.fence import fence_argv, require_fence

        require_fence()  # refused here, once, rather than on every command

        def wrap(argv: list[str], env: dict[str, str]) -> list[str]:
            # the commands need no network: the model is called from this process, not from inside
            return fence_argv(
                spec,
                argv,
                Route(model=""),
                env=env,
                toolchain=self.toolchain,
                home=workdir.root,
                report=False,
            )

        return wrap

    async def _start_mcp(self, workdir: Workdir) -> None:
        # the servers' tools are listed once, when the first turn starts, and offered from then on
        if self.mcp is None or self._mcp_listed:
            return
        listed = await self.mcp.start(workdir.root)
        self.tools += [Tool(t.name, t.description, t.parameters) for t in listed]
        self._mcp_listed = True

    async def close(self) -> None:
        if self.mcp is not None:
            self.tools = [t for t in self.tools if t.name not in self.mcp.tools]
            self._mcp_listed = False
            await self.mcp.close()
        if self.code_search is not None:
            self.code_search.close()
        for model in self._models.values():
            http = getattr(model, "http", None)
            if http is not None and hasattr(http, "aclose"):
                await http.aclose()
        self._models.clear()
        if self.memory is not None:
            self.memory.close()
            self.memory = None

    # -- one run or turn -----------------------------------------------------------------------------------
    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        t0 = time.monotonic()
        limits = spec.limits
        deadline = None if limits.wall_clock_s is None else t0 + limits.wall_clock_s
        workdir = Workdir(spec.workdir)
        model = self._model_for(spec.route)
        await self._start_mcp(workdir)
        session_id, messages = self._session(spec.session_id)
        messages.append(Message("user", prompt))
        ctx = self._context(spec, workdir, deadline, prompt, session_id)
        result = AgentResult(harness=self.name, session_id=session_id)
        usage = Usage()
        cut_off: CutOff | None = None
        while True:
            if limits.max_steps is not None and result.steps >= limits.max_steps:
                cut_off = "steps"
                break
            if limits.max_tokens is not None and usage.total_tokens >= limits.max_tokens:
                cut_off = "tokens"
                break
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                cut_off = "wall_clock"
                break
            try:
                out = await asyncio.wait_for(
                    model.generate(messages, tools=self.tools, **self.generate_options), timeout=remaining
                )
            except TimeoutError:
                cut_off = "wall_clock"
                break
            except InfraError as exc:
                result.infra_error = str(exc)
                break
            except Exception as exc:  # the model broke on this request: the agent's failure, recorded
                result.error = f"{type(exc).__name__}: {exc}"
                break
            result.steps += 1
            usage = usage + out.usage
            result.model_ran = out.model or result.model_ran
            messages.append(Message("assistant", out.text, tool_calls=list(out.tool_calls)))
            if not out.tool_calls:
                result.answer = out.text
                result.answer_at = len(result.tool_record)  # the loop ends at its first answer
                break
            if limits.max_tokens is not None and usage.total_tokens >= limits.max_tokens:
                self._not_run(messages, out.tool_calls, "the token budget ran out")
                cut_off = "tokens"
                break
            for i, call in enumerate(out.tool_calls):
                if deadline is not None and time.monotonic() >= deadline:
                    self._not_run(messages, out.tool_calls[i:], "the wall clock ran out")
                    break
                record, text = await self._call_tool(ctx, call, t0)
                result.tool_record.append(record)
                messages.append(Message("tool", text, tool_call_id=call.id, name=call.name))
        result.cut_off = cut_off
        if usage.total_tokens == 0:  # nothing counted: the cost is unknown, never $0
            usage = usage.model_copy(update={"cost_usd": None})
        result.usage = usage
        result.transcript = [_entry(m) for m in messages]
        result.elapsed_s = time.monotonic() - t0
        return result

    def _context(
        self, spec: RunSpec, workdir: Workdir, deadline: float | None, prompt: str, session_id: str
    ) -> ToolContext:
        return ToolContext(
            workdir=workdir,
            env=run_env(spec, toolchain=self.toolchain),
            deadline=deadline,
            output_cap=self.output_cap,
            shell_timeout_s=self.shell_timeout_s,
            test_timeout_s=self.test_timeout_s,
            python=self.python,
            wrap=self._fence(spec, workdir) if spec.fence else _own_pids(spec, workdir),
            code_search=self.code_search,
            documents=self.documents,
            memory=None if self.memory is None else MemoryTurn(self.memory, prompt, session_id),
        )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], spec: RunSpec, prompt: str = "", session_id: str = ""
    ) -> tuple[ToolCallRecord, str]:
        """Run one offered tool for a caller outside the agent's loop (the scenario's world served over MCP):
        its record and the text the caller is shown. ``prompt`` is the user's message a memory call is
        grounded in."""
        t0 = time.monotonic()
        ctx = self._context(spec, Workdir(spec.workdir), None, prompt, session_id)
        return await self._call_tool(ctx, ToolCall(id=uuid.uuid4().hex, name=name, arguments=arguments), t0)

    def has_session(self, session_id: str) -> bool:
        """Whether this harness holds the conversation ``session_id`` (a turn may continue it)."""
        return session_id in self._sessions

    def _session(self, session_id: str | None) -> tuple[str, list[Message]]:
        if session_id is None:
            new_id = uuid.uuid4().hex
            self._sessions[new_id] = [Message("system", self.profile.system_prompt())]
            return new_id, self._sessions[new_id]
        if session_id not in self._sessions:
            raise ConfigError(f"reference harness: no session {session_id!r} (sessions live in one harness)")
        return session_id, self._sessions[session_id]

    @staticmethod
    def _not_run(messages: list[Message], calls: list[ToolCall], why: str) -> None:
        # every tool call gets an answer, so the conversation stays valid for a next turn
        for call in calls:
            messages.append(Message("tool", f"not run: {why}", tool_call_id=call.id, name=call.name))

    async def _call_tool(self, ctx: ToolContext, call: ToolCall, t0: float) -> tuple[ToolCallRecord, str]:
        started = time.monotonic() - t0
        spec = ALL_TOOLS.get(call.name) if call.name in self.profile.tools else None
        if self.mcp is not None and call.name in self.mcp.tools:
            hub, name, arguments = self.mcp, call.name, dict(call.arguments)

            async def via_mcp(*_: Any, **__: Any) -> ToolOutcome:
                return await hub.call(name, arguments)

            tool = hub.tools[name]
            # a tool of the scenario's world served over MCP keeps its kind (documents, memory, shell, ...)
            own = ALL_TOOLS.get(tool.tool) if tool.server == WORLD_SERVER else None
            kind = own.kind if own is not None else "mcp"
            spec = ToolSpec(name, kind, tool.parameters, via_mcp)
        outcome: ToolOutcome
        if spec is None:
            offered = ", ".join(t.name for t in self.tools)
            outcome = ToolOutcome(f"unknown tool {call.name!r} (tools: {offered})", status=NOT_OFFERED)
        elif call.raw_arguments is not None:
            outcome = ToolOutcome(
                f"the arguments were not a JSON object: {call.raw_arguments[:200]!r}", status="error"
            )
        else:
            # commands stop themselves at the deadline (and say so); the grace lets them, in-process tools not
            left = None if ctx.deadline is None else max(0.0, ctx.deadline - time.monotonic()) + TOOL_GRACE_S
            try:
                # an MCP server checks its own arguments (its schemas go beyond check_arguments')
                over_mcp = self.mcp is not None and call.name in self.mcp.tools
                args = dict(call.arguments) if over_mcp else check_arguments(spec, call.arguments)
                outcome = await asyncio.wait_for(spec.fn(ctx, **args), timeout=left)
            except PathRefused as exc:
                outcome = ToolOutcome(str(exc), status=str(exc))
            except TimeoutError:  # the run's wall clock ran out inside the tool
                outcome = ToolOutcome("stopped: the wall clock ran out", status="timeout")
            except (ValueError, OSError) as exc:
                outcome = ToolOutcome(f"error: {exc}", status="error")
            except Exception as exc:  # a broken tool is the call's error, never the run's end
                outcome = ToolOutcome(f"error: {type(exc).__name__}: {exc}", status="error")
        record = ToolCallRecord(
            name=call.name,
            # a tool it was not given keeps its kind: a try of a forbidden kind is caught whatever was offered
            kind=spec.kind
            if spec is not None
            else ALL_TOOLS[call.name].kind
            if call.name in ALL_TOOLS
            else "other",
            arguments=dict(call.arguments),
            result_summary=_summary(outcome.summary if outcome.summary is not None else outcome.text),
            started_s=round(started, 6),
            ended_s=round(time.monotonic() - t0, 6),
            status=outcome.status,
            edited_paths=outcome.edited_paths,
            command=outcome.command,
            exit_code=outcome.exit_code,
            test_counts=outcome.test_counts,
        )
        return record, outcome.text


def _own_pids(spec: RunSpec, workdir: Workdir) -> Callable[[list[str], dict[str, str]], list[str]]:
    """Unfenced, a command still runs in its own PID namespace (the eval's processes stay out of sight), held to
    the run's limits like every agent process (:mod:`assay.agents._inside`)."""

    def wrap(argv: list[str], env: dict[str, str]) -> list[str]:
        return own_pids(held(argv, spec.limits, workdir.root, report=False))

    return wrap


def _summary(text: str) -> str:
    return summarize(" ".join(text.split()), SUMMARY_CAP)


def _entry(m: Message) -> TranscriptEntry:
    return TranscriptEntry(
        role=m.role,
        content=m.content,
        tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls],
        tool_call_id=m.tool_call_id,
    )
