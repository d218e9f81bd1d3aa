"""The agent benchmark's defaults: the models and embedders of each suite and the caps of one attempt."""

from __future__ import annotations

#: the agent, simulator and judge model of ``full`` unless told otherwise (the embedded model: weak)
FULL_MODEL = "local/smollm2"
#: what ``pr``'s scripted roles are recorded as
PR_MODEL = "scripted:scenario-scripts"
DEFAULT_HARNESS = "reference"
#: the harnesses pr drives the scenario scripts through: the reference agent on the scripted model, and the
#: scripted external agent as a command reaching the tools over MCP and as Claude Code's stream-json
PR_HARNESSES = ("reference", "command", "claude-code")
PR_EMBEDDER, FULL_EMBEDDER = "hash", "local"
#: the most tokens one call of each role may write (the reference agent's answers, the simulated user's message,
#: the judge's JSON): generous for a strong model, and a stop for a weak one that rambles to its context's end
MAX_TOKENS = {"agent": 2048, "simulator": 256, "judge": 2048}
#: the caps of one agent run (one user message): a scenario's question needs a few tool calls, not fifty, and a
#: weak model that loops on a tool is cut off (``cut_off``, recorded) rather than left to run for an hour
AGENT_LIMITS = {"wall_clock_s": 300.0, "max_steps": 15}
#: messages the simulated user may send per objective before it moves on
MAX_USER_MESSAGES = 3
