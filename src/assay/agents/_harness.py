"""The harness contract: put one agent under test, on a prompt or one turn of a conversation it keeps open.

    harness = get_harness("reference", model="local/smollm2")
    result = await harness.run("Fix the failing test", RunSpec(workdir=Path("work")))

Built-ins are registered by name; outside harnesses register through the ``assay.harnesses`` entry-point group.
A benchmark never knows which harness it drives: it reads the :class:`AgentResult`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar

from assay.agents.record import AgentResult, Limits
from assay.errors import ConfigError

ENTRY_POINT_GROUP = "assay.harnesses"


@dataclass
class Route:
    """How the agent reaches its model: the gateway's loopback URLs and the model name to ask for.

    ``openai_base_url`` ends in ``/v1``; ``anthropic_base_url`` is the root Anthropic clients append
    ``/v1/messages`` to. No provider key is ever part of a route: the gateway holds it.
    """

    model: str
    openai_base_url: str | None = None
    anthropic_base_url: str | None = None
    #: the ``assay.models`` spec behind the gateway (what the run records as the subject model)
    upstream: str | None = None


@dataclass
class RunSpec:
    """Where and how one run happens."""

    workdir: Path
    limits: Limits = field(default_factory=Limits)
    route: Route | None = None
    #: extra environment for the agent process (never provider keys)
    env: dict[str, str] = field(default_factory=dict)
    #: run the agent under bubblewrap (see assay.agents.fence)
    fence: bool = False
    #: the conversation so far, for harnesses that replay history (``python``, ``http``)
    history: list[dict[str, Any]] = field(default_factory=list)
    #: continue this harness session (multi-turn); None starts a new one
    session_id: str | None = None
    #: folders first on the agent's PATH (a bare venv's ``bin``, the ``gh`` stand-in's folder): every harness
    #: that runs commands builds its environment with :func:`assay.agents._env.run_env`, which puts them there
    toolchain: list[Path] = field(default_factory=list)
    #: the scenario's world (an ``assay.agents.world.World``: documents, memory, files, shell) to serve the agent
    #: over MCP, for harnesses that take it (:attr:`Harness.takes_world`); None: none
    world: Any = None
    #: folders besides the workdir the agent's process may write under the fence (a test double's own state)
    writable: list[Path] = field(default_factory=list)


class Harness(ABC):
    """Runs one agent. Subclasses set ``name`` and implement :meth:`run`."""

    name: ClassVar[str]
    #: whether the agent is given ``RunSpec.world`` (its tools over MCP, or natively); a benchmark gives a
    #: harness that does not the documents as files instead
    takes_world: bool = False

    def __init__(self, **options: Any) -> None:
        self.options = options

    @abstractmethod
    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        """Run the agent on ``prompt`` (one turn when ``spec.session_id`` is set) and return its record.

        Never raises for the agent's own failures: those are ``AgentResult.error``; an outage behind the agent
        is ``AgentResult.infra_error``. Raises :class:`~assay.errors.ConfigError` for a bad setup (a missing
        program, a bad template)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the harness holds (a session, a process)."""


HarnessFactory = Callable[..., Harness]
_BUILTINS: dict[str, str] = {}
_REGISTERED: dict[str, HarnessFactory] = {}


def register_harness(name: str, factory: HarnessFactory | str) -> None:
    """Register a harness by name: a factory, or ``"module:Class"`` imported on first use."""
    if isinstance(factory, str):
        _BUILTINS[name] = factory
    else:
        _REGISTERED[name] = factory


def harness_names() -> list[str]:
    names = set(_BUILTINS) | set(_REGISTERED) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names)


def get_harness(name: str, **options: Any) -> Harness:
    """The harness registered as ``name``, built with ``options``; ConfigError naming the known ones.

    ``"base:rest"`` (``python:pkg.module:fn``) is harness ``base`` with option ``target="rest"``."""
    base, sep, rest = name.partition(":")
    if sep and name not in _REGISTERED and name not in _BUILTINS and rest:
        return get_harness(base, **{"target": rest, **options})
    if name in _REGISTERED:
        return _REGISTERED[name](**options)
    target = _BUILTINS.get(name)
    if target is None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                return ep.load()(**options)
        raise ConfigError(f"--harness {name!r}: unknown harness (known: {', '.join(harness_names())})")
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)(**options)
