"""Running and saving a controls run: :func:`calibrate` judges the controls with each named judge model and
writes ``results/controls-agent-<UTC>/controls.json`` (one record per judge model + rubric version + judge
prompt digest) and ``report.md``, both scrubbed (:func:`~assay.evals.agent._controls.iter_records` reads the
records back; :mod:`assay.evals.agent._controls_lane` decides from them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from assay._util import Scrubber, write_scrubbed
from assay.errors import ConfigError
from assay.evals.agent._controls import (
    CONTROLS_JSON,
    MIN_AGREEMENT,
    MIN_CONSISTENCY,
    ControlsRun,
    JudgeRecord,
    run_controls,
)
from assay.evals.agent._controls_load import load_controls
from assay.evals.agent._rubric import DIMENSION_NAMES
from assay.models.weak import is_weak_model

__all__ = [
    "CONTROLS_JSON",
    "CONTROLS_MD",
    "calibrate",
    "render_controls_report",
    "save_controls_run",
    "weak_judge_note",
]

CONTROLS_MD = "report.md"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def weak_judge_note(model: str) -> str | None:
    """What the report says of a judge model known to be too weak to grade (the embedded one)."""
    if not is_weak_model(model):
        return None
    return (
        "The embedded SmolLM2-135M is a tiny model, far too weak to judge: it is expected to fail the "
        "controls and is useful only to check that the pipeline runs end to end offline."
    )


def _judge_section(r: JudgeRecord) -> list[str]:
    status = "passed" if r.passed else "FAILED"
    lines = [
        f"## {r.judge_model}: {status}",
        "",
        f"rubric {r.rubric_version} · judge prompt {r.judge_prompt_digest[:12]} · controls {r.controls_digest} · "
        f"{r.n_controls} controls × {r.repeats} repeats = {r.n_judgings} judgings · "
        f"{r.usage.input_tokens + r.usage.output_tokens} tokens · {r.elapsed_s:.1f} s"
        + (" · decoding held to the answer's schema" if r.constrained else "")
        + f" · temperature {r.temperature:g}"
        + (f" · at most {r.max_tokens} tokens a call" if r.max_tokens else ""),
        "",
    ]
    if r.temperature == 0:
        lines += [
            "At temperature 0 (as `eval agent` judges) a deterministic backend repeats itself: "
            "self-consistency then shows only the backend's nondeterminism; `--temperature` measures "
            "how stable the judge's verdicts are when it samples.",
            "",
        ]
    if not r.passed:
        lines += [
            f"**Not calibrated:** {'; '.join(r.below)}. Verdicts this judge gives on rubric {r.rubric_version} "
            "are not to be trusted.",
            "",
        ]
    note = weak_judge_note(r.judge_model)
    if note:
        lines += [note, ""]
    decided = r.judge_decided_pass + r.judge_decided_fail
    lines += [
        f"Agreement, kappa and self-consistency are over the {decided} controls the judge decides "
        f"({r.judge_decided_pass} PASS, {r.judge_decided_fail} FAIL; {r.judge_decided_judgings} judgings). "
        f"The {r.decided_by_code} controls a failed code check decides are FAIL whatever the judge answers, so "
        "they are reported apart and measure nothing of the judge.",
        "",
        "| measure (judge-decided controls) | value |",
        "|---|---|",
        f"| agreement with labels ({decided} controls) | {_pct(r.agreement)} (need {MIN_AGREEMENT:.0%}) |",
        f"| PASS-agreement ({r.judge_decided_pass} controls) | {_pct(r.agreement_pass)} |",
        f"| FAIL-agreement ({r.judge_decided_fail} controls) | {_pct(r.agreement_fail)} |",
        f"| self-consistency | {_pct(r.self_consistency)} (need {MIN_CONSISTENCY:.0%}) |",
        f"| Cohen's kappa with labels | {_num(r.kappa_vs_labels)} |",
        f"| unparseable answers (disagreements) | {r.unparseable} of {r.n_judgings} |",
        f"| the judge's own PASS/FAIL agreeing with labels | {_pct(r.own_verdict_agreement)} |",
        f"| own verdict contradicting its own scores | {r.self_contradictions} of {r.n_judgings} |",
        f"| retried judge calls | {r.retried_calls} |",
        f"| FAIL verdicts naming the labelled dimension | {_pct(r.flagged_rate)} |",
        f"| apart: controls decided by a failed code check | {r.decided_by_code} "
        f"(derived verdict = label: {_pct(r.code_decided_agreement)}) |",
        "",
        "Score spread over repeats (mean standard deviation, 0..4 scale): "
        + ", ".join(f"{d} {_num(r.dimension_spread.get(d))}" for d in DIMENSION_NAMES),
        "",
    ]
    if r.flagged_by_dimension:
        lines.append(
            "Failing dimension named, by dimension: "
            + ", ".join(f"{d} {_pct(v)}" for d, v in r.flagged_by_dimension.items())
        )
        lines.append("")
    lines += [
        "| control | label | case | decided by | verdicts | agreed | consistent |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in r.controls:
        verdicts = " ".join(j.verdict for j in c.judgings)
        mark = "" if c.agreed == len(c.judgings) else " ✗"
        label = c.label + (f" ({c.failing_dimension})" if c.failing_dimension else "")
        lines.append(
            f"| {c.id}{mark} | {label} | {c.case} | {'code' if c.decided_by_code else 'judge'} | {verdicts} | "
            f"{c.agreed}/{len(c.judgings)} | {'yes' if c.consistent else 'no'} |"
        )
    errors = [(c.id, j) for c in r.controls for j in c.judgings if j.verdict == "ERROR"]
    if errors:
        lines += ["", "Unparseable answers (first 5):"]
        for cid, j in errors[:5]:
            lines.append(f"- {cid} repeat {j.repeat}: {(j.parse_error or '')[:200]}")
    return [*lines, ""]


def render_controls_report(run: ControlsRun) -> str:
    lines = [
        "# Judge controls (agent)",
        "",
        f"{run.created_at} · " + ("every judge passed" if run.passed else "**a judge failed the controls**"),
        "",
        f"A judge passes at {MIN_AGREEMENT:.0%} agreement with the labels (overall, on PASS controls and on "
        f"FAIL controls) and {MIN_CONSISTENCY:.0%} self-consistency (all repeats give the same verdict), over "
        "the controls it decides (no code check failed). "
        "Verdicts are re-derived from the judge's scores and findings with the controls' code checks, as in "
        "`assay eval agent`; an unparseable answer counts as a disagreement.",
        "",
    ]
    for r in run.judges:
        lines += _judge_section(r)
    if run.kappa:
        lines += ["## Agreement between judges (Cohen's kappa)", "", "| a | b | kappa | observed | n |"]
        lines.append("|---|---|---|---|---|")
        for k in run.kappa:
            lines.append(f"| {k.a} | {k.b} | {_num(k.kappa)} | {_pct(k.observed)} | {k.n} |")
        lines.append("")
    return "\n".join(lines)


def save_controls_run(run: ControlsRun, directory: Path) -> None:
    """Write ``controls.json`` and ``report.md`` into ``directory`` (scrubbed of secrets)."""
    scrubber = Scrubber()
    write_scrubbed(directory / CONTROLS_JSON, run.model_dump_json(indent=2) + "\n", scrubber)
    write_scrubbed(directory / CONTROLS_MD, render_controls_report(run), scrubber)


def calibrate(
    judge_models: Sequence[str],
    *,
    repeats: int = 3,
    temperature: float = 0.0,
    controls_dir: Path,
    results_dir: Path,
    command_line: Sequence[str] = (),
) -> tuple[ControlsRun, Path]:
    """Judge the controls in ``controls_dir`` with each judge model; save the run; return it and its folder.

    Holds the machine's eval lock while judging. A judge model that cannot be built or reached fails before
    anything is judged (ConfigError / InfraError).
    """
    from assay._util import phase
    from assay.evals._harnessed import model_options
    from assay.evals.agent._defaults import MAX_TOKENS
    from assay.judge import holds_to_schema
    from assay.models import get_model, preflight
    from assay.runs import EvalLock
    from assay.runs.rundir import new_run_dir

    if not judge_models:
        raise ConfigError("name at least one judge model", path="--judge-model")
    seen: set[str] = set()
    for name in judge_models:
        if name in seen:
            raise ConfigError(f"{name!r} is named twice", path="--judge-model")
        seen.add(name)
    if repeats < 2:
        raise ConfigError(f"self-consistency needs at least 2 repeats, got {repeats}", path="--repeats")
    if temperature < 0:
        raise ConfigError(f"the temperature must be 0 or more, got {temperature:g}", path="--temperature")
    controls = load_controls(controls_dir)
    # built and capped as `eval agent` builds its judge: a local model gets the context a judged conversation needs
    models = {name: get_model(name, **model_options(name)) for name in judge_models}

    async def go() -> ControlsRun:
        for model in models.values():
            await preflight(model)
        with phase("judging controls", len(controls) * repeats * len(models), "judgings") as ph:
            return await run_controls(
                controls,
                models,
                repeats=repeats,
                temperature=temperature,
                max_tokens=MAX_TOKENS["judge"],
                # held to the answer's schema by the rule `eval agent` uses (auto: by provider)
                constrained={name: holds_to_schema(name) for name in models},
                on_progress=lambda done, total: ph.advance(),
                command_line=command_line,
                controls_dir=str(controls_dir),
            )

    with EvalLock(list(command_line) or ["assay", "eval", "agent", "controls"]):
        directory = new_run_dir(results_dir, "controls", "agent")  # a bad --results-dir fails first
        try:
            run = asyncio.run(go())
        except BaseException:
            directory.rmdir()  # nothing was measured: leave no empty record behind
            raise
        save_controls_run(run, directory)
    return run, directory
