"""What the benchmarks that put a harness to work on a model share (tasks, code, sessions): the harness under
test, the model it runs on, the judge's model and the caps of one agent run, read from the same options."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assay.agents import Limits
from assay.errors import ConfigError, InfraError

if TYPE_CHECKING:
    from assay.agents import AgentResult, Harness, RunSpec
    from assay.exec import AttemptContext, Outcome

__all__ = ["HarnessedOptions", "agent_broke", "run_agent_once"]


class HarnessedOptions:
    """``--harness`` (default :attr:`default_harness`), ``--model`` (required: every option also reads its
    ``ASSAY_*`` variable), ``--judge-model`` (default the model), ``--max-steps`` and ``--run-timeout``
    (defaults :attr:`agent_limits`)."""

    options: dict[str, Any]
    default_harness: ClassVar[str] = "reference"
    agent_limits: ClassVar[dict[str, float]] = {"wall_clock_s": 600.0, "max_steps": 30}

    @property
    def harness_name(self) -> str:
        return str(self.options.get("harness") or self.default_harness)

    @property
    def model(self) -> str:
        model = self.options.get("model")
        if not model:
            raise ConfigError("--model is required (or set ASSAY_MODEL): the model the harness runs on")
        return str(model)

    @property
    def judge_model(self) -> str:
        return str(self.options.get("judge_model") or self.model)

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
        given = self.options.get("work_root")
        if given:
            root = Path(given)
            root.mkdir(parents=True, exist_ok=True)
            return root
        self._own_work_root = tempfile.TemporaryDirectory(prefix=prefix)
        return Path(self._own_work_root.name)

    async def start_gateway(self, model: str) -> Any:
        """The model gateway every harness of the run goes through, on ``model``, started."""
        from assay.agents import Gateway
        from assay.evals.tasks._run import model_options

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
        o = self.options
        return Limits(
            wall_clock_s=float(o.get("run_timeout") or self.agent_limits["wall_clock_s"]),
            max_steps=int(o.get("max_steps") or self.agent_limits["max_steps"]),
        )


async def run_agent_once(
    harness: Harness, prompt: str, spec: RunSpec, ctx: AttemptContext, details: dict[str, Any], label: str
) -> AgentResult:
    """One agent run on ``prompt``: the harness closed after it, its spend kept on ``ctx`` (an attempt cut short
    keeps it), what it did written into ``details``; a failed model backend is an InfraError naming ``label``
    (the case), never the agent getting worse. The agent's own error is left to the caller."""
    from assay.evals.tasks._run_adapter import record_lines

    try:
        result = await harness.run(prompt, spec)
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
    if result.infra_error:
        raise InfraError(f"{label}: the model backend failed: {result.infra_error}")
    return result


def agent_broke(
    result: AgentResult, details: dict[str, Any], metrics: dict[str, Any] | None = None
) -> Outcome | None:
    """The outcome of a run in which the agent itself broke (``result.error``: it crashed, its output was not
    readable): ERROR, measured against the subject like a failure; None when it did not break.

    The one rule for every benchmark that runs a harness. What broke behind the agent (the model backend,
    ``result.infra_error``) never reaches here: :func:`run_agent_once` makes it INFRA_ERROR.
    """
    if not result.error:
        return None
    from assay.exec import Outcome
    from assay.runs._records import ErrorInfo, Status

    details["reason"] = f"the agent broke: {result.error}"
    return Outcome(
        status=Status.ERROR,
        error=ErrorInfo(type="AgentError", message=details["reason"][:2000]),
        details=details,
        usage=result.usage,
        **({"metrics": metrics} if metrics is not None else {}),
    )
