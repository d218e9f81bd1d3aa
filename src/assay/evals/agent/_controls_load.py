"""Judge controls: frozen, labelled transcripts (``eval/judge_controls/agent/*.yaml``) the judge must grade right.

A control is the material of one judged scenario attempt (the scenario without its script, the finished
conversation, the code checks that ran) plus a label a person wrote: ``PASS`` or ``FAIL``, the failing
dimension or zero rule, the failing turn, who labelled it, against which rubric version and why. Each control
names its ``twin``: the nearest transcript with the opposite label (its near-miss). The judge reads a control
exactly as it reads a scenario attempt, under a neutral scenario id (:func:`neutral_id`): never the control's
name, label or rationale. Its ``checks`` are frozen as ``eval agent`` computes them (a test holds them to it).

Every problem is a ConfigError naming the file and line: bad YAML, an unknown field, a label without its
failing dimension, a control labelled against another rubric version, a twin that is missing or has the
same label, a PASS control with a failed code check (the benchmark fails it whatever the judge says).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from assay.errors import ConfigError
from assay.evals._yaml_lines import KeyLines, line_at, load_with_lines, strip_lines
from assay.evals.agent._judge_view import JudgeView
from assay.evals.agent._record import CheckResult, ConversationTurn, Message
from assay.evals.agent._rubric import DIMENSION_NAMES, RUBRIC_VERSION, ZERO_RULE_NAMES
from assay.evals.agent._scenario import Scenario

__all__ = [
    "CASES",
    "Control",
    "controls_digest",
    "default_controls_dir",
    "load_control",
    "load_controls",
    "neutral_id",
]

#: what a control stands for; the shipped set has a FAIL and a PASS of each
CASES = (
    "wrong_number",
    "hallucinated_source",
    "claimed_work_not_done",
    "lazy_refusal",
    "wrong_tool_use",
    "verbose_correct",
    "not_in_documents",
    "injection",
    "multi_turn",
)
Label = Literal["PASS", "FAIL"]


class Control(BaseModel):
    """One labelled transcript. ``failing_dimension``/``failing_turn`` say where a FAIL control goes wrong."""

    model_config = ConfigDict(extra="forbid")

    id: str
    label: Label
    case: str
    #: the near-miss: the control with the opposite label this one is closest to
    twin: str
    failing_dimension: str | None = None
    failing_turn: int | None = None
    labelled_by: str
    rubric_version: str
    rationale: str
    scenario: Scenario
    turns: list[ConversationTurn] = Field(min_length=1)
    checks: list[CheckResult] = Field(default_factory=list)
    path: str = Field(default="", exclude=True)
    line: int = Field(default=0, exclude=True)
    #: the YAML line of each top-level key (for errors found across files)
    _key_lines: dict[str, int] = PrivateAttr(default_factory=dict)

    def view(self) -> JudgeView:
        """What the judge reads of this control (exactly what it reads of a scenario attempt)."""
        return JudgeView.of(self.scenario, self.turns, self.checks)

    @property
    def decided_by_code(self) -> bool:
        """A code check failed: the benchmark fails this transcript whatever the judge answers."""
        return any(not c.passed for c in self.checks)


_STRICT: dict[tuple[str, ...], type[BaseModel]] = {
    ("turns",): ConversationTurn,
    ("turns", "messages"): Message,
    ("checks",): CheckResult,
}


def _unknown_fields(data: dict[str, Any], key_lines: KeyLines) -> tuple[str, int | None] | None:
    """The first unknown key in the conversation or checks (their models would drop it silently)."""
    from assay.agents import ToolCallRecord

    def walk(items: Any, where: str, model: type[BaseModel], loc: tuple[Any, ...]) -> Any:
        if not isinstance(items, list):
            return None
        fields = set(model.model_fields)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            for key in item:
                if key != "__line__" and key not in fields:
                    return f"{where}[{i}]: unknown field {key!r}", line_at(data, (*loc, i, key), key_lines)
            if model is ConversationTurn:
                hit = walk(item.get("messages"), f"{where}[{i}].messages", Message, (*loc, i, "messages"))
            elif model is Message:
                hit = walk(
                    item.get("tool_calls"),
                    f"{where}[{i}].tool_calls",
                    ToolCallRecord,
                    (*loc, i, "tool_calls"),
                )
            else:
                hit = None
            if hit:
                return hit
        return None

    return walk(data.get("turns"), "turns", ConversationTurn, ("turns",)) or walk(
        data.get("checks"), "checks", CheckResult, ("checks",)
    )


def _fail(path: Path, line: int | None, message: str) -> ConfigError:
    return ConfigError(message, path=str(path), line=line)


def _semantics(control: Control, data: dict[str, Any], key_lines: KeyLines, path: Path) -> None:
    def at(*loc: Any) -> int | None:
        return line_at(data, loc, key_lines)

    top = key_lines.get(id(data), {})

    if control.rubric_version != RUBRIC_VERSION:
        raise _fail(
            path,
            at("rubric_version"),
            f"rubric_version: labelled against {control.rubric_version!r}, the judge uses "
            f"{RUBRIC_VERSION!r}; relabel the control against {RUBRIC_VERSION}",
        )
    if control.case not in CASES:
        raise _fail(path, at("case"), f"case: {control.case!r} is not one of {', '.join(CASES)}")
    if not control.labelled_by.strip():
        raise _fail(path, at("labelled_by"), "labelled_by: name the person who wrote the label")
    if control.twin == control.id:
        raise _fail(path, at("twin"), "twin: a control cannot be its own near-miss")
    if control.scenario.script is not None:
        raise _fail(path, at("scenario", "script"), "scenario.script: controls are judged without any script")
    n, planned = len(control.turns), len(control.scenario.turns)
    for pos, turn in enumerate(control.turns, start=1):
        if turn.index != pos:
            raise _fail(
                path, at("turns", pos - 1, "index"), f"turns[{pos - 1}].index: {turn.index}, expected {pos}"
            )
    if n > planned:
        raise _fail(
            path, at("turns", planned), f"turns: {n} conversation turns; the scenario plans {planned}"
        )
    if control.label == "FAIL":
        dim = control.failing_dimension
        allowed = (*DIMENSION_NAMES, *ZERO_RULE_NAMES)
        if dim not in allowed:
            raise _fail(
                path,
                top.get("failing_dimension") or top.get("label"),
                f"failing_dimension: a FAIL control names the dimension or zero rule it fails "
                f"({', '.join(allowed)}), got {dim!r}",
            )
        if control.failing_turn is None and n > 1:
            raise _fail(path, top.get("label"), f"failing_turn: required with {n} turns (1..{n})")
        if control.failing_turn is not None and not 1 <= control.failing_turn <= n:
            raise _fail(path, at("failing_turn"), f"failing_turn: {control.failing_turn} is not in 1..{n}")
    else:
        if control.failing_dimension is not None or control.failing_turn is not None:
            raise _fail(
                path,
                top.get("failing_dimension") or top.get("failing_turn"),
                "a PASS control names no failing_dimension or failing_turn",
            )
        for i, check in enumerate(control.checks):
            if not check.passed:
                raise _fail(
                    path,
                    at("checks", i),
                    f"checks[{i}]: a PASS control with a failed code check ({check.name}) is failed by "
                    "the benchmark whatever the judge says; label it FAIL or fix the check",
                )
    for i, check in enumerate(control.checks):
        if check.turn is not None and not 1 <= check.turn <= n:
            raise _fail(path, at("checks", i, "turn"), f"checks[{i}].turn: {check.turn} is not in 1..{n}")


def load_control(path: Path) -> Control:
    """Parse and validate one control file; ConfigError names the file and line of the first problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the control ({exc.strerror})", path=str(path)) from exc
    data, key_lines = load_with_lines(text, str(path))
    if not isinstance(data, dict):
        raise _fail(path, 1, "a control is a mapping with id, label, scenario, turns and checks")
    unknown = _unknown_fields(data, key_lines)
    if unknown:
        raise _fail(path, unknown[1], unknown[0])
    plain = strip_lines(data)
    scenario = plain.get("scenario")
    if isinstance(scenario, dict):
        if "id" in scenario:
            raise _fail(
                path,
                line_at(data, ("scenario", "id"), key_lines),
                "scenario.id: leave it out; the judge sees a neutral id so a control's name cannot hint "
                "at its label",
            )
        scenario["id"] = neutral_id(str(plain.get("id", "")))
    try:
        control = Control.model_validate(plain)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        where = ".".join(str(x) for x in loc)
        message = str(first["msg"]).removeprefix("Value error, ")
        raise _fail(path, line_at(data, loc, key_lines), f"{where}: {message}" if where else message) from exc
    control.path = str(path)
    control.line = int(data.get("__line__") or 1)
    control._key_lines = {str(k): v for k, v in key_lines.get(id(data), {}).items()}
    control.scenario.path = str(path)
    control.scenario.digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    _semantics(control, data, key_lines, path)
    return control


