"""What the loop climbs: a benchmark's cases, how to run a subset of them, what the fixer may see of a failure,
and the strings an edit must never contain.

``agent`` (``assay eval agent``: :class:`AgentTarget`) and ``tasks`` (the toybox suites of ``assay eval tasks``:
:class:`~assay.hillclimb._target_tasks.TasksTarget`).
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError
from assay.hillclimb._target_agent import AgentTarget
from assay.hillclimb._target_base import Forbidden, Target
from assay.hillclimb._target_tasks import TasksTarget

__all__ = ["AgentTarget", "Forbidden", "Target", "get_target"]

BENCHMARKS = ("agent", "tasks")


def get_target(benchmark: str, options: dict[str, Any]) -> Target:
    if benchmark == "tasks":
        return TasksTarget(options)
    if benchmark != "agent":
        raise ConfigError(f"--benchmark {benchmark!r}: hillclimb runs {', '.join(BENCHMARKS)}")
    return AgentTarget(options)
