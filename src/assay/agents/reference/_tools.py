"""The reference agent's tools: small functions over the workdir, each with a JSON-schema for its arguments.

Every path goes through :class:`~assay.agents._workdir.Workdir` (refusals become the tool's result, and the
run goes on); commands run with the workdir as cwd and HOME, under a timeout, their output capped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from assay.agents._workdir import Workdir, changed_paths, snapshot
from assay.agents.record import ToolKind
from assay.agents.reference._search import CodeSearch

__all__ = ["TOOLS", "ToolContext", "ToolOutcome", "ToolSpec", "check_arguments", "parse_pytest_summary"]

#: files larger than this are not read or grepped whole
MAX_FILE_BYTES = 2_000_000
MAX_LIST = 500
MAX_MATCHES = 200


@dataclass
class ToolContext:
    """What every tool call gets: the workdir, the environment for commands, caps and the run's deadline."""

    workdir: Workdir
    env: dict[str, str]
    #: ``time.monotonic()`` by which the run must end (None: no wall-clock cap)
    deadline: float | None = None
    #: characters of a tool's result the model is shown
    output_cap: int = 8000
    shell_timeout_s: float = 60.0
    test_timeout_s: float = 300.0
    python: str = sys.executable
    #: turns a command's argv and environment into the argv to run (the fence); None runs it as is
    wrap: Callable[[list[str], dict[str, str]], list[str]] | None = None
    #: the workdir's code index (search_code); None: the tool is not available
    code_search: CodeSearch | None = None
    #: the documents query_documents searches (an ``assay.rag.DocumentIndex``); None: not available
    documents: Any = None
    #: this turn's memory (a ``_memory.MemoryTurn``); None: the memory tools are not available
    memory: Any = None

    def time_left(self, cap: float) -> float:
        if self.deadline is None:
            return cap
        return max(0.0, min(cap, self.deadline - time.monotonic()))


@dataclass
class ToolOutcome:
    """A tool call's result: the text the model sees and what the record keeps."""

    text: str
    status: str = "ok"
    edited_paths: list[str] = field(default_factory=list)
    command: str | None = None
    exit_code: int | None = None
    test_counts: dict[str, int] | None = None
    #: what the record keeps as the result summary, when not the start of ``text``
    summary: str | None = None


