"""`assay compare`, `assay gate`, `assay propose`, `assay health` and `assay eval noise`.

Each body calls one library function in :mod:`assay.gate`. None of them takes the eval lock (noise's
child eval runs take it themselves, one after the other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markdown import Markdown

from assay.errors import UsageError

_P = click.Path(path_type=Path)


def _junit_option(f: Any) -> Any:
    return click.option(
        "--junit",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="Write JUnit XML here (one testcase per case or limit; a regression or miss fails).",
    )(f)


def _summary_option(f: Any) -> Any:
    return click.option(
        "--summary",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        envvar="GITHUB_STEP_SUMMARY",
        help="Append a markdown job summary here (default $GITHUB_STEP_SUMMARY).",
    )(f)


def _console() -> Console:
    return Console(stderr=False)


@click.command("compare")
@click.argument("baseline", type=_P)
@click.argument("current", type=_P)
@click.option(
    "--noise", type=_P, default=None, help="noise.json from `assay eval noise`: per-case noise floors."
)
@click.option("--require-complete", is_flag=True, help="Exit 2 if a baseline case is missing or unmeasured.")
@click.option("--json", "as_json", is_flag=True, help="Print comparison.json to stdout instead of tables.")
@click.option(
    "--allow-subject-change",
    is_flag=True,
    help="Compare runs of different subject models (or imported runs of different agents) case by case.",
)
@_junit_option
@_summary_option
@click.pass_context
def compare_command(
    ctx: click.Context,
    baseline: Path,
    current: Path,
    noise: Path | None,
    require_complete: bool,
    as_json: bool,
    allow_subject_change: bool,
    junit: Path | None,
    summary: Path | None,
) -> None:
    """Compare CURRENT with BASELINE (run dirs, baseline dirs or scorecard.json files).

    Exit 0 no regression, 2 regression (or, with --require-complete, a case missing or unmeasured),
    3 not comparable (benchmark, suite version, subject model, judge model or embedder differ).
    Writes comparison.json and comparison.md next to CURRENT's scorecard.
    """
    from assay.gate import GateOptions, compare, load_run, print_comparison, save_verdict, verdict_of

    cur = load_run(current)
    comp = compare(
        baseline,
        cur,
        noise=noise,
        require_complete=require_complete,
        allow_subject_change=allow_subject_change,
    )
    card = cur.scorecard
    # the same rule as `assay eval --compare`: the verdict of this comparison alone
    verdict = verdict_of(card, GateOptions(require_complete=require_complete), comparison=comp)
    save_verdict(current if current.is_dir() else current.parent, verdict, verdict_file=False)
    if as_json:
        click.echo(comp.model_dump_json(indent=2))
    else:
        print_comparison(comp, _console())
    if junit is not None or summary is not None:
        from assay.ci.outputs import comparison_outputs

        comparison_outputs(verdict, card, junit, summary)
    ctx.exit(verdict.exit_code)


@click.command("gate")
@click.argument("run_dir", type=_P)
@click.option(
    "--expect",
    type=_P,
    default=None,
    help="Expectations file (default: the matching one in $ASSAY_EXPECTATIONS_DIR or eval/expectations/).",
)
@click.option("--enforce", is_flag=True, help="Exit 2 on a missed limit or an unmeasured case.")
@_junit_option
@_summary_option
@click.pass_context
def gate_command(
    ctx: click.Context,
    run_dir: Path,
    expect: Path | None,
    enforce: bool,
    junit: Path | None,
    summary: Path | None,
) -> None:
    """Check RUN_DIR against its expectations file; a run with none is "not gated yet" (exit 0)."""
    from assay.gate import GateOptions, gate, load_run, print_gate, verdict_of

    run = load_run(run_dir)
    result = gate(run, expect=expect, enforce=enforce)
    # the same rule as `assay eval --expect`: the verdict of these expectations alone
    verdict = verdict_of(run.scorecard, GateOptions(expect=expect, enforce=enforce), expectations=result)
    print_gate(result, _console())
    if junit is not None or summary is not None:
        from assay.ci.outputs import gate_outputs

        gate_outputs(verdict, junit, summary)
    ctx.exit(verdict.exit_code)


@click.command("propose")
@click.argument("run_dirs", nargs=-1, required=True, type=_P)
@click.option("--out", type=_P, required=True, help="Expectations file to write (.yaml, .yml or .json).")
def propose_command(run_dirs: tuple[Path, ...], out: Path) -> None:
    """Write limits every RUN_DIR met, with headroom for one noisy run, to --out."""
    from assay.gate import propose

    exp = propose(list(run_dirs), out)
    console = _console()
    console.print(
        f"wrote {len(exp.limits)} limit(s) from {len(run_dirs)} run(s) to {out}",
        highlight=False,
        soft_wrap=True,
    )
    for name, value in exp.limits.items():
        console.print(f"  {name}: {value:g}", highlight=False, soft_wrap=True)


@click.command("health")
@click.argument("run_dirs", nargs=-1, type=_P)
@click.option("--strong", "strong", multiple=True, type=_P, help="A run of the stronger model (repeatable).")
@click.option("--weak", "weak", multiple=True, type=_P, help="A run of the weaker model (repeatable).")
@click.option(
    "--tiers",
    type=_P,
    default=None,
    help="ci_tiers.json to suggest moves for (agent runs; default: the one next to the runs' scenarios folder).",
)
@click.option("--out", type=_P, default=None, help="Directory to write health.json and health.md to.")
def health_command(
    run_dirs: tuple[Path, ...],
    strong: tuple[Path, ...],
    weak: tuple[Path, ...],
    tiers: Path | None,
    out: Path | None,
) -> None:
    """Flag saturated, always-fail, inverted and flaky cases over RUN_DIRs (of one or more models).

    With --strong / --weak the strongest model is the one named, and inverted means the weak model passed
    more often than the strong one beyond both pass rates' intervals. Every flag needs two attempts a model. For agent runs, moves between CI tiers are suggested, never applied.
    """
    from assay.evals import health
    from assay.gate import health_markdown

    if not (run_dirs or strong or weak):
        raise UsageError("health needs runs: give RUN_DIR arguments, --strong DIR or --weak DIR")
    report = health(list(run_dirs), out=out, strong=list(strong), weak=list(weak), tiers=tiers)
    console = _console()
    console.print(Markdown(health_markdown(report)))
    if out is not None:
        console.print(f"wrote {out / 'health.json'} and {out / 'health.md'}", highlight=False, soft_wrap=True)


@click.command("noise", context_settings={"ignore_unknown_options": True})
@click.option("--runs", type=int, default=None, help="How many times to run the eval command.")
@click.option(
    "--from",
    "from_dirs",
    is_flag=True,
    help="Read existing run directories (given as arguments) instead of running a command.",
)
@click.option(
    "--out", type=_P, default=Path("noise.json"), show_default=True, help="Where to write noise.json."
)
@click.option(
    "--runs-dir",
    type=_P,
    default=None,
    help="Where the N run directories go (default results/noise-<UTC time>/).",
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def noise_command(
    runs: int | None, from_dirs: bool, out: Path, runs_dir: Path | None, args: tuple[str, ...]
) -> None:
    """Measure the noise floor of one configuration and write noise.json.

    \b
    assay eval noise --runs 5 -- assay eval memory
    assay eval noise --from results/run-a results/run-b results/run-c
    """
    from assay.gate import noise, run_noise_command

    console = _console()
    if from_dirs:
        if not args:
            raise UsageError("--from: name the run directories to read")
        if runs is not None and runs != len(args):
            raise UsageError(f"--runs {runs} but --from names {len(args)} run directories")
        dirs = [Path(a) for a in args]
    else:
        if runs is None:
            raise UsageError("--runs N is required unless --from names existing run directories")
        dirs = run_noise_command(
            list(args), runs, runs_dir, echo=lambda s: console.print(s, highlight=False, soft_wrap=True)
        )
    report = noise(dirs, out=out)
    flaky = [c.case_id for c in report.cases.values() if 0 < c.passed < c.measured]
    console.print(
        f"wrote {out}: {len(report.run_ids)} runs, {len(report.cases)} cases ({len(flaky)} flaky), "
        f"{len(report.metrics)} metric(s)",
        highlight=False,
        soft_wrap=True,
    )
