"""`assay eval tasks run|judge|gate|propose|report|controls`: real coding work on the toybox project.

Every option also reads an ``ASSAY_*`` variable (named in ``--help``); a required one that is missing is a
startup error naming both the flag and the variable.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.cli._options import click_options
from assay.errors import ConfigError, ExitCode, InfraError
from assay.evals.tasks import TasksRunOptions

_P = click.Path(path_type=Path)
_OUTAGE_HINT = "the judge's backend was unreachable: nothing was graded; judge it later with"


def _require(value: Any, flag: str, env: str, what: str) -> Any:
    if value in (None, "", ()):
        raise ConfigError(f"{flag} is required (or set {env}): {what}")
    return value


def _run_params() -> list[click.Parameter]:
    return [
        click.Option(["--suite"], envvar="ASSAY_SUITE", default="core", show_default=True, help="core, adversarial, full, everyday (toybox), realfix (the pins in realfix/ next to --tasks-file) or swebench [ASSAY_SUITE]."),
        click.Option(["--repeats"], envvar="ASSAY_REPEATS", type=click.IntRange(min=1), default=1, show_default=True, help="Attempts of each task [ASSAY_REPEATS]."),
        click.Option(["--no-judge"], envvar="ASSAY_NO_JUDGE", is_flag=True, default=False, help="Skip the judge step (question tasks stay ungraded) [ASSAY_NO_JUDGE]."),
        click.Option(["--judge-schema"], envvar="ASSAY_JUDGE_SCHEMA", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True, help="Hold the judge's decoding to its JSON schema [ASSAY_JUDGE_SCHEMA]."),
        click.Option(["--max-concurrency", "-j"], envvar="ASSAY_MAX_CONCURRENCY", type=click.IntRange(min=1), default=1, show_default=True, help="Tasks in flight at once [ASSAY_MAX_CONCURRENCY]."),
        click.Option(["--out"], envvar="ASSAY_OUT", type=_P, default=None, help="Run directory (default results/tasks-<suite>-<UTC>) [ASSAY_OUT]."),
        click.Option(["--results-dir"], envvar="ASSAY_RESULTS_DIR", type=_P, default=Path("results"), show_default=True, help="Where new run directories go [ASSAY_RESULTS_DIR]."),
        click.Option(["--resume"], envvar="ASSAY_RESUME", type=_P, default=None, help="Run only the tasks RUN_DIR lacks, under its recorded settings [ASSAY_RESUME]."),
        *click_options(TasksRunOptions),
    ]  # fmt: skip


def _console() -> Console:
    return Console(stderr=False, soft_wrap=True)


def _judge(run_dir: Path, judge_schema: str, console: Console) -> int:
    from assay.evals.tasks import judge_run

    try:
        done = asyncio.run(judge_run(run_dir, judge_schema=judge_schema))
    except InfraError as exc:
        click.echo(f"error: {_OUTAGE_HINT} `assay eval tasks judge {run_dir}`: {exc}", err=True)
        return int(ExitCode.NOT_COMPARABLE)
    s = done.scorecard.extra.get("tasks", {})
    counts = done.scorecard.summary.counts
    console.print("after judging: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v), highlight=False)
    console.print(
        f"judged by {done.judgement.judge_model} in {done.judgement.calls} call(s) over "
        f"{done.judgement.batches} batch(es): {s.get('judged')} graded, "
        f"{s.get('unjudged')} unjudged, quality {s.get('quality_mean')}, {s.get('quality_ok')} passed the "
        f"quality checks ({done.path})",
        highlight=False,
    )
    return 0


def _run_callback(**kw: Any) -> None:
    from assay.cli._eval import print_summary
    from assay.evals.tasks import TasksBenchmark
    from assay.exec import RunOptions, run_benchmark

    ctx = click.get_current_context()
    run_keys = (
        "suite",
        "repeats",
        "no_judge",
        "judge_schema",
        "max_concurrency",
        "out",
        "results_dir",
        "resume",
    )
    run = {k: kw.pop(k) for k in run_keys}
    if run["resume"] is None:
        _require(kw["model"], "--model", "ASSAY_MODEL", "the model every harness runs on")
    else:
        given = [f"--{k.replace('_', '-')}" for k, v in kw.items() if v not in (None, False)]
        if given:
            raise ConfigError(f"{', '.join(given)}: --resume runs under the run's recorded settings")
    opts = RunOptions(
        suite=run["suite"],
        iterations=run["repeats"],
        max_concurrency=run["max_concurrency"],
        out=run["out"],
        results_dir=run["results_dir"],
        resume=run["resume"],
        seed=int(kw.get("seed") or 0),  # --sample's seed is the run's (meta.json records it)
        command_line=["assay", *sys.argv[1:]],
        progress=True,
    )
    console = _console()
    result = run_benchmark(None if run["resume"] else TasksBenchmark, kw, opts)
    print_summary(result, console)
    if result.stopped_reason:
        click.echo(f"error: run stopped: {result.stopped_reason}", err=True)
        click.echo(f"resume with: assay eval tasks run --resume {result.run_dir}", err=True)
        ctx.exit(result.exit_code)
    if run["no_judge"]:
        console.print(f"not judged (--no-judge): `assay eval tasks judge {result.run_dir}` grades it")
        ctx.exit(0)
    ctx.exit(_judge(result.run_dir, run["judge_schema"], console))


tasks_run_command = click.Command(
    "run",
    params=_run_params(),
    callback=_run_callback,
    help="Run a suite: each task on a fresh copy of the toybox, checked after the agent exits, then judged "
    "in one batched call per pass.",
)


@click.command("judge")
@click.argument("run_dir", type=_P)
@click.option("--judge-schema", envvar="ASSAY_JUDGE_SCHEMA", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True, help="Hold the judge's decoding to its JSON schema [ASSAY_JUDGE_SCHEMA].")  # fmt: skip
@click.pass_context
def tasks_judge_command(ctx: click.Context, run_dir: Path, judge_schema: str) -> None:
    """Grade RUN_DIR with its recorded judge model: one batched call per pass; re-folds its scorecard."""
    ctx.exit(_judge(run_dir, judge_schema, _console()))


@click.command("gate")
@click.argument("run_dir", type=_P)
@click.option("--expect", envvar="ASSAY_EXPECT", type=_P, default=None, help="Expectations file (default eval/tasks/expectations/<model>.<suite>.json) [ASSAY_EXPECT].")  # fmt: skip
@click.option("--enforce", envvar="ASSAY_ENFORCE", is_flag=True, default=False, help="Exit 2 on a missed or unmeasured limit [ASSAY_ENFORCE].")  # fmt: skip
@click.option("--propose", "propose_out", envvar="ASSAY_PROPOSE", type=_P, default=None, help="Also write expectations this run meets to this file [ASSAY_PROPOSE].")  # fmt: skip
@click.pass_context
def tasks_gate_command(
    ctx: click.Context, run_dir: Path, expect: Path | None, enforce: bool, propose_out: Path | None
) -> None:
    """Check RUN_DIR against its model and suite's expectations (none yet: "not gated yet", exit 0)."""
    from assay.evals.tasks import gate_tasks
    from assay.gate import print_gate

    console = _console()
    done = gate_tasks(run_dir, expect, enforce=enforce, propose_out=propose_out)
    for m in done.measured_on:
        console.print(f"  measured on commit {m['commit']} on {m['machine']}", highlight=False)
    print_gate(done.result, console)
    if done.proposed is not None:
        console.print(f"proposed expectations: {done.proposed}", highlight=False)
    ctx.exit(done.result.exit_code)


