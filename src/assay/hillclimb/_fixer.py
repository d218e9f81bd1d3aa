"""The fixer: any harness, run once per round in a copy of the profile, on train failures only.

Its prompt carries, per failing train scenario (numbered, never named), the transcript, the failing
dimensions and the failed code checks with any expected value withheld; never a held-out transcript, a
ground-truth value or a judge's written reasons (which may say what the right answer or fix is).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.agents import AgentResult, Harness, Limits, RunSpec, get_harness
from assay.runs import Attempt

__all__ = ["FIXER_RULES", "build_fixer", "fixer_prompt", "run_fixer"]

#: the tools a reference-agent fixer is offered: reading and editing files, nothing that runs commands
FIXER_TOOLS = ["list_files", "read_file", "grep", "edit_file", "write_file"]

FIXER_RULES = """Rules (an edit that breaks one is rejected by a check in code):
- Do not name any scenario, test or conversation, and do not quote an answer, a number or a fact from the
  conversations below: the agent must get better in general, not learn these answers.
- Do not special-case a file name, path or document name that appears in them.
- Make ONE substantive change (one idea), then stop and say in one sentence what you changed and why."""

#: characters of the prompt: the failures beyond it are left out (an 8192-token model must still fit it,
#: its tools' descriptions and room to read a file and answer)
PROMPT_CAP = 12_000

PROMPT_HEAD = """You improve an AI assistant by editing its profile: the files in your working folder.
- system.md is its system prompt.
- tools/<name>.md describes one tool it is offered; a tool without its description file is NOT offered.
- skills/<name>.md (optional) are extra instructions appended to the system prompt.

The assistant failed the {n} conversation(s) below. Find a general cause (a missing or unclear instruction,
a tool it was not offered or did not understand) and fix it with one edit of these files.

{rules}
"""


def fixer_prompt(
    failures: list[list[Attempt]], view: Any, files: list[str] | None = None, cap: int = PROMPT_CAP
) -> str:
    """The prompt for one round: ``failures`` are the failing attempts of each train scenario; ``files`` the
    profile's files (relative paths), listed so a fixer knows what it may edit."""
    parts = [PROMPT_HEAD.format(n=len(failures), rules=FIXER_RULES)]
    if files:
        parts.append("The files: " + ", ".join(files) + "\n")
    for i, attempts in enumerate(failures, start=1):
        shown = view(attempts[0])
        body = json.dumps(shown, indent=1, ensure_ascii=False)
        parts.append(f"## Failure {i} (failed {len(attempts)} attempt(s))\n\n{body}\n")
    text = "\n".join(parts)
    if len(text) > cap:  # a weak model's context is short: the first failures in full, the rest dropped
        text = text[:cap] + "\n\n[... the remaining failures are left out for length]\n"
    return text


def build_fixer(name: str, model: str | None, tool: str | None = None) -> Harness:
    """The fixer's harness: ``reference`` (on ``--fixer-model``), ``claude-code``, ``command:...``, any other.

    ``tool`` (reference only) holds every model call to that tool: the embedded model calls no tool unless its
    decoding is held to one, so ``--fixer-tool write_file --fixer-max-steps 1`` is one forced edit."""
    from assay.errors import ConfigError

    if tool is not None and name != "reference":
        raise ConfigError(f"--fixer-tool applies to --fixer reference, not --fixer {name}")
    if name == "reference":
        if not model:
            raise ConfigError("--fixer reference needs --fixer-model (e.g. local/smollm2)")
        if tool is not None and tool not in FIXER_TOOLS:
            raise ConfigError(f"--fixer-tool {tool!r}: the fixer's tools are {', '.join(FIXER_TOOLS)}")
        options: dict[str, Any] = {"max_tokens": 1024}
        if tool is not None:
            options["tool_choice"] = tool
        return get_harness("reference", model=model, tools=FIXER_TOOLS, generate_options=options)
    options: dict[str, Any] = {"model": model} if model else {}
    return get_harness(name, **options)


async def run_fixer(
    harness: Harness, prompt: str, workdir: Path, limits: Limits, *, fence: bool = False
) -> AgentResult:
    """One fixer run in ``workdir`` (the profile's copy); with ``fence`` under bubblewrap, seeing nothing else."""
    return await harness.run(prompt, RunSpec(workdir=workdir, limits=limits, fence=fence))
