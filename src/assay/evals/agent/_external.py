"""pr through another harness: the scripted external agent (:mod:`assay.agents.scripted_agent`) run by the
``command`` harness (a CLI reaching the scenario's tools over MCP, its record from the world's log) or by the
``claude-code`` harness (as its ``claude`` binary, printing Claude Code's stream-json)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from assay.agents import Harness, Route, RunSpec, get_harness
from assay.agents.record import AgentResult

__all__ = ["scripted_external_harness"]

_SOURCES = Path(__file__).resolve().parents[3]


class _Offline(Harness):
    """The claude-code harness on the scripted agent: it needs a route to start, which the scripted agent never
    calls (pr is offline), so the run gets one that leads nowhere."""

    name = "claude-code"
    takes_world = True

    def __init__(self, inner: Harness) -> None:
        super().__init__()
        self.inner = inner

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        if spec.route is None:
            spec = RunSpec(
                **{**spec.__dict__, "route": Route(model="scripted", anthropic_base_url="http://0.0.0.0:9")}
            )
        return await self.inner.run(prompt, spec)

    async def close(self) -> None:
        await self.inner.close()


def scripted_external_harness(name: str, replies: list[dict[str, Any]], folder: Path) -> Harness:
    """The ``name`` harness (``command`` or ``claude-code``) driving the scripted external agent on ``replies``
    (a scenario's ``script.agent``, flattened); its script, cursor and launcher live in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "replies.json"
    script.write_text(json.dumps({"replies": replies}), encoding="utf-8")
    launcher = folder / "scripted-agent"
    # the agent's environment is scrubbed: the launcher names the interpreter and the sources this run uses
    launcher.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH={shlex.quote(str(_SOURCES))} exec {shlex.quote(sys.executable)} "
        f'-m assay.agents.scripted_agent --script {shlex.quote(str(script))} "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    if name == "command":
        template = (
            f"{shlex.quote(str(launcher))} --mcp-config {{mcp_config}} --max-turns {{max_steps}} {{prompt}}"
        )
        return get_harness("command", template=template, parser="assay-world")
    return _Offline(get_harness("claude-code", claude_bin=str(launcher)))