@click.command("propose")
@click.argument("run_dirs", nargs=-1, type=_P)
@click.option("--out", envvar="ASSAY_PROPOSE_OUT", type=_P, default=None, help="Expectations file to write, eval/tasks/expectations/<model>.<suite>.json (required) [ASSAY_PROPOSE_OUT].")  # fmt: skip
def tasks_propose_command(run_dirs: tuple[Path, ...], out: Path | None) -> None:
    """Write limits every RUN_DIR met (the worst run, plus headroom: one task may flip, one more change
    unverified, quality -0.5, tokens and steps +35%, wall time +50%)."""
    from assay.evals.tasks import propose_tasks

    _require(run_dirs, "RUN_DIR", "(no variable: give the runs as arguments)", "the runs to propose from")
    path = propose_tasks(list(run_dirs), _require(out, "--out", "ASSAY_PROPOSE_OUT", "the file to write"))
    _console().print(f"wrote {path}", highlight=False)


@click.command("report")
@click.argument("run_dirs", nargs=-1, type=_P)
@click.option("--out", envvar="ASSAY_REPORT_OUT", type=_P, default=None, help="Folder for tasks.md, tasks.html and tasks.png (required) [ASSAY_REPORT_OUT].")  # fmt: skip
def tasks_report_command(run_dirs: tuple[Path, ...], out: Path | None) -> None:
    """The harness x model table of RUN_DIRs as markdown, HTML and a PNG (headless Chromium)."""
    from assay.evals.tasks import write_report

    _require(run_dirs, "RUN_DIR", "(no variable: give the runs as arguments)", "the runs to tabulate")
    paths = write_report(list(run_dirs), _require(out, "--out", "ASSAY_REPORT_OUT", "where to write"))
    _console().print("wrote " + ", ".join(str(p) for p in paths.values()), highlight=False)