ToolFn = Callable[..., Awaitable[ToolOutcome]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    kind: ToolKind
    parameters: dict[str, Any]
    fn: ToolFn


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _cap(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n[... {len(text) - cap} more characters cut]"


def _read_text(path: Any) -> str:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"file is larger than {MAX_FILE_BYTES} bytes")
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        raise ValueError("binary file")
    return data.decode("utf-8", errors="replace")


# -- files ---------------------------------------------------------------------------------------------------


async def read_file(
    ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None
) -> ToolOutcome:
    target = ctx.workdir.resolve(path, must_exist=True)
    if target.is_dir():
        return ToolOutcome(f"{path} is a directory (use list_files)", status="error")
    text = _read_text(target)
    if start_line is not None or end_line is not None:
        lines = text.splitlines(keepends=True)
        lo = max(1, start_line or 1)
        hi = min(len(lines), end_line or len(lines))
        text = "".join(lines[lo - 1 : hi])
    return ToolOutcome(_cap(text, ctx.output_cap))


async def list_files(ctx: ToolContext, path: str = ".", recursive: bool = False) -> ToolOutcome:
    wd = ctx.workdir
    target = wd.resolve(path, must_exist=True)
    if not target.is_dir():
        return ToolOutcome(f"{path} is not a directory", status="error")
    if recursive:
        entries = [wd.relative(p) for p in wd.walk(target)]
    else:
        entries = []
        for child in sorted(target.iterdir()):
            rel = wd.relative(target / child.name) if target != wd.root else child.name
            if child.is_symlink() and not wd.is_inside(child):
                entries.append(f"{rel}@ (a symlink out of the workdir, not followed)")
            elif child.is_dir():
                entries.append(rel + "/")
            else:
                entries.append(rel)
    more = len(entries) - MAX_LIST
    text = "\n".join(entries[:MAX_LIST]) + (f"\n[... {more} more]" if more > 0 else "")
    return ToolOutcome(text or "(empty)")


async def grep(ctx: ToolContext, pattern: str, path: str = ".", glob: str | None = None) -> ToolOutcome:
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        return ToolOutcome(f"bad regular expression {pattern!r}: {exc}", status="error")
    wd = ctx.workdir
    target = wd.resolve(path, must_exist=True)
    files = [target] if target.is_file() else list(wd.walk(target))
    hits: list[str] = []
    for file in files:
        if glob and not file.match(glob):
            continue
        try:
            text = _read_text(file)
        except (OSError, ValueError):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            if rx.search(line):
                hits.append(f"{wd.relative(file)}:{no}:{line[:300]}")
                if len(hits) >= MAX_MATCHES:
                    hits.append(f"[stopped at {MAX_MATCHES} matches]")
                    return ToolOutcome(_cap("\n".join(hits), ctx.output_cap))
    return ToolOutcome(_cap("\n".join(hits), ctx.output_cap) if hits else "no matches")


async def write_file(ctx: ToolContext, path: str, content: str) -> ToolOutcome:
    target = ctx.workdir.resolve(path)
    if target.is_dir():
        return ToolOutcome(f"{path} is a directory", status="error")
    existed = target.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    rel = ctx.workdir.relative(target)
    verb = "overwrote" if existed else "created"
    return ToolOutcome(f"{verb} {rel} ({len(content)} characters)", edited_paths=[rel])


async def edit_file(ctx: ToolContext, path: str, old: str, new: str) -> ToolOutcome:
    target = ctx.workdir.resolve(path, must_exist=True)
    if not target.is_file():
        return ToolOutcome(f"{path} is not a file", status="error")
    text = _read_text(target)
    if not old:
        return ToolOutcome("'old' is empty: give the exact text to replace", status="error")
    count = text.count(old)
    if count != 1:
        why = "not found" if count == 0 else f"found {count} times (give more context to make it unique)"
        return ToolOutcome(f"the text to replace was {why} in {path}; nothing changed", status="error")
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    rel = ctx.workdir.relative(target)
    return ToolOutcome(f"edited {rel}: replaced 1 occurrence", edited_paths=[rel])


async def search_code(ctx: ToolContext, query: str, k: int = 5) -> ToolOutcome:
    if ctx.code_search is None:
        return ToolOutcome("code search is not available in this run", status="error")
    if not query.strip():
        return ToolOutcome("the query is empty", status="error")
    hits = await asyncio.to_thread(ctx.code_search.search, ctx.workdir.root, query, max(1, min(k, 20)))
    blocks = []
    for hit in hits:
        head = "\n".join(hit.text.splitlines()[:12])
        blocks.append(f"{hit.path}:{hit.start_line}-{hit.end_line} {hit.symbol} ({hit.kind})\n{head}")
    return ToolOutcome(
        _cap("\n\n".join(blocks), ctx.output_cap) if blocks else "no matches",
        summary=" ".join(f"{h.path}:{h.start_line}" for h in hits) or "no matches",
    )


async def query_documents(ctx: ToolContext, query: str, max_chunks: int = 8) -> ToolOutcome:
    from assay.rag import query_documents as search_documents

    if ctx.documents is None:
        return ToolOutcome("no documents are indexed for this run", status="error")
    if not query.strip():
        return ToolOutcome("the query is empty", status="error")
    found = await asyncio.to_thread(
        search_documents, ctx.documents, query, max_chunks=max(1, min(max_chunks, 20))
    )
    where = " ".join(f"{h.chunk.doc_id}#{h.chunk.page}" for h in found.hits) or "no passages"
    return ToolOutcome(_cap(found.text, ctx.output_cap), summary=where)


# -- commands ------------------------------------------------------------------------------------------------


async def _run(
    ctx: ToolContext, argv: list[str], timeout_s: float, env: dict[str, str]
) -> tuple[int | None, str]:
    """Run ``argv`` in the workdir in its own process group; (exit code or None on timeout, merged output)."""
    if ctx.wrap is not None:
        argv = ctx.wrap(argv, env)
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=ctx.workdir.root,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=timeout_s)
        return proc.returncode, out.decode("utf-8", errors="replace")
    except TimeoutError:
        return None, ""
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()


async def _command(
    ctx: ToolContext, argv: list[str], shown: str, timeout_s: float, env: dict[str, str]
) -> tuple[ToolOutcome, str]:
    before = snapshot(ctx.workdir)
    limit = ctx.time_left(timeout_s)
    code, output = await _run(ctx, argv, limit, env)
    edited = changed_paths(before, snapshot(ctx.workdir))
    if code is None:
        text = f"timed out after {limit:.0f} s (killed)"
        return ToolOutcome(text, status="timeout", edited_paths=edited, command=shown), output
    text = _cap(output, ctx.output_cap) + f"\n[exit code {code}]"
    status = "ok" if code == 0 else "error"
    summary = f"exit {code}: {output}"
    outcome = ToolOutcome(
        text, status=status, edited_paths=edited, command=shown, exit_code=code, summary=summary
    )
    return outcome, output


async def run_shell(ctx: ToolContext, command: str, timeout_s: float | None = None) -> ToolOutcome:
    ctx.workdir.check_command(command)
    env = ctx.workdir.shell_env(ctx.env, {})
    limit = min(timeout_s or ctx.shell_timeout_s, ctx.shell_timeout_s)
    outcome, _ = await _command(ctx, ["/bin/sh", "-c", command], command, limit, env)
    return outcome


_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b")


