"""`assay eval agent controls`: calibrate judge models on the labelled controls; exit 2 if one is not calibrated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from assay.errors import ExitCode

if TYPE_CHECKING:
    from assay.evals.agent import Control

_P = click.Path(path_type=Path)


@click.command("controls")
@click.option(
    "--judge-model",
    "judge_models",
    multiple=True,
    default=("local/smollm2",),
    show_default=True,
    help="Judge model to calibrate (repeat to compare judges: Cohen's kappa between each two).",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=2),
    default=3,
    show_default=True,
    help="Judgings of each control (self-consistency: all repeats give the same verdict).",
)
@click.option(
    "--temperature",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Sampling temperature of the judge calls (0: as eval agent judges).",
)
@click.option(
    "--controls",
    "controls_dir",
    type=_P,
    default=None,
    help="Controls folder (default eval/judge_controls/agent).",
)
@click.option(
    "--results-dir",
    type=_P,
    default=Path("results"),
    envvar="ASSAY_RESULTS_DIR",
    show_default=True,
    help="Where the controls-agent-<UTC>/ folder goes.",
)
@click.option(
    "--if-changed",
    is_flag=True,
    help="The CI lane: calibrate only the judge models whose newest record was made with another judge "
    "prompt, rubric or control set (or that have none); judge models and repeats come from the tiers "
    "file's lanes.controls unless given.",
)
@click.option(
    "--tiers",
    "tiers_file",
    type=_P,
    default=None,
    help="--if-changed: the tiers file with lanes.controls (default: eval/ci_tiers.json).",
)
@click.pass_context
def agent_controls_command(
    ctx: click.Context,
    judge_models: tuple[str, ...],
    repeats: int,
    temperature: float,
    controls_dir: Path | None,
    results_dir: Path,
    if_changed: bool,
    tiers_file: Path | None,
) -> None:
    """Judge every labelled control N times with the judge prompts alone; report agreement with the labels
    (overall, PASS, FAIL), kappa and self-consistency over the controls the judge decides (those a failed code
    check decides are reported apart), and score spread. Exit 2 below 0.90 agreement or 0.90
    self-consistency."""
    from assay._util import reporting
    from assay.evals.agent import calibrate, default_controls_dir, load_controls, weak_judge_note

    controls_dir = controls_dir or default_controls_dir()
    standing_ok = True
    if tiers_file is not None and not if_changed:
        raise click.UsageError("--tiers is read only with --if-changed")
    if if_changed:
        judge_models, repeats = _lane_settings(ctx, judge_models, repeats, tiers_file)
        due, standing_ok = _due_models(results_dir, judge_models, load_controls(controls_dir))
        if not due:
            ctx.exit(ExitCode.OK if standing_ok else ExitCode.REGRESSION)
        judge_models = due
    with reporting():
        run, directory = calibrate(
            judge_models,
            repeats=repeats,
            temperature=temperature,
            controls_dir=controls_dir,
            results_dir=results_dir,
            command_line=["assay", *sys.argv[1:]],
        )
    for r in run.judges:
        status = "passed" if r.passed else "NOT CALIBRATED"
        click.echo(
            f"{r.judge_model} (rubric {r.rubric_version}, prompt {r.judge_prompt_digest[:12]}): {status}"
        )
        click.echo(
            f"  judge-decided controls: {r.judge_decided_pass} PASS, {r.judge_decided_fail} FAIL "
            f"({r.judge_decided_judgings} judgings): agreement {r.agreement:.2f} (PASS {_f(r.agreement_pass)}, "
            f"FAIL {_f(r.agreement_fail)}), kappa with labels {_f(r.kappa_vs_labels)}, "
            f"self-consistency {r.self_consistency:.2f}"
        )
        click.echo(
            f"  apart: {r.decided_by_code} controls decided by a failed code check "
            f"(derived verdict = label {_f(r.code_decided_agreement)}); unparseable {r.unparseable}/"
            f"{r.n_judgings}; its own PASS/FAIL agreed {_f(r.own_verdict_agreement)}"
        )
        if r.below:
            click.echo(f"  below threshold: {'; '.join(r.below)}")
        note = weak_judge_note(r.judge_model)
        if note:
            click.echo(f"  {note}")
    for k in run.kappa:
        click.echo(f"kappa {k.a} vs {k.b}: {_f(k.kappa)} (observed agreement {k.observed:.2f}, n={k.n})")
    click.echo(f"results: {directory}")
    ctx.exit(ExitCode.OK if run.passed and standing_ok else ExitCode.REGRESSION)


def _lane_settings(
    ctx: click.Context, judge_models: tuple[str, ...], repeats: int, tiers_file: Path | None
) -> tuple[tuple[str, ...], int]:
    """The judge models and repeats of the controls lane; a flag given on the command line wins."""
    from click.core import ParameterSource

    from assay.evals.agent import controls_lane

    path, lane = controls_lane(tiers_file)
    if lane is None:
        if tiers_file is not None:
            raise click.UsageError(f"{path} has no lanes.controls")
        return judge_models, repeats
    if ctx.get_parameter_source("judge_models") == ParameterSource.DEFAULT:
        judge_models = lane.judge_models
    if ctx.get_parameter_source("repeats") == ParameterSource.DEFAULT:
        repeats = lane.repeats
    return judge_models, repeats


def _due_models(
    results_dir: Path, judge_models: tuple[str, ...], controls: list[Control]
) -> tuple[tuple[str, ...], bool]:
    """The judge models calibration is due for (each printed with why), and whether the others' standing
    records all passed."""
    from assay.evals.agent import controls_due

    due: list[str] = []
    standing_ok = True
    for model in judge_models:
        check = controls_due(results_dir, model, controls)
        if check.due:
            click.echo(f"{model}: calibration due: {'; '.join(check.reasons)}")
            due.append(model)
            continue
        assert check.record is not None
        status = "passed" if check.record.passed else "NOT CALIBRATED"
        click.echo(
            f"{model}: unchanged since its calibration of {check.recorded_at} (same judge prompt, rubric and "
            f"controls): {status}" + (f" ({'; '.join(check.record.below)})" if check.record.below else "")
        )
        standing_ok = standing_ok and check.record.passed
    return tuple(due), standing_ok


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
