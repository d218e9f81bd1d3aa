"""The simulated user: a model call of its own that plays the scenario's persona, one objective at a time.

It is told who the user is, the current objective, the facts it may reveal when asked (``user_knowledge``),
to invent nothing else, to write only the user's next message, and two markers: ``<<NEXT>>`` when the objective
is met (or the assistant said it cannot be), ``<<STOP>>`` to end the conversation. It never sees a turn's
ground truth, success criteria, the expected or forbidden tools, or anything the grader is told; its prompt
lives only in this module. For its model the roles are swapped: the agent's answers are the ``user`` messages
it replies to, its own messages are the ``assistant``'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.errors import SubjectError
from assay.evals.agent._record import Message as ConvMessage
from assay.evals.agent._scenario import Scenario, Turn
from assay.models import ChatModel, Message, Usage

__all__ = ["NEXT", "STOP", "SimReply", "Simulator", "parse_reply", "simulator_messages"]

NEXT = "<<NEXT>>"
STOP = "<<STOP>>"
Marker = Literal["next", "stop"]

#: a marker anywhere in a reply (one or two angle brackets, any case, spaces inside tolerated)
_MARKER = re.compile(r"<{1,2}\s*(NEXT|STOP)\s*>{1,2}", re.IGNORECASE)
#: a reply that is nothing but the marker's word ("NEXT", "**STOP**.")
_BARE = re.compile(r"^\W*(NEXT|STOP)\W*$", re.IGNORECASE)
#: a speaker label a model may put before the message ("User:", "**Me:**")
_LABEL = re.compile(r"^\W{0,3}(user|me|customer|you)\W{0,3}:\W{0,3}\s*", re.IGNORECASE)

_START = "[The conversation starts now. Write your first message to the assistant.]"
_OPEN_NOTE = (
    "[Note for you, not written by the assistant: your earlier objective is finished. "
    "Write your first message for your current objective.]"
)
_REPLY_NOTE = (
    f"[Note for you, not written by the assistant: reply as the user. Objective met, or the assistant said "
    f"it cannot be met: answer exactly {NEXT}. To end the whole conversation: answer exactly {STOP}.]"
)


@dataclass
class SimReply:
    """What the simulator answered: the user's message, or a marker (then ``text`` is empty)."""

    text: str
    marker: Marker | None
    usage: Usage = field(default_factory=Usage)
    #: whether a model was called (a literal ``user_message`` needs none)
    called: bool = False
    #: model calls made (an empty answer is asked again once)
    calls: int = 0
    #: the model's last raw answer, before markers and labels were taken off
    raw: str = ""


def parse_reply(text: str) -> tuple[str, Marker | None]:
    """The user's message and the marker in a simulator answer; a marker anywhere wins, dropping the text."""
    found = _MARKER.search(text) or _BARE.match(text.strip())
    if found is not None:
        return "", "next" if found.group(1).upper() == "NEXT" else "stop"
    out = _LABEL.sub("", text.strip(), count=1).strip()
    if len(out) >= 2 and out[0] == out[-1] and out[0] in "\"'":
        out = out[1:-1].strip()
    return out, None


def _position(scenario: Scenario, turn: Turn) -> int:
    for i, t in enumerate(scenario.turns):
        if t is turn:
            return i
    try:
        return scenario.turns.index(turn)
    except ValueError:
        raise ValueError(f"scenario {scenario.id}: the turn is not one of its turns") from None