def parse_pytest_summary(output: str) -> tuple[dict[str, int], str]:
    """Counts from pytest's last summary line (``2 failed, 3 passed in 0.1s``) and that line; ({}, "") if none."""
    for line in reversed(output.strip().splitlines()):
        found = _COUNT.findall(line)
        if not found and "no tests ran" in line:
            return {"passed": 0, "failed": 0}, line.strip("= ").strip()
        if found and " in " in line:
            counts: dict[str, int] = {"passed": 0, "failed": 0}
            for n, word in found:
                key = {"error": "errors", "warning": "warnings"}.get(word, word)
                counts[key] = counts.get(key, 0) + int(n)
            return counts, line.strip("= ").strip()
    return {}, ""


async def run_tests(ctx: ToolContext, args: list[str] | None = None) -> ToolOutcome:
    extra = [str(a) for a in (args or [])]
    for a in extra:
        ctx.workdir.check_command(a)
    argv = [ctx.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    shown = " ".join(["pytest", "-q", *extra])
    env = ctx.workdir.shell_env(ctx.env, {"PYTHONDONTWRITEBYTECODE": "1"})
    outcome, output = await _command(ctx, argv, shown, ctx.test_timeout_s, env)
    if outcome.status == "timeout":
        return outcome
    counts, line = parse_pytest_summary(output)
    if not counts:
        outcome.status = "error"
        outcome.text = "no pytest summary line in the output\n" + outcome.text
        return outcome
    outcome.test_counts = counts
    # failing tests are a result, not a broken tool: exit 0 (all passed) and 1 (some failed) are "ok"
    outcome.status = "ok" if outcome.exit_code in (0, 1) else "error"
    outcome.summary = f"{counts['passed']} passed, {counts['failed']} failed ({line})"
    outcome.text = f"{outcome.summary}\n{outcome.text}"
    return outcome


_PATH = {"type": "string", "description": "a path relative to the workdir"}

TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in [
        ToolSpec(
            "read_file",
            "read",
            _schema(
                ["path"],
                path=_PATH,
                start_line={"type": "integer", "description": "first line (1-based)"},
                end_line={"type": "integer", "description": "last line (inclusive)"},
            ),
            read_file,
        ),
        ToolSpec(
            "list_files",
            "list",
            _schema([], path=_PATH, recursive={"type": "boolean", "description": "all files below path"}),
            list_files,
        ),
        ToolSpec(
            "grep",
            "search",
            _schema(
                ["pattern"],
                pattern={"type": "string", "description": "a Python regular expression"},
                path=_PATH,
                glob={"type": "string", "description": "only files matching this pattern, e.g. *.py"},
            ),
            grep,
        ),
        ToolSpec(
            "search_code",
            "search",
            _schema(
                ["query"],
                query={"type": "string", "description": "what the code does, or names in it"},
                k={"type": "integer", "description": "how many pieces of code (default 5)"},
            ),
            search_code,
        ),
        ToolSpec(
            "query_documents",
            "documents",
            _schema(
                ["query"],
                query={"type": "string", "description": "what to look for; exact phrases in double quotes"},
                max_chunks={"type": "integer", "description": "how many passages at most (default 8)"},
            ),
            query_documents,
        ),
        ToolSpec(
            "write_file",
            "write",
            _schema(["path", "content"], path=_PATH, content={"type": "string"}),
            write_file,
        ),
        ToolSpec(
            "edit_file",
            "edit",
            _schema(
                ["path", "old", "new"],
                path=_PATH,
                old={"type": "string", "description": "the exact text to replace (must occur once)"},
                new={"type": "string", "description": "the text to put in its place"},
            ),
            edit_file,
        ),
        ToolSpec(
            "run_shell",
            "shell",
            _schema(
                ["command"],
                command={"type": "string", "description": "a shell command, run in the workdir"},
                timeout_s={"type": "number", "description": "seconds before it is killed"},
            ),
            run_shell,
        ),
        ToolSpec(
            "run_tests",
            "test",
            _schema(
                [],
                args={
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "pytest arguments: test files, -k EXPR, ...",
                },
            ),
            run_tests,
        ),
    ]
}


def check_arguments(spec: ToolSpec, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` checked against the tool's schema (light coercion of numbers); ValueError naming the problem."""
    props: dict[str, Any] = spec.parameters["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ValueError(f"unknown argument(s) {', '.join(unknown)} (known: {', '.join(props) or 'none'})")
    missing = [k for k in spec.parameters["required"] if args.get(k) is None]
    if missing:
        raise ValueError(f"missing argument(s) {', '.join(missing)}")
    out: dict[str, Any] = {}
    for key, value in args.items():
        if value is None:
            continue
        kind = props[key]["type"]
        out[key] = _coerce(key, kind, value)
    return out


def _coerce(key: str, kind: str, value: Any) -> Any:
    if kind == "string" and isinstance(value, str):
        return value
    digits = isinstance(value, str) and value.strip().lstrip("-").isdigit()
    if kind == "integer" and not isinstance(value, bool) and (isinstance(value, int) or digits):
        return int(value)
    if kind == "number" and not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    if kind == "array":
        if isinstance(value, list):
            return value
        if isinstance(value, str):
            return value.split()
    raise ValueError(f"argument {key} should be {kind}, got {type(value).__name__}")
