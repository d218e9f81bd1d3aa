"""``assay eval agent``: multi-turn scenarios, a simulated user, a separate judge and checks made in code.

Each scenario (``eval/scenarios/<category>/<id>.yaml``) is one case. An attempt plays the scenario's turns
between a simulator (the user) and the agent under test (any harness; the reference agent by default), runs
the code checks (tools, ground-truth facts and numbers, abstention, canaries, secrets), asks the judge to
grade what needs judgment, and re-derives the verdict in code (``_verdict.derive``).

``pr`` plays every role from the scenario's ``script`` (offline, deterministic: only the model text is
scripted; prompts, parsing, checks and verdicts run for real). ``full`` runs real models: ``--model`` for the
agent (reached through the gateway), ``--simulator-model`` and ``--judge-model``.
"""

from assay.evals.agent._benchmark import AgentBenchmark, describe_scenarios
from assay.evals.agent._controls_lane import controls_due, controls_lane
from assay.evals.agent._controls_load import Control, default_controls_dir, load_controls
from assay.evals.agent._controls_report import calibrate, weak_judge_note
from assay.evals.agent._defaults import (
    AGENT_LIMITS,
    DEFAULT_HARNESS,
    FULL_EMBEDDER,
    FULL_MODEL,
    MAX_TOKENS,
    MAX_USER_MESSAGES,
    PR_EMBEDDER,
    PR_MODEL,
)
from assay.evals.agent._options import AgentOptions
from assay.evals.agent._rubric import MIN_CORE

__all__ = [
    "AGENT_LIMITS",
    "DEFAULT_HARNESS",
    "FULL_EMBEDDER",
    "FULL_MODEL",
    "MAX_TOKENS",
    "MAX_USER_MESSAGES",
    "MIN_CORE",
    "PR_EMBEDDER",
    "PR_MODEL",
    "AgentBenchmark",
    "AgentOptions",
    "Control",
    "calibrate",
    "controls_due",
    "controls_lane",
    "default_controls_dir",
    "describe_scenarios",
    "load_controls",
    "weak_judge_note",
]
