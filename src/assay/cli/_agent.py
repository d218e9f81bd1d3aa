"""`assay agent run|chat`: put one agent (any registered harness) to work in a folder."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay.errors import ExitCode

_CUT_OFF = {
    "steps": "the step cap (--max-steps)",
    "wall_clock": "the time cap (--timeout)",
    "tokens": "the token cap (--max-tokens)",
    "memory": "the memory limit",
    "processes": "the process limit",
    "disk": "the workdir disk limit",
}


@click.group(name="agent")
def agent_group() -> None:
    """Run an agent under test on a prompt, or chat with it, in a workdir."""


_FENCE = click.option(
    "--fence/--no-fence",
    default=None,
    help="Run the agent (its commands) under bubblewrap, nothing outside the workdir: on by default wherever it "
    "works here (said when it is off); --fence refuses to run where it cannot.",
)


def _check_fence(fence: bool | None, harness: str = "reference") -> bool:
    """Whether the agent runs fenced; says once, on stderr, why it does not (ConfigError for --fence where
    bubblewrap cannot run)."""
    from assay.agents.fence import resolve_fence

    choice = resolve_fence(fence, harness)
    if choice.note:
        click.echo(choice.note, err=True)
    return choice.on


_MEMORY = click.option(
    "--memory",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A memory store (SQLite) for the reference agent's memory tools; created if missing.",
)


#: the resource limits of the agent's processes (defaults: assay.agents.Limits); click passes them as ``held``
_HELD = [
    click.option(
        f"--{name.replace('_', '-')}",
        name,
        type=click.IntRange(min=low),
        default=None,
        help=f"{what} (default {dflt}).",
    )
    for name, low, what, dflt in (
        ("memory_mb", 16, "Resident memory of the agent's processes, MB", 4096),
        ("max_procs", 4, "Processes the agent may have running", 512),
        ("disk_mb", 1, "MB the agent may add to its workdir", 2048),
        ("output_kb", 1, "KB of the agent's output kept; the rest is counted", 10240),
    )
]


def _options(f: Any) -> Any:
    decorators = [
        click.option(
            "--workdir",
            required=True,
            type=click.Path(file_okay=False, exists=True, path_type=Path),
            help="The folder the agent works in (its tools cannot reach outside it).",
        ),
        click.option("--harness", default="reference", show_default=True, help="A registered harness."),
        click.option(
            "--model", help="The agent's model, provider/model (e.g. local/smollm2, scripted/FILE)."
        ),
        click.option(
            "--profile",
            type=click.Path(file_okay=False, exists=True, path_type=Path),
            help="A profile folder for the reference agent (system.md, tools/<name>.md, skills/).",
        ),
        _MEMORY,
        click.option(
            "--max-steps",
            type=click.IntRange(min=1),
            default=50,
            show_default=True,
            help="Model calls per turn.",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(min=0, min_open=True),
            default=600.0,
            show_default=True,
            help="Wall-clock seconds per turn.",
        ),
        click.option("--max-tokens", type=click.IntRange(min=1), help="Tokens (in + out) per turn."),
        *_HELD,
        _FENCE,
    ]
    for d in reversed(decorators):
        f = d(f)
    return f


def _harness(
    harness: str, model: str | None, profile: Path | None, memory: Path | None = None, fence: bool = False
) -> Any:
    from assay.agents import get_harness

    options: dict[str, Any] = {}
    if model is not None:
        options["model"] = model
    if fence and harness == "reference":  # the fence hides the host's Python: run_tests gets pytest's venv
        import os
        import tempfile

        from assay.evals import cached_toolchain

        venv_bin = cached_toolchain(Path(tempfile.gettempdir()) / f"assay-agent-toolchain-{os.getuid()}")
        options |= {"toolchain": [venv_bin], "python": str(venv_bin / "python")}
    for flag, key, value in (("--profile", "profile", profile), ("--memory", "memory", memory)):
        if value is None:
            continue
        if harness != "reference":
            raise click.UsageError(f"{flag} is an option of the reference harness, not of {harness!r}")
        options[key] = value
    return get_harness(harness, **options)


def _spec(
    workdir: Path,
    max_steps: int,
    timeout_s: float,
    max_tokens: int | None,
    fence: bool,
    session_id: str | None = None,
    held: dict[str, int | None] | None = None,
) -> Any:
    from assay.agents import Limits, RunSpec

    given = {k: v for k, v in (held or {}).items() if v is not None}
    limits = Limits(wall_clock_s=timeout_s, max_steps=max_steps, max_tokens=max_tokens, **given)
    return RunSpec(workdir=workdir, limits=limits, session_id=session_id, fence=fence)


def usage_line(result: Any) -> str:
    u = result.usage
    parts = [f"steps {result.steps}", f"tokens in={u.input_tokens} out={u.output_tokens}"]
    if u.cost_usd is None:
        parts.append("cost n/a (no tokens counted or model not priced)")
    else:
        parts.append(f"cost ${u.cost_usd:.6f} ({u.cost_source})")
    parts.append(f"model {result.model_ran or 'not reported'}")
    parts.append(f"{result.elapsed_s:.1f} s")
    return " · ".join(parts)


def record_table(result: Any) -> Table:
    table = Table(title=f"tool calls ({len(result.tool_record)})", title_justify="left")
    for col in ("#", "tool", "kind", "status", "what", "edited", "s"):
        table.add_column(col, overflow="fold")
    for i, call in enumerate(result.tool_record, 1):
        what = (
            call.command
            if call.command is not None
            else ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
        )
        if call.exit_code is not None:
            what += f"  [exit {call.exit_code}]"
        if call.test_counts:
            what += (
                f"  [{call.test_counts.get('passed', 0)} passed, {call.test_counts.get('failed', 0)} failed]"
            )
        secs = (
            "" if call.started_s is None or call.ended_s is None else f"{call.ended_s - call.started_s:.2f}"
        )
        cells = (str(i), call.name, call.kind, call.status, what[:120], ", ".join(call.edited_paths), secs)
        table.add_row(*(Text(c) for c in cells))
    return table


def _report(console: Console, result: Any) -> int:
    """Print what went wrong or was cut off; the exit code of the run."""
    if result.cut_off is not None:
        console.print(f"cut off by {_CUT_OFF[result.cut_off]}; the record above is what it did until then")
    if result.infra_error is not None:
        click.echo(f"infrastructure error (not the agent's fault): {result.infra_error}", err=True)
        return ExitCode.NOT_COMPARABLE
    if result.error is not None:
        click.echo(f"agent error: {result.error}", err=True)
        return ExitCode.USAGE
    return ExitCode.OK


@agent_group.command(name="run")
@click.argument("prompt")
@_options
@click.option(
    "--save", type=click.Path(dir_okay=False, path_type=Path), help="Write the whole record (JSON) here."
)
def run_command(
    prompt: str,
    workdir: Path,
    harness: str,
    model: str | None,
    profile: Path | None,
    memory: Path | None,
    max_steps: int,
    timeout_s: float,
    max_tokens: int | None,
    fence: bool | None,
    save: Path | None,
    **held: int | None,
) -> None:
    """Run the agent once on PROMPT; print its answer, its tool calls and its usage."""
    fence = _check_fence(fence, harness)
    agent = _harness(harness, model, profile, memory, fence)
    spec = _spec(workdir, max_steps, timeout_s, max_tokens, fence, held=held)

    async def go() -> Any:
        try:
            return await agent.run(prompt, spec)
        finally:
            await agent.close()

    result = asyncio.run(go())
    console = Console(highlight=False, soft_wrap=True)
    console.print(result.answer or "(no answer)", markup=False)
    console.print(record_table(result))
    console.print(usage_line(result), markup=False)
    if save is not None:
        save.write_text(result.model_dump_json(indent=2), encoding="utf-8")
    code = _report(console, result)
    if code:
        sys.exit(code)


@agent_group.command(name="chat")
@_options
def chat_command(
    workdir: Path,
    harness: str,
    model: str | None,
    profile: Path | None,
    memory: Path | None,
    max_steps: int,
    timeout_s: float,
    max_tokens: int | None,
    fence: bool | None,
    **held: int | None,
) -> None:
    """Talk to the agent: each line on stdin is one turn of the same conversation (limits apply per turn)."""
    fence = _check_fence(fence, harness)
    agent = _harness(harness, model, profile, memory, fence)
    console = Console(highlight=False, soft_wrap=True)

    async def go() -> int:
        session: str | None = None
        try:
            for line in sys.stdin:
                if not line.strip():
                    continue
                result = await agent.run(
                    line.rstrip("\n"), _spec(workdir, max_steps, timeout_s, max_tokens, fence, session, held)
                )
                session = result.session_id
                console.print(f"agent> {result.answer or '(no answer)'}", markup=False)
                calls = ", ".join(f"{c.name}:{c.status}" for c in result.tool_record) or "no tool calls"
                console.print(f"  [{calls}] {usage_line(result)}", markup=False)
                code = _report(console, result)
                if code:
                    return code
            return ExitCode.OK
        finally:
            await agent.close()

    code = asyncio.run(go())
    if code:
        sys.exit(code)


@agent_group.command(name="serve")
@click.option("--port", type=click.IntRange(1, 65535), required=True, help="The loopback port to listen on.")
@click.option("--host", default="127.0.0.1", show_default=True, help="A loopback address.")
@click.option(
    "--model",
    help="The agent's model, provider/model (e.g. local/smollm2); without it each turn must carry a route.",
)
@click.option(
    "--profile",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A profile folder for the reference agent (system.md, tools/<name>.md, skills/).",
)
@_MEMORY
@_FENCE
def serve_command(
    port: int, host: str, model: str | None, profile: Path | None, memory: Path | None, fence: bool | None
) -> None:
    """Serve the reference agent over assay's turn protocol: POST /turn with {prompt, session_id, workdir,
    limits} answers the turn's record (an AgentResult); send the session_id it returns to go on with the
    same conversation. Loopback only; Ctrl-C stops it."""
    from assay.agents.reference.serve import listen, preflight, serve, turn_app

    fence = _check_fence(fence)
    agent = _harness("reference", model, profile, memory, fence)
    model_name = preflight(agent)
    sock = listen(host, port)
    where = f"[{host}]" if ":" in host else host
    click.echo(f"serving the reference agent on http://{where}:{port}  (POST /turn; Ctrl-C to stop)")
    click.echo(f"  model: {model_name or 'none: each turn must carry a route (model + openai_base_url)'}")
    if fence:
        click.echo("  fence: on (the agent's commands run under bubblewrap)")
    sys.stdout.flush()
    serve(turn_app(agent, fence=fence), sock)


@agent_group.group(name="profile")
def profile_group() -> None:
    """The reference agent's profile folder (system.md, tools/<name>.md, skills/)."""


@profile_group.command(name="init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def profile_init_command(directory: Path) -> None:
    """Copy the built-in profile into DIRECTORY (new or empty), to edit by hand or with `assay hillclimb
    --profile DIRECTORY` (commit it first: hillclimb needs a clean tree)."""
    from assay.agents.reference import init_profile

    dest = init_profile(directory)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    click.echo(f"copied the built-in profile to {dest} ({len(files)} files: {', '.join(files)})")