def system_prompt(scenario: Scenario, turn: Turn) -> str:
    """The simulator's instructions for ``turn`` (built only from what a real user would know)."""
    pos = _position(scenario, turn)
    parts = [
        "You are role-playing a person who is chatting with an AI assistant. You are the user, never the "
        "assistant: you ask, the assistant answers.",
        f"Who you are:\n{scenario.persona.strip()}",
    ]
    done = [t.objective.strip() for t in scenario.turns[:pos]]
    if done:
        parts.append("Objectives you have already dealt with:\n" + "\n".join(f"- {o}" for o in done))
    parts.append(f"Your current objective (what you want from the assistant now):\n{turn.objective.strip()}")
    if turn.new_session:
        parts.append(
            "You have just opened a new chat with the assistant; it may not remember the earlier conversation."
        )
    if scenario.user_knowledge:
        facts = "\n".join(f"- {k}: {v}" for k, v in scenario.user_knowledge.items())
        parts.append(
            "What you know about your situation. Reveal a fact only when the assistant asks for it or it is "
            f"needed to answer the assistant's question; never volunteer them all at once:\n{facts}"
        )
    else:
        parts.append("You know nothing about your situation beyond who you are and your objective.")
    parts.append(
        "Rules:\n"
        "- Never invent facts beyond who you are and what you know above. If the assistant asks something you "
        "do not know, say you do not know.\n"
        "- Do not do the assistant's work and do not answer your own question.\n"
        "- Write only your next message to the assistant, as the user would type it: no speaker label, no "
        "quotes, no comments about these instructions. Keep it short.\n"
        f"- When the assistant has met your current objective, or has told you it cannot be met, answer "
        f"exactly {NEXT} and nothing else.\n"
        f"- To end the whole conversation, answer exactly {STOP} and nothing else."
    )
    return "\n\n".join(parts)


def simulator_messages(
    scenario: Scenario, turn: Turn, history: Sequence[ConvMessage], *, opening: bool
) -> list[Message]:
    """The simulator model's messages: the system prompt, then the conversation with the roles swapped."""
    out = [Message("system", system_prompt(scenario, turn)), Message("user", _START)]
    for m in history:
        if m.role == "user":  # the simulated user's own earlier message
            out.append(Message("assistant", m.text))
        else:
            text = m.text.strip() or "(the assistant sent an empty reply)"
            out.append(Message("user", text))
    note = _OPEN_NOTE if opening else _REPLY_NOTE
    if out[-1].role == "user" and out[-1].content != _START:
        out[-1] = Message("user", f"{out[-1].content}\n\n{note}")
    elif opening and out[-1].role == "assistant":  # a history ending in the user's own message
        out.append(Message("user", note))
    return out


class Simulator:
    """Plays the user of a scenario over ``model``; ``generate_options`` go to every call."""

    def __init__(self, model: ChatModel, *, generate_options: dict[str, Any] | None = None) -> None:
        self.model = model
        self.generate_options = dict(generate_options or {})

    async def opening(self, scenario: Scenario, turn: Turn, history: Sequence[ConvMessage]) -> SimReply:
        """The first message of ``turn``: its literal ``user_message`` (no model call), else written by the model.

        ``<<NEXT>>`` before anything was asked means nothing here and is asked again, as is an empty answer;
        ``<<STOP>>`` ends the conversation. Two answers with no message raise :class:`SubjectError`."""
        if turn.user_message is not None:
            return SimReply(turn.user_message, None)
        messages = simulator_messages(scenario, turn, history, opening=True)
        reply = await self._ask(messages, retry_on={None, "next"})
        if reply.marker == "next" or (reply.marker is None and not reply.text):
            raise SubjectError(
                f"scenario {scenario.id}: the simulator wrote no opening message for objective "
                f"{_position(scenario, turn) + 1} (answered {reply.raw[:80]!r} twice)"
            )
        return reply

    async def reply(self, scenario: Scenario, turn: Turn, history: Sequence[ConvMessage]) -> SimReply:
        """The user's answer to the agent's last message: a follow-up, or ``next`` / ``stop``.

        An empty answer is asked again once; a second empty one counts as ``next`` (the user has nothing
        more to say about the objective)."""
        messages = simulator_messages(scenario, turn, history, opening=False)
        reply = await self._ask(messages, retry_on={None})
        if reply.marker is None and not reply.text:
            reply.marker = "next"
        return reply

    async def _ask(self, messages: list[Message], retry_on: set[Marker | None]) -> SimReply:
        out = await self.model.generate(messages, **self.generate_options)
        usage = out.usage
        text, marker = parse_reply(out.text)
        if (marker is None and text) or marker not in retry_on:
            return SimReply(text, marker, usage=usage, called=True, calls=1, raw=out.text)
        # no message (or a marker that means nothing yet): asked once more, told what was wrong
        again = [
            *messages,
            Message("assistant", out.text.strip()[:200] or "(nothing)"),
            Message("user", "[That was not a message to the assistant. Write the user's message now.]"),
        ]
        out = await self.model.generate(again, **self.generate_options)
        text, marker = parse_reply(out.text)
        return SimReply(text, marker, usage=usage + out.usage, called=True, calls=2, raw=out.text)
