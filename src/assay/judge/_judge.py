"""The judge: one model call on the finished transcript, retried with the parse error when unusable.

After ``1 + retries`` unusable answers the outcome has ``answer=None`` and the caller records ERROR (never
FAIL). An :class:`~assay.errors.InfraError` from the model (backend down, quota) propagates: the run stops.
A refusal of the request (:class:`~assay.models.ModelResponseError`, e.g. context too long) is not retried:
the same request would be refused again, so it ends as ``answer=None`` with the refusal as the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.judge._answer import JudgeAnswer, JudgeParseError, answer_schema, parse_judge_answer
from assay.judge._prompt import JudgeView, judge_messages, retry_message
from assay.models import ChatModel, Message, ModelResponseError, Usage

__all__ = ["Judge", "JudgeOutcome"]

#: what every judge call is sent unless the caller gives other options
DEFAULT_OPTIONS: dict[str, Any] = {"temperature": 0}


@dataclass
class JudgeOutcome:
    """One judging: the parsed answer (None when unusable), every raw reply, and the judge's spend."""

    answer: JudgeAnswer | None
    raw: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    parse_error: str | None = None


class Judge:
    """Grades a :class:`JudgeView` with ``model``; ``options`` go to every call (default temperature 0).

    ``constrained`` asks the backend to decode only JSON of the answer's schema
    (``response_format={"type": "json_object", "schema": ...}``, as llama.cpp servers take it: the
    ``local`` provider, llama-server). A small model then always writes the shape, whatever it scores;
    a backend that does not take that option refuses the call.
    """

    def __init__(
        self,
        model: ChatModel,
        retries: int = 2,
        *,
        options: Mapping[str, Any] | None = None,
        constrained: bool = False,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, got {retries}")
        self.model = model
        self.retries = retries
        self.options = dict(DEFAULT_OPTIONS if options is None else options)
        self.constrained = constrained

    def call_options(self, n_turns: int) -> dict[str, Any]:
        """The options of each call judging a conversation of ``n_turns`` turns."""
        if not self.constrained:
            return dict(self.options)
        return {**self.options, "response_format": {"type": "json_object", "schema": answer_schema(n_turns)}}

    async def judge(self, view: JudgeView) -> JudgeOutcome:
        messages: list[Message] = judge_messages(view)
        options = self.call_options(view.n_turns)
        outcome = JudgeOutcome(answer=None)
        for _ in range(1 + self.retries):
            try:
                out = await self.model.generate(messages, **options)
            except ModelResponseError as exc:
                outcome.parse_error = f"the judge model refused the request: {exc}"
                return outcome
            outcome.calls += 1
            outcome.usage = outcome.usage + out.usage
            outcome.raw.append(out.text)
            try:
                outcome.answer = parse_judge_answer(out.text, n_turns=view.n_turns)
            except JudgeParseError as exc:
                outcome.parse_error = str(exc)
                messages = [*messages, Message("assistant", out.text), retry_message(str(exc), view)]
                continue
            outcome.parse_error = None
            return outcome
        return outcome


#: backends that hold decoding to a JSON schema passed as ``response_format`` (llama.cpp, vLLM, Ollama serve
#: ``openai-compat/``; the embedded model is llama.cpp): a weak judge writes the answer's shape only so held
SCHEMA_DECODING_PROVIDERS = ("local/", "openai-compat/")


def holds_to_schema(spec: str, choice: str = "auto") -> bool:
    """Whether the judge model ``spec`` is asked for the answer's schema: ``on``, ``off``, or ``auto`` (by provider)."""
    if choice not in ("auto", "on", "off"):
        raise ValueError(f"choice must be auto, on or off, got {choice!r}")
    if choice != "auto":
        return choice == "on"
    return spec.startswith(SCHEMA_DECODING_PROVIDERS)
