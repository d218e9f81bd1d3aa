"""The options every benchmark that runs an agent's process shares: the fence and the limits of one agent run.

    class CodeOptions(HeldOptions): ...          # --fence/--no-fence, --agent-memory-mb, --agent-max-procs, ...
    limits = held_limits(self.options, wall_clock_s=600.0, max_steps=30)
    choice = resolve_fence(self.options.fence)   # on wherever bubblewrap works, unless --no-fence

Each limit holds the agent's whole process tree and is recorded in the attempt (``details.containment``) and in
the run's meta (``agent_limits``); see :mod:`assay.agents._inside`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from assay.agents import Limits
from assay.agents.fence import FenceChoice, resolve_fence, unfenced_note
from assay.exec import BenchmarkOptions, Flag

__all__ = ["HeldOptions", "fence_choice", "fence_config", "held_limits"]


def _default(name: str) -> Any:
    return Limits.model_fields[name].default


class HeldOptions(BenchmarkOptions):
    fence: Annotated[
        bool | None,
        Flag(
            "--fence/--no-fence",
            envvar="ASSAY_FENCE",
            help="Run the agent under bubblewrap (default: on wherever it works here; the report says when it "
            "is off) [ASSAY_FENCE].",
        ),
    ] = None
    agent_memory_mb: Annotated[
        int | None,
        Field(ge=16),
        Flag(
            "--agent-memory-mb",
            envvar="ASSAY_AGENT_MEMORY_MB",
            help=f"Resident memory of one agent run's processes, MB (default {_default('memory_mb')}) "
            "[ASSAY_AGENT_MEMORY_MB].",
        ),
    ] = None
    agent_max_procs: Annotated[
        int | None,
        Field(ge=4),
        Flag(
            "--agent-max-procs",
            envvar="ASSAY_AGENT_MAX_PROCS",
            help=f"Processes one agent run may have running (default {_default('max_procs')}) "
            "[ASSAY_AGENT_MAX_PROCS].",
        ),
    ] = None
    agent_disk_mb: Annotated[
        int | None,
        Field(ge=1),
        Flag(
            "--agent-disk-mb",
            envvar="ASSAY_AGENT_DISK_MB",
            help=f"MB one agent run may add to its workdir (default {_default('disk_mb')}) [ASSAY_AGENT_DISK_MB].",
        ),
    ] = None
    agent_output_kb: Annotated[
        int | None,
        Field(ge=1),
        Flag(
            "--agent-output-kb",
            envvar="ASSAY_AGENT_OUTPUT_KB",
            help=f"KB of an agent's output kept; the rest is counted (default {_default('output_kb')}) "
            "[ASSAY_AGENT_OUTPUT_KB].",
        ),
    ] = None


def held_limits(options: Any, **base: Any) -> Limits:
    """:class:`Limits` from ``base`` (wall clock, steps, tokens) and the options' resource limits (their
    defaults where not given)."""
    given = {
        "memory_mb": getattr(options, "agent_memory_mb", None),
        "max_procs": getattr(options, "agent_max_procs", None),
        "disk_mb": getattr(options, "agent_disk_mb", None),
        "output_kb": getattr(options, "agent_output_kb", None),
    }
    return Limits(**base, **{k: v for k, v in given.items() if v is not None})


def fence_choice(options: Any) -> FenceChoice:
    """Whether this run's agents are fenced (``--fence``/``--no-fence``, else wherever bubblewrap works), and
    what the run says about it; ConfigError for ``--fence`` where it cannot run."""
    return resolve_fence(getattr(options, "fence", None), getattr(options, "harness", None))


def fence_config(options: Any) -> dict[str, Any]:
    """What a run's subject config (meta and report) says about the fence and the limits' isolation."""
    choice = fence_choice(options)
    return {"fence": choice.on, "fence_note": choice.note, "pid_isolation": unfenced_note(choice.on)}