def neutral_id(control_id: str) -> str:
    """The scenario id the judge reads for a control: stable, and silent about the label."""
    return "control-" + hashlib.sha256(control_id.encode()).hexdigest()[:8]


def default_controls_dir() -> Path:
    """``eval/judge_controls/agent`` of the working directory, else of the source checkout."""
    here = Path.cwd() / "eval" / "judge_controls" / "agent"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[4] / "eval" / "judge_controls" / "agent"


def load_controls(directory: Path, flag: str = "--controls") -> list[Control]:
    """Every ``*.yaml`` control in ``directory`` (sorted by file name); ids unique, twins present and opposite."""
    if not directory.is_dir():
        raise ConfigError(f"judge controls folder not found ({flag} DIR)", path=str(directory))
    controls = [load_control(p) for p in sorted(directory.glob("*.yaml"))]
    if not controls:
        raise ConfigError(f"no *.yaml judge controls here ({flag} DIR)", path=str(directory))
    by_id: dict[str, Control] = {}
    for c in controls:
        if c.id in by_id:
            raise ConfigError(
                f"control id {c.id!r} is also used by {by_id[c.id].path}",
                path=c.path,
                line=c._key_lines.get("id"),
            )
        by_id[c.id] = c
    for c in controls:
        twin = by_id.get(c.twin)
        if twin is None:
            raise ConfigError(
                f"twin: no control {c.twin!r} in {directory}", path=c.path, line=c._key_lines.get("twin")
            )
        if twin.label == c.label:
            raise ConfigError(
                f"twin: {c.twin!r} is also labelled {c.label}; a near-miss has the opposite label",
                path=c.path,
                line=c._key_lines.get("twin"),
            )
    return controls


def controls_digest(controls: Sequence[Control]) -> str:
    """One short digest of the control set (each file's digest, in id order): what a record was measured on."""
    joined = "\n".join(f"{c.id}:{c.scenario.digest}" for c in sorted(controls, key=lambda c: c.id))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]
