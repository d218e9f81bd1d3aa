"""The judge loop: one model call, its answer parsed by the caller's function, retried with what was wrong.

The one retry rule, the same for every benchmark:

- a reply the parse function refuses (it raises :class:`JudgeParseError`) is sent back to the judge with the
  error, and the judge is asked again: at most ``1 + retries`` calls (:data:`DEFAULT_RETRIES` retries);
  after the last the outcome has ``answer=None`` and the caller records the attempt unjudged (ERROR), never
  FAIL and never a zero;
- a refusal of the request (:class:`~assay.models.ModelResponseError`, e.g. context too long) is not
  retried: the same request would be refused again; it ends as ``answer=None`` with the refusal as the error;
- an outage (:class:`~assay.errors.InfraError`: backend down, quota, credentials) propagates: the run stops;
- any other exception from the parse function is a bug and propagates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from assay.models import ChatModel, Message, ModelResponseError, Usage

__all__ = [
    "DEFAULT_OPTIONS",
    "DEFAULT_RETRIES",
    "SCHEMA_DECODING_PROVIDERS",
    "Judge",
    "JudgeOutcome",
    "JudgeParseError",
    "holds_to_schema",
    "refusal",
]

T = TypeVar("T")

#: what every judge call is sent unless the caller gives other options
DEFAULT_OPTIONS: dict[str, Any] = {"temperature": 0}
#: retries after an unusable answer (so at most three calls)
DEFAULT_RETRIES = 2


class JudgeParseError(ValueError):
    """The judge's text is not a usable answer; the message says what to fix (it is sent back on retry)."""


def refusal(exc: ModelResponseError) -> str:
    """The error of an outcome whose request the judge's backend refused."""
    return f"the judge model refused the request: {exc}"


@dataclass
class JudgeOutcome(Generic[T]):
    """One judging: the parsed answer (None when unusable), every raw reply, and the judge's spend.

    ``error`` is the last parse error or the refusal (None once an answer parsed).
    """

    answer: T | None = None
    raw: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    error: str | None = None
    #: the backend refused the request (not retried)
    refused: bool = False


def _default_retry(error: str) -> str:
    return f"Your answer could not be used: {error}. Reply again with ONE JSON object in the shape shown."


class Judge:
    """Asks ``model`` for a judgment; ``options`` go to every call (default temperature 0).

    ``constrained`` asks the backend to decode only JSON of the schema given to :meth:`ask`
    (``response_format={"type": "json_object", "schema": ...}``, as llama.cpp servers take it: the
    ``local`` provider, llama-server). A small model then always writes the shape, whatever it judges;
    a backend that does not take that option refuses the call.
    """

    def __init__(
        self,
        model: ChatModel,
        retries: int = DEFAULT_RETRIES,
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

    def call_options(self, schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The options of each call: the judge's own, plus the schema when decoding is held to it."""
        if not self.constrained or schema is None:
            return dict(self.options)
        return {**self.options, "response_format": {"type": "json_object", "schema": dict(schema)}}

    async def ask(
        self,
        messages: Sequence[Message],
        parse: Callable[[str], T],
        *,
        schema: Mapping[str, Any] | None = None,
        retry: Callable[[str], str] | None = None,
    ) -> JudgeOutcome[T]:
        """Send ``messages``; ``parse`` the reply (raising :class:`JudgeParseError`) under the one retry rule.

        ``schema`` holds decoding to the answer's JSON schema when the judge is ``constrained``; ``retry``
        words what the judge is told after an unusable answer (given the parse error).
        """
        options = self.call_options(schema)
        sent = list(messages)
        outcome: JudgeOutcome[T] = JudgeOutcome()
        for _ in range(1 + self.retries):
            try:
                out = await self.model.generate(sent, **options)
            except ModelResponseError as exc:
                outcome.error, outcome.refused = refusal(exc), True
                return outcome
            outcome.calls += 1
            outcome.usage = outcome.usage + out.usage
            outcome.raw.append(out.text)
            try:
                outcome.answer = parse(out.text)
            except JudgeParseError as exc:
                outcome.error = str(exc)
                again = (retry or _default_retry)(str(exc))
                sent = [*sent, Message("assistant", out.text), Message("user", again)]
                continue
            outcome.error = None
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
