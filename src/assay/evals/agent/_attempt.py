"""One attempt of one scenario: fresh workdir, setup, conversation, code checks, judge, re-derived verdict.

The three roles are separate model calls made here in turn: the simulator plays the user, the harness runs
the agent, and the judge reads the finished transcript (never the simulator's prompt). A failed code check is
FAIL whatever else happens: when the judge's answer is unparseable or does not fit, the judge fails, or the agent
or its harness breaks, the check still decides (``_verdict.decided_in_code``) and the other problem is recorded
beside it (``details["role_problem"]``, ``broken_by``); without such a check those stay ERROR. What was spent is kept
in ``AttemptContext.spent``/``partial_details`` as soon as it is known, so an attempt cut by ``--timeout`` or an
outage still records its spend and the conversation so far.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.agents import Harness, Limits, Route, RunSpec
from assay.errors import InfraError, UsageError
from assay.evals._harnessed import BrokenBy, broken
from assay.evals.agent._record import CheckResult, ConversationTurn, RoleCost, ScenarioRecord
from assay.evals.agent._scenario import Scenario
from assay.evals.agent._verdict import check_label, decided_in_code
from assay.exec import AttemptContext, Outcome
from assay.models import ChatModel, Usage
from assay.runs import ErrorInfo, Status

__all__ = ["AttemptPlan", "model_matches", "run_scenario"]


@dataclass
class AttemptPlan:
    """What one attempt needs, built by the benchmark for the suite it runs."""

    scenario: Scenario
    documents_dir: Path
    embedder: Any
    #: builds the harness for this attempt from what ``_setup.prepare`` made (documents index, memory store)
    make_harness: Callable[[Any], Harness]
    simulator_model: ChatModel
    judge_model: ChatModel
    route: Route | None = None
    fence: bool = False
    #: the caps of each agent run (one user message)
    limits: Limits = field(default_factory=Limits)
    #: the model the agent must have run (``--agent-model``); None: not checked
    agent_model: str | None = None
    #: copy the setup documents into ``<workdir>/documents/`` for a harness that does not take the world
    #: (:attr:`~assay.agents.Harness.takes_world`); one that does gets documents and memory over MCP
    copy_documents: bool = False
    #: the embedder spec the documents index and memory store are built with (the world server reopens them)
    world_embedder: str | None = None
    #: options of every simulator / judge call (a cap on tokens: a weak model can ramble to its context's end)
    simulator_options: dict[str, Any] | None = None
    judge_options: dict[str, Any] | None = None
    #: ask the judge's backend for JSON of the answer's schema only (llama.cpp backends take it)
    judge_constrained: bool = False
    #: messages the simulated user may send per objective
    max_user_messages: int = 3
    agent_label: str | None = None
    simulator_label: str | None = None
    judge_label: str | None = None


def model_matches(want: str, ran: str | None) -> bool:
    """Whether the model an agent reported (``ran``) is ``want``: equal, or equal to its name after
    ``provider/`` (``openai/gpt-4o`` is satisfied by a reported ``gpt-4o``)."""
    if not ran:
        return False
    return ran == want or ran == want.partition("/")[2] or ran.partition("/")[2] == want


def _copy_documents(scenario: Scenario, documents_dir: Path, workdir: Path) -> None:
    target = workdir / "documents"
    target.mkdir(parents=True, exist_ok=True)
    for doc in scenario.setup.documents:
        dest = target / doc.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if doc.text is not None:
            dest.write_text(doc.text, encoding="utf-8")
        else:
            shutil.copyfile(documents_dir / doc.name, dest)


def _roles_usage(cost: dict[str, RoleCost]) -> Usage:
    total = Usage()
    for role in ("simulator", "agent", "judge"):
        if role in cost:
            total = total + cost[role].usage
    return total


def _record(plan: AttemptPlan, turns: list[ConversationTurn], cost: dict[str, RoleCost]) -> ScenarioRecord:
    s = plan.scenario
    return ScenarioRecord(
        scenario=s.id,
        category=s.category,
        turns=turns,
        cost=cost,  # type: ignore[arg-type]
        agent_model=plan.agent_label,
        judge_model=plan.judge_label,
        simulator_model=plan.simulator_label,
    )


def _metrics(
    checks: list[CheckResult], turns: list[ConversationTurn], cost: dict[str, RoleCost]
) -> dict[str, float]:
    out: dict[str, float] = {"turns": float(len(turns))}
    if checks:
        out["code_checks_passed"] = sum(c.passed for c in checks) / len(checks)
    for role in ("agent", "judge", "simulator"):
        if role in cost:
            out[f"tokens_{role}"] = float(cost[role].usage.total_tokens)
    return out


def _failed_in_code(
    record: ScenarioRecord,
    decided: list[CheckResult],
    problem: ErrorInfo,
    role: str,
    *,
    usage: Usage | None,
    metrics: dict[str, float] | None,
    broken_by: BrokenBy | None = None,
    details: dict[str, Any] | None = None,
) -> Outcome:
    """FAIL on the code checks ``decided``, the judge's or agent's problem recorded beside it."""

    why = "code check " + "; ".join(check_label(c) for c in decided)
    record.reason = f"{why} | the {role} problem beside it: {problem.message}"[:2000]
    out = {**(details or record.model_dump(mode="json")), "reason": record.reason}
    out["role_problem"] = {"role": role, **problem.model_dump(mode="json")}
    return Outcome(
        status=Status.FAIL,
        details=out,
        usage=usage,
        broken_by=broken_by,
        **({"metrics": metrics} if metrics is not None else {}),
    )


async def run_scenario(plan: AttemptPlan, ctx: AttemptContext) -> Outcome:
    """Attempt ``plan.scenario`` once; raises InfraError on an outage of any role (the run stops)."""
    from assay.evals.agent._conversation import RunningCost, converse
    from assay.evals.agent._end_state import end_state_checks
    from assay.evals.agent._external import serve_world
    from assay.evals.agent._judge_view import JudgeView, judge_view
    from assay.evals.agent._setup import prepare
    from assay.evals.agent._simulator import Simulator
    from assay.evals.agent._verdict import derive
    from assay.evals.agent.checks import check_tools, run_checks
    from assay.judge import Judge

    scenario = plan.scenario
    running = RunningCost()
    judge_cost: RoleCost | None = None

    def keep_partial(judge_incomplete: bool) -> None:
        # what the runner records on an attempt cut short: the spend so far, per role, and the turns so far
        cost: dict[str, RoleCost] = running.snapshot()
        if judge_cost is not None:
            cost["judge"] = judge_cost
        elif judge_incomplete:
            cost["judge"] = RoleCost(complete=False)
        record = _record(plan, list(running.turns), cost)
        ctx.spent = _roles_usage(cost)
        ctx.partial_details = record.model_dump(mode="json")

    judging = False
    as_files = False  # the documents given as files: a read of them is the documents kind
    with tempfile.TemporaryDirectory(prefix=f"assay-agent-{scenario.id[:40]}-") as tmp:
        workdir = Path(tmp) / "work"
        workdir.mkdir()
        try:
            # the memory store lives beside the workdir, never in it (the agent must reach it only by its tools)
            prepared = prepare(scenario, workdir, plan.documents_dir, plan.embedder, memory_root=Path(tmp))
            try:
                harness = plan.make_harness(prepared)
                as_files = plan.copy_documents and not harness.takes_world
                if as_files:
                    _copy_documents(scenario, plan.documents_dir, workdir)
                try:
                    async with serve_world(
                        prepared, Path(tmp), plan.world_embedder, harness.takes_world
                    ) as world:

                        def spec_for() -> RunSpec:
                            return RunSpec(
                                workdir=workdir,
                                limits=plan.limits,
                                route=plan.route,
                                fence=plan.fence,
                                world=world,
                            )

                        turns, ended_by, agent_cost, sim_cost, model_ran = await converse(
                            scenario,
                            harness,
                            Simulator(plan.simulator_model, generate_options=plan.simulator_options),
                            spec_for,
                            max_user_messages=plan.max_user_messages,
                            cost=running,
                        )
                finally:
                    await harness.close()
            finally:
                prepared.close()
            cost: dict[str, RoleCost] = {"agent": agent_cost, "simulator": sim_cost}
            record = _record(plan, turns, cost)
            record.ended_by = ended_by
            record.model_ran = model_ran
            if plan.agent_model is not None and not model_matches(plan.agent_model, model_ran):
                # the agent ran another model: the scenario measured something else, so it is discarded
                keep_partial(False)
                record.reason = (
                    f"--agent-model {plan.agent_model}: the agent ran {model_ran or 'an unreported model'}"
                )
                return Outcome(
                    status=Status.INFRA_ERROR,
                    error=ErrorInfo(type="AgentModelMismatch", message=record.reason),
                    details=record.model_dump(mode="json"),
                    usage=_roles_usage(cost),
                    metrics=_metrics([], turns, cost),
                )
            # the workdir as the conversation left it: read now, once the agent is done
            checks = run_checks(scenario, turns, as_files) + end_state_checks(scenario, workdir)
            record.checks = checks
            record.not_measured = check_tools(scenario, turns, as_files)[1]
            broke = next((t for t in turns if t.agent_error), None)
            if broke is not None:
                record.failed_turn = broke.index
                record.reason = f"the agent broke on turn {broke.index}: {broke.agent_error}"
                keep_partial(False)
                metrics = _metrics(checks, turns, cost)
                decided = decided_in_code(checks, broke.index)
                if decided:
                    problem = ErrorInfo(type="AgentError", message=f"the agent broke: {record.reason}")
                    usage = _roles_usage(cost)
                    return _failed_in_code(
                        record, decided, problem, "agent", usage=usage, metrics=metrics, broken_by="agent"
                    )
                details = record.model_dump(mode="json")
                return broken("agent", record.reason, details, usage=_roles_usage(cost), metrics=metrics)
            keep_partial(True)
            judging = True
            judge = Judge(plan.judge_model, options=plan.judge_options, constrained=plan.judge_constrained)
            judged = await judge_view(judge, JudgeView.of(scenario, turns, checks))
            judging = False
            judge_cost = RoleCost(calls=judged.calls, usage=judged.usage)
            cost["judge"] = record.cost["judge"] = judge_cost
            keep_partial(False)
        except (InfraError, UsageError):
            keep_partial(judging)  # an outage or a bad setup: the runner records what ctx holds now
            raise
        except Exception as exc:
            # a role's call failed in a way that is no outage (a request the backend refused, a harness
            # that raised): the scenario was not measured right, so ERROR, with the spend and turns so far
            keep_partial(judging)
            role = "judge" if judging else running.in_flight or "setup"
            message = f"the {role} failed: {type(exc).__name__}: {exc}"[:2000]
            details = {**ctx.partial_details, "reason": message, "failed_role": role}
            if role == "agent":  # the harness itself raised: the one rule of a harness that breaks
                message = f"the harness broke: {type(exc).__name__}: {exc}"[:2000]
            # ... unless a code check already failed on what the agent did: then FAIL, the problem beside it
            so_far = list(running.turns)
            if not judging:
                checks = run_checks(scenario, so_far, as_files)
                checks += end_state_checks(scenario, workdir) if so_far else []
            decided = decided_in_code(checks, None if judging else len(so_far))
            if decided:
                partial = ScenarioRecord.model_validate(ctx.partial_details)
                partial.checks = checks
                by: BrokenBy | None = "harness" if role == "agent" else None
                return _failed_in_code(
                    partial,
                    decided,
                    ErrorInfo(type=type(exc).__name__, message=message),
                    "harness" if by else role,
                    usage=ctx.spent,
                    metrics=_metrics(checks, so_far, partial.cost),  # type: ignore[arg-type]
                    broken_by=by,
                    details={**details, "checks": [c.model_dump(mode="json") for c in checks]},
                )
            if role == "agent":
                return broken("harness", message, details, usage=ctx.spent)
            return Outcome(
                status=Status.ERROR,
                error=ErrorInfo(type=type(exc).__name__, message=message),
                details=details,
                usage=ctx.spent,
            )
        except BaseException:
            keep_partial(judging)  # cancelled by --timeout: the runner records what ctx holds now
            raise
    metrics = _metrics(checks, turns, cost)
    usage = _roles_usage(cost)
    problem: ErrorInfo | None = None
    if judged.answer is None:
        record.reason = f"the judge's answer stayed unparseable after {judged.calls} call(s): {judged.error}"
        record.judgement = {"raw": judged.raw, "parse_error": judged.error}
        problem = ErrorInfo(type="JudgeParseError", message=record.reason[:2000])
    else:
        try:
            verdict = derive(judged.answer, checks, len(turns))
        except ValueError as exc:  # an answer that parsed but does not fit this conversation
            record.reason = f"the judge's answer does not fit the conversation: {exc}"
            record.judgement = {"raw": judged.raw, "answer": judged.answer.model_dump(mode="json")}
            problem = ErrorInfo(type="JudgeAnswerError", message=record.reason[:2000])
    if problem is not None:
        decided = decided_in_code(checks)
        if decided:
            return _failed_in_code(record, decided, problem, "judge", usage=usage, metrics=metrics)
        return Outcome(
            status=Status.ERROR,
            error=problem,
            details=record.model_dump(mode="json"),
            usage=usage,
            metrics=metrics,
        )
    record.judgement = {**verdict.model_dump(mode="json"), "answer": judged.answer.model_dump(mode="json")}
    record.failed_turn = verdict.failed_turn
    record.reason = verdict.reason
    metrics["judged_score"] = float(verdict.score)
    return Outcome(
        status=Status.PASS if verdict.passed else Status.FAIL,
        score=float(verdict.score),
        metrics=metrics,
        details={**record.model_dump(mode="json"), "judged": True},
        usage=usage,
    )
