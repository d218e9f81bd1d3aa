"""What the benchmarks that put a harness to work on a model share: the harness under test, the model it runs
on (:func:`model_options`), the judge's model and the caps of one agent run, read from the same options (tasks,
code, sessions); one agent run and what it did (:func:`run_agent_once`, :func:`record_lines`); and the one rule
for a harness that breaks, in all four agent benchmarks (agent, tasks, code, sessions):

- the harness itself failed (its ``run`` raised: :class:`HarnessBroke`) or the agent broke (``AgentResult.error``:
  it crashed, its output was unreadable): **ERROR**, measured against the subject like a failure, with
  ``broken_by`` on the attempt saying which (:func:`broken`, :func:`agent_broke`);
- the model backend behind the agent failed (unreachable, auth, quota: ``AgentResult.infra_error``):
  **INFRA_ERROR**, an :class:`~assay.errors.InfraError` that stops the run (resumable), never the subject
  getting worse.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from assay.agents import Limits, ToolCallRecord
from assay.errors import ConfigError, InfraError, SubjectError, UsageError

if TYPE_CHECKING:
    from assay.agents import AgentResult, Harness, RunSpec
    from assay.exec import AttemptContext, Outcome
    from assay.models import Usage

__all__ = [
    "LOCAL_CTX_SIZE",
    "BrokenBy",
    "HarnessBroke",
    "HarnessedOptions",
    "agent_broke",
    "broken",
    "model_options",
    "record_lines",
    "run_agent_once",
    "run_turn",
]

#: the embedded model's context (its own default, 2048, is shorter than one task's tool results or one judged
#: conversation)
LOCAL_CTX_SIZE = 8192
#: characters of a command or path shown per tool call in the journal
ARGS_SHOWN = 160
#: what broke in a run that is ERROR: the harness (its ``run`` raised) or the agent (it crashed)
BrokenBy = Literal["harness", "agent"]


def model_options(spec: str) -> dict[str, Any]:
    """The options every benchmark opens model ``spec`` with (an embedded model gets a longer context)."""
    return {"ctx_size": LOCAL_CTX_SIZE} if spec.startswith("local/") else {}


def record_lines(calls: Sequence[ToolCallRecord]) -> list[str]:
    """One line per tool call: ``$ command -> exit N`` for shell and test calls, else the tool and its path."""
    lines = []
    for c in calls:
        if c.command is not None:
            line = f"$ {c.command[:ARGS_SHOWN]} -> exit {c.exit_code}"
            if c.test_counts:
                line += " (" + ", ".join(f"{k} {v}" for k, v in sorted(c.test_counts.items())) + ")"
        else:
            target = c.arguments.get("path") or c.arguments.get("file_path") or c.arguments.get("pattern")
            line = f"{c.name}({str(target)[:ARGS_SHOWN] if target else ''}) -> {c.status}"
            if c.edited_paths:
                line += " edited " + ", ".join(c.edited_paths)
        lines.append(line)
    return lines


class HarnessBroke(SubjectError):
    """The harness itself failed: its ``run`` raised (not the agent's crash, not the model backend)."""

    def __init__(self, label: str, exc: BaseException) -> None:
        super().__init__(f"{label}: {type(exc).__name__}: {exc}")


class HarnessedOptions:
    """``--harness`` (default :attr:`default_harness`), ``--model`` (required: every option also reads its
    ``ASSAY_*`` variable), ``--judge-model`` (default the model), ``--max-steps`` and ``--run-timeout``
    (defaults :attr:`agent_limits`)."""

    #: the benchmark's options: ``harness``, ``model``, ``work_root``, ``run_timeout`` and ``max_steps`` (and
    #: ``judge_model`` where it judges)
    options: Any
    default_harness: ClassVar[str] = "reference"
    agent_limits: ClassVar[dict[str, float]] = {"wall_clock_s": 600.0, "max_steps": 30}

    @property
    def harness_name(self) -> str:
        return str(self.options.harness or self.default_harness)

    @property
    def model(self) -> str:
        model = self.options.model
        if not model:
            raise ConfigError("--model is required (or set ASSAY_MODEL): the model the harness runs on")
        return str(model)

    @property
    def judge_model(self) -> str:
        return str(getattr(self.options, "judge_model", None) or self.model)

    # what the three benchmarks hold while a run is set up: the gateway and a work root of their own
    _gateway: Any = None
    _own_work_root: tempfile.TemporaryDirectory[str] | None = None

    def _harness_options(self) -> dict[str, Any]:
        return {}

    async def refuse_unknown_harness(self) -> None:
        """An unknown ``--harness`` is refused in setup, before any case runs."""
        from assay.agents import get_harness

        if self.harness_name != self.default_harness:
            await get_harness(self.harness_name, **self._harness_options()).close()

    def open_work_root(self, prefix: str) -> Path:
        """``--work-root`` (made if missing), or a temporary folder of this run removed by :meth:`close_run`."""
        given = self.options.work_root
        if given:
            root = Path(given)
            root.mkdir(parents=True, exist_ok=True)
            return root
        self._own_work_root = tempfile.TemporaryDirectory(prefix=prefix)
        return Path(self._own_work_root.name)

    async def start_gateway(self, model: str) -> Any:
        """The model gateway every harness of the run goes through, on ``model``, started."""
        from assay.agents import Gateway

        self._gateway = Gateway(model, model_options=model_options(model))
        await asyncio.to_thread(self._gateway.start)
        return self._gateway

    async def close_run(self) -> None:
        """Stop the gateway and remove the run's own work root (teardown)."""
        if self._gateway is not None:
            await asyncio.to_thread(self._gateway.stop)
            self._gateway = None
        if self._own_work_root is not None:
            self._own_work_root.cleanup()
            self._own_work_root = None

    def limits(self) -> Limits:
        from assay.evals._held import held_limits

        o = self.options
        return held_limits(
            o,
            wall_clock_s=float(o.run_timeout or self.agent_limits["wall_clock_s"]),
            max_steps=int(o.max_steps or self.agent_limits["max_steps"]),
        )


async def run_turn(harness: Harness, prompt: str, spec: RunSpec, label: str) -> AgentResult:
    """``harness.run``: a harness that raises is :class:`HarnessBroke` (a bad setup, UsageError, and an outage,
    InfraError, pass through as they are). The result's own ``error`` and ``infra_error`` are the caller's."""
    try:
        return await harness.run(prompt, spec)
    except (InfraError, UsageError):
        raise
    except Exception as exc:
        raise HarnessBroke(label, exc) from exc


async def run_agent_once(
    harness: Harness, prompt: str, spec: RunSpec, ctx: AttemptContext, details: dict[str, Any], label: str
) -> AgentResult:
    """One agent run on ``prompt``: the harness closed after it, its spend kept on ``ctx`` (an attempt cut short
    keeps it), what it did written into ``details``; a failed model backend is an InfraError naming ``label``
    (the case), never the agent getting worse; a harness that raised is :class:`HarnessBroke`. The agent's own
    error is left to the caller (:func:`agent_broke`)."""
    try:
        result = await run_turn(harness, prompt, spec, label)
    finally:
        await harness.close()
    ctx.spent = result.usage
    details.update(
        answer=result.answer,
        commands=record_lines(result.tool_record),
        cut_off=result.cut_off,
        model_ran=result.model_ran,
        steps=result.steps,
    )
    if result.containment is not None:  # the limits it was held to, which stopped it, what was killed
        details["containment"] = result.containment.model_dump(mode="json")
    if result.infra_error:
        raise InfraError(f"{label}: the model backend failed: {result.infra_error}")
    return result


def broken(
    by: BrokenBy,
    reason: str,
    details: dict[str, Any],
    *,
    usage: Usage | None = None,
    metrics: dict[str, float] | None = None,
) -> Outcome:
    """The outcome of a run in which the harness or the agent broke: ERROR, measured against the subject like a
    failure, ``broken_by`` saying which, ``reason`` in the details and the error. The one rule of the four agent
    benchmarks; what broke behind the agent (the model backend) never reaches here (INFRA_ERROR)."""
    from assay.exec import Outcome
    from assay.runs import ErrorInfo, Status

    details["reason"] = reason
    return Outcome(
        status=Status.ERROR,
        error=ErrorInfo(type="HarnessError" if by == "harness" else "AgentError", message=reason[:2000]),
        details=details,
        usage=usage,
        broken_by=by,
        **({"metrics": metrics} if metrics is not None else {}),
    )


@overload
def agent_broke(
    result: HarnessBroke,
    details: dict[str, Any],
    metrics: dict[str, Any] | None = None,
    *,
    usage: Usage | None = None,
) -> Outcome: ...


@overload
def agent_broke(
    result: AgentResult,
    details: dict[str, Any],
    metrics: dict[str, Any] | None = None,
    *,
    usage: Usage | None = None,
) -> Outcome | None: ...


def agent_broke(
    result: AgentResult | HarnessBroke,
    details: dict[str, Any],
    metrics: dict[str, Any] | None = None,
    *,
    usage: Usage | None = None,
) -> Outcome | None:
    """:func:`broken` for a run of :func:`run_agent_once`: the harness raised (``result`` is the
    :class:`HarnessBroke`; ``usage`` what the attempt had spent) or the agent broke (``result.error``); None when
    neither did."""
    if isinstance(result, HarnessBroke):
        return broken("harness", f"the harness broke: {result}", details, usage=usage, metrics=metrics)
    if not result.error:
        return None
    return broken("agent", f"the agent broke: {result.error}", details, usage=result.usage, metrics=metrics)
