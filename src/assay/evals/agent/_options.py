"""``assay eval agent``'s own options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from assay.evals._held import HeldOptions
from assay.evals.agent._defaults import (
    AGENT_LIMITS,
    DEFAULT_HARNESS,
    FULL_MODEL,
    MAX_TOKENS,
    MAX_USER_MESSAGES,
)
from assay.exec import Flag


class AgentOptions(HeldOptions):
    model: Annotated[str | None, Flag("--model", help=f"full: the agent's model (default {FULL_MODEL}).")] = (
        None
    )
    agent_model: Annotated[
        str | None,
        Flag(
            "--agent-model",
            help="The model the agent must have run (read back per scenario; another one is INFRA_ERROR).",
        ),
    ] = None
    simulator_model: Annotated[
        str | None,
        Flag(
            "--simulator-model",
            help="full: the simulated user's model, another than the agent's (the agent's own model only with "
            "--allow-self-judge).",
        ),
    ] = None
    judge_model: Annotated[
        str | None,
        Flag(
            "--judge-model",
            help="full: the judge's model, another than the agent's (the agent's own model only with "
            "--allow-self-judge).",
        ),
    ] = None
    allow_self_judge: Annotated[
        bool,
        Flag(
            "--allow-self-judge",
            help="full: let the judge and the simulator run the agent's own model (the default when "
            "--judge-model/--simulator-model are not given); the report says so.",
        ),
    ] = False
    harness: Annotated[
        str | None, Flag("--harness", help=f"full: the harness under test (default {DEFAULT_HARNESS}).")
    ] = None
    category: Annotated[str | None, Flag("--category", help="Run only these categories (comma list).")] = None
    scenario: Annotated[
        str | None,
        Flag(
            "--scenario",
            help="Run only these scenario ids (comma list; a draft under drafts/ runs only when named).",
        ),
    ] = None
    tier: Annotated[
        str | None, Flag("--tier", help="Run only the scenarios of this tier (ci_tiers.json).")
    ] = None
    scenarios_dir: Annotated[
        Path | None,
        Flag("--scenarios", help="Folder of <category>/<id>.yaml scenarios (default eval/scenarios)."),
    ] = None
    profile: Annotated[
        Path | None,
        Flag(
            "--profile",
            path="dir",
            help="The reference agent's profile folder (system.md, tools/, skills/; default: the built-in one).",
        ),
    ] = None
    max_steps: Annotated[
        int,
        Field(ge=1),
        Flag("--max-steps", show_default=True, help="Model calls the agent may make per user message."),
    ] = AGENT_LIMITS["max_steps"]
    max_user_messages: Annotated[
        int,
        Field(ge=1),
        Flag(
            "--max-user-messages",
            show_default=True,
            help="Messages the simulated user may send per objective before it moves on.",
        ),
    ] = MAX_USER_MESSAGES
    agent_max_tokens: Annotated[
        int,
        Field(ge=16),
        Flag(
            "--agent-max-tokens",
            show_default=True,
            help="Tokens one model call of the reference agent may write (a weak model can ramble to its "
            "context's end).",
        ),
    ] = MAX_TOKENS["agent"]
    judge_schema: Annotated[
        Literal["auto", "on", "off"],
        Flag(
            "--judge-schema",
            show_default=True,
            help="Hold the judge's decoding to its answer's JSON schema (auto: on for local/ and "
            "openai-compat/ backends, which llama.cpp, vLLM and Ollama serve).",
        ),
    ] = "auto"