@click.command("controls")
@click.option("--judge-model", envvar="ASSAY_JUDGE_MODEL", default=None, help="The judge's model (required) [ASSAY_JUDGE_MODEL].")  # fmt: skip
@click.option("--repeats", envvar="ASSAY_CONTROLS_REPEATS", type=click.IntRange(min=1), default=3, show_default=True, help="Judgings of the planted attempts [ASSAY_CONTROLS_REPEATS].")  # fmt: skip
@click.option("--judge-schema", envvar="ASSAY_JUDGE_SCHEMA", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True, help="Hold the judge's decoding to its JSON schema [ASSAY_JUDGE_SCHEMA].")  # fmt: skip
@click.option("--tasks-file", envvar="ASSAY_TASKS_FILE", type=_P, default=None, help="tasks.json whose bug-fix task is planted (default eval/tasks/tasks.json) [ASSAY_TASKS_FILE].")  # fmt: skip
@click.option("--results-dir", envvar="ASSAY_RESULTS_DIR", type=_P, default=Path("results"), show_default=True, help="Where controls-tasks-<UTC>/ goes [ASSAY_RESULTS_DIR].")  # fmt: skip
@click.option("--only", "which", envvar="ASSAY_CONTROLS_ONLY", type=click.Choice(["both", "coding", "questions"]), default="both", show_default=True, help="Which controls: the planted coding attempts, the question answers, or both [ASSAY_CONTROLS_ONLY].")  # fmt: skip
@click.pass_context
def tasks_controls_command(
    ctx: click.Context,
    judge_model: str | None,
    repeats: int,
    judge_schema: str,
    tasks_file: Path | None,
    results_dir: Path,
    which: str,
) -> None:
    """Coding controls: a correct fix with the suite really run, the same fix with an invented test run, and
    no work claiming done, scored apart (rate, need 0.90). Question controls: each question task's reference
    answer must pass on its points and each wrong answer fail (agreement, kappa, self-consistency, need 0.90).
    Each judged REPEATS times; exit 2 when the judge fails either."""
    from assay.evals.tasks import calibrate_tasks_judge, controls_table, questions_table

    spec = _require(judge_model, "--judge-model", "ASSAY_JUDGE_MODEL", "the judge to check")
    result = calibrate_tasks_judge(
        spec,
        repeats=repeats,
        judge_schema=judge_schema,
        tasks_file=tasks_file,
        results_dir=results_dir,
        which=which,
    )
    console = _console()
    if result.coding is not None:
        console.print(controls_table(result.coding), highlight=False, markup=False)
    if result.questions is not None:
        console.print(questions_table(result.questions), highlight=False, markup=False)
    console.print(f"wrote {result.out}", highlight=False)
    ctx.exit(0 if result.passed else int(ExitCode.REGRESSION))
