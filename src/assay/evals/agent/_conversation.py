"""One scenario's conversation: the simulated user and the agent under test, objective after objective.

Per turn: the opening message (literal or simulated) goes to ``harness.run``; the simulator answers each agent
answer with a follow-up (sent to the agent again, same turn), ``<<NEXT>>`` (on to the next objective) or
``<<STOP>>`` (the conversation ends). A turn that reaches ``max_user_messages`` without ``<<NEXT>>`` moves on
to the next objective, and the conversation says it ended by ``max_user_messages``. Every run gets the
previous answer's ``session_id`` and the conversation so far as OpenAI-style ``history``, so harnesses that
keep sessions and harnesses that replay history both keep the context; ``new_session`` drops both.

An agent's ``infra_error`` raises :class:`~assay.errors.InfraError`; its ``error`` or ``cut_off`` ends the
conversation (``agent_error`` / ``cut_off``). Each run is held to ``limits.max_steps`` model calls at the
gateway (:func:`~assay.agents.run_step_capped`), whichever harness it is. The spend so far is kept in a :class:`RunningCost` the caller
owns, so a scenario cancelled on a timeout still says what it spent, and which role's call was cut.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from assay.agents import AgentResult, Harness, RunSpec, run_step_capped
from assay.errors import InfraError
from assay.evals.agent._record import ConversationTurn, EndedBy, Message, RoleCost
from assay.evals.agent._scenario import Scenario
from assay.evals.agent._simulator import SimReply, Simulator

__all__ = ["RunningCost", "converse"]

Role = Literal["agent", "simulator"]


@dataclass
class RunningCost:
    """What the agent and the simulator have spent so far; read it after a cancellation.

    ``agent.calls`` counts agent runs (one per user message; its model calls are ``usage.calls``);
    ``simulator.calls`` counts model calls. ``in_flight`` names the role whose call was under way when the
    conversation was cut: that call's spend is unknown, so :meth:`snapshot` marks the role incomplete.
    """

    agent: RoleCost = field(default_factory=RoleCost)
    simulator: RoleCost = field(default_factory=RoleCost)
    in_flight: Role | None = None
    #: the conversation so far (the same list :func:`converse` returns)
    turns: list[ConversationTurn] = field(default_factory=list)

    def add_agent(self, result: AgentResult) -> None:
        a = self.agent
        a.calls += 1
        a.usage = a.usage + result.usage
        # no tokens reported (an answer-only harness, a run that failed early) or a model call cancelled by
        # the wall clock: the spend is not fully known
        if result.usage.total_tokens == 0 or result.cut_off == "wall_clock":
            a.complete = False

    def add_simulator(self, reply: SimReply) -> None:
        if not reply.called:
            return
        s = self.simulator
        s.calls += reply.calls
        s.usage = s.usage + reply.usage
        if reply.usage.total_tokens == 0:
            s.complete = False

    def snapshot(self) -> dict[str, RoleCost]:
        """``{"agent": ..., "simulator": ...}``, copies, the role in flight marked incomplete."""
        out = {"agent": self.agent.model_copy(deep=True), "simulator": self.simulator.model_copy(deep=True)}
        if self.in_flight is not None:
            out[self.in_flight].complete = False
        return out

    async def _track(self, role: Role, call: Awaitable[Any]) -> Any:
        self.in_flight = role
        out = await call
        self.in_flight = None  # left set when the call raised or was cancelled: its spend is unknown
        return out


def _model_ran(seen: list[str]) -> str | None:
    # one model is the normal case; several (a harness that switched) are all named, so a check against one fails
    return ", ".join(seen) if seen else None


async def converse(
    scenario: Scenario,
    harness: Harness,
    simulator: Simulator,
    spec_factory: Callable[[], RunSpec],
    max_user_messages: int = 3,
    on_progress: Callable[[str], None] | None = None,
    cost: RunningCost | None = None,
) -> tuple[list[ConversationTurn], EndedBy, RoleCost, RoleCost, str | None]:
    """Play ``scenario`` against ``harness``: (turns, how it ended, agent cost, simulator cost, model ran).

    ``spec_factory`` gives each run's :class:`RunSpec` (workdir, limits, route); its ``session_id`` and
    ``history`` are set here. ``on_progress`` gets a short note before each agent run."""
    if max_user_messages < 1:
        raise ValueError(f"max_user_messages must be at least 1, got {max_user_messages}")
    running = cost if cost is not None else RunningCost()
    turns = running.turns
    session_id: str | None = None
    history: list[dict[str, Any]] = []
    models: list[str] = []
    capped = False
    ended: EndedBy | None = None

    def done(how: EndedBy) -> tuple[list[ConversationTurn], EndedBy, RoleCost, RoleCost, str | None]:
        snap = running.snapshot()
        return turns, how, snap["agent"], snap["simulator"], _model_ran(models)

    for index, turn in enumerate(scenario.turns, start=1):
        if turn.new_session:
            session_id, history = None, []
        conv = ConversationTurn(index=index, objective=turn.objective, new_session=turn.new_session)
        earlier = [m for t in turns for m in t.messages]
        opening: SimReply = await running._track("simulator", simulator.opening(scenario, turn, earlier))
        running.add_simulator(opening)
        if opening.marker == "stop":
            return done("stop_marker")
        turns.append(conv)
        text = opening.text
        for sent in range(1, max_user_messages + 1):
            conv.messages.append(Message(role="user", text=text))
            if on_progress is not None:
                on_progress(f"turn {index}/{len(scenario.turns)}, user message {sent}")
            spec = replace(spec_factory(), session_id=session_id, history=list(history))
            # --max-steps holds every harness: its model calls are counted and cut off at the gateway
            result: AgentResult = await running._track("agent", run_step_capped(harness, text, spec))
            running.add_agent(result)
            if result.containment is not None:
                conv.containment = result.containment.model_dump(mode="json")
            if result.model_ran and result.model_ran not in models:
                models.append(result.model_ran)
            if result.infra_error:
                raise InfraError(f"scenario {scenario.id}: the agent's backend failed: {result.infra_error}")
            conv.messages.append(
                Message(
                    role="assistant",
                    text=result.answer,
                    tool_calls=result.tool_record,
                    record_level=result.record_level,
                )
            )
            history += [{"role": "user", "content": text}, {"role": "assistant", "content": result.answer}]
            session_id = result.session_id
            if result.error:
                conv.agent_error = result.error
                return done("agent_error")
            if result.cut_off:
                conv.cut_off = result.cut_off
                return done("cut_off")
            so_far = [m for t in turns for m in t.messages]
            reply: SimReply = await running._track("simulator", simulator.reply(scenario, turn, so_far))
            running.add_simulator(reply)
            if reply.marker == "stop":
                return done("stop_marker")
            if reply.marker == "next":
                break
            if sent == max_user_messages:  # the objective is left unmet: on to the next one
                capped = True
                break
            text = reply.text
    ended = "max_user_messages" if capped else "objectives_done"
    return done(ended)
