"""`assay eval agent controls`: calibrate judge models on the labelled controls; exit 2 if one is not calibrated."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assay.errors import ExitCode

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
@click.pass_context
def agent_controls_command(
    ctx: click.Context,
    judge_models: tuple[str, ...],
    repeats: int,
    temperature: float,
    controls_dir: Path | None,
    results_dir: Path,
) -> None:
    """Judge every labelled control N times with the judge prompts alone; report agreement with the labels
    (overall, PASS, FAIL), self-consistency, score spread and kappa. Exit 2 below 0.90 agreement or 0.90
    self-consistency."""
    from assay.judge._controls_load import default_controls_dir
    from assay.judge._controls_report import calibrate, weak_judge_note
    from assay.runs._progress import reporting

    with reporting():
        run, directory = calibrate(
            judge_models,
            repeats=repeats,
            temperature=temperature,
            controls_dir=controls_dir or default_controls_dir(),
            results_dir=results_dir,
            command_line=["assay", *sys.argv[1:]],
        )
    for r in run.judges:
        status = "passed" if r.passed else "NOT CALIBRATED"
        click.echo(
            f"{r.judge_model} (rubric {r.rubric_version}, prompt {r.judge_prompt_digest[:12]}): {status}"
        )
        click.echo(
            f"  agreement {r.agreement:.2f} (PASS {_f(r.agreement_pass)}, FAIL {_f(r.agreement_fail)}), "
            f"self-consistency {r.self_consistency:.2f}, kappa with labels {_f(r.kappa_vs_labels)}, "
            f"unparseable {r.unparseable}/{r.n_judgings}; its own PASS/FAIL agreed {_f(r.own_verdict_agreement)}"
        )
        if r.below:
            click.echo(f"  below threshold: {'; '.join(r.below)}")
        note = weak_judge_note(r.judge_model)
        if note:
            click.echo(f"  {note}")
    for k in run.kappa:
        click.echo(f"kappa {k.a} vs {k.b}: {_f(k.kappa)} (observed agreement {k.observed:.2f}, n={k.n})")
    click.echo(f"results: {directory}")
    ctx.exit(ExitCode.OK if run.passed else ExitCode.REGRESSION)


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
