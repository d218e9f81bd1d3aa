"""`assay eval <benchmark>`: one command per registered benchmark, with the options every benchmark shares."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from assay.ci.outputs import JUNIT_OPTION, SUMMARY_OPTION
from assay.cli._commands import EVAL_EXTRA_COMMANDS, EVAL_SHORT_HELP
from assay.cli._main import format_commands_from_table, load_command
from assay.cli._options import click_options
from assay.errors import ConfigError, ResumeError
from assay.evals import available, get_benchmark
from assay.exec import (
    Benchmark,
    RunOptions,
    RunResult,
    load_benchmark_class,
    resume_command,
    run_benchmark,
    validate_options,
)
from assay.gate import GateOptions, check_options, print_verdict
from assay.runs import Scorecard

_P = click.Path(path_type=Path)

SHARED_OPTIONS: list[click.Option] = [
    click.Option(
        ["--suite"], default=None, envvar="ASSAY_SUITE", help="Suite to run (default: the benchmark's own)."
    ),
    click.Option(
        ["--iterations", "-n"],
        type=click.IntRange(min=1),
        default=1,
        envvar="ASSAY_ITERATIONS",
        show_default=True,
        help="Attempts per case; repeats are folded into stability labels.",
    ),
    click.Option(
        ["--max-concurrency", "-j"],
        type=click.IntRange(min=1),
        default=4,
        envvar="ASSAY_MAX_CONCURRENCY",
        show_default=True,
        help="Attempts in flight at once.",
    ),
    click.Option(
        ["--timeout", "timeout_s"],
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        envvar="ASSAY_TIMEOUT",
        help="Per-attempt timeout in seconds (TIMEOUT status).",
    ),
    click.Option(
        ["--out"], type=_P, default=None, help="Run directory (default results/<benchmark>-<suite>-<UTC>)."
    ),
    click.Option(
        ["--results-dir"],
        type=_P,
        default=Path("results"),
        envvar="ASSAY_RESULTS_DIR",
        show_default=True,
        help="Where new run directories go.",
    ),
    click.Option(["--seed"], type=int, default=0, envvar="ASSAY_SEED", show_default=True),
    click.Option(
        ["--executor"],
        type=click.Choice(["local", "ray"]),
        default="local",
        envvar="ASSAY_EXECUTOR",
        show_default=True,
        help="Where attempts run: here, or as tasks on a Ray cluster (the journal stays here).",
    ),
    click.Option(
        ["--ray-address"],
        default="auto",
        envvar="ASSAY_RAY_ADDRESS",
        show_default=True,
        help="With --executor ray: the cluster (auto, local, HOST:PORT or ray://HOST:PORT).",
    ),
    click.Option(
        ["--resume"],
        type=_P,
        default=None,
        help="Run only the attempts RUN_DIR lacks, under its recorded config, then rewrite its scorecard.",
    ),
    click.Option(
        ["--compare", "--gate", "compare"],
        type=_P,
        default=None,
        help="Baseline run dir / scorecard to compare with; exit 2 on a regression, 3 if not comparable.",
    ),
    click.Option(["--noise"], type=_P, default=None, help="noise.json giving the noise floor for --compare."),
    click.Option(
        ["--allow-subject-change"],
        is_flag=True,
        help="With --compare: hold a run of another subject model (or agent) case by case; the verdict says so.",
    ),
    click.Option(["--save-baseline"], type=_P, default=None, help="Write this run as a baseline to DIR."),
    click.Option(["--force"], is_flag=True, help="With --save-baseline: accept a 1-iteration run."),
    click.Option(
        ["--require-complete"],
        is_flag=True,
        help="Exit 2 if any case is unmeasured (or, with --compare, missing from the baseline).",
    ),
    click.Option(["--expect"], type=_P, default=None, help="Expectations file to check the run against."),
    click.Option(
        ["--detect"],
        type=click.FloatRange(min=0.0, min_open=True, max=1.0),
        default=None,
        help="A change of a proportion you want to see (0.03): the report says how many cases it needs.",
    ),
    click.Option(["--enforce"], is_flag=True, help="With expectations: exit 2 on a miss."),
    JUNIT_OPTION,
    SUMMARY_OPTION,
]
SHARED_NAMES = {o.name for o in SHARED_OPTIONS}
_LIST_OPTION = click.Option(["--list", "list_cases"], is_flag=True, help="List the suite's cases and exit.")


_MAX_METRICS_SHOWN = 12


def print_summary(result: RunResult, console: Console) -> None:
    card: Scorecard = result.scorecard
    s = card.summary
    table = Table(title=f"{card.benchmark} · {card.suite}", show_header=True)
    table.add_column("status")
    table.add_column("count", justify="right")
    for status, n in s.counts.items():
        if n:
            table.add_row(status, str(n))
    console.print(table)
    if s.measured:
        console.print(
            f"pass rate {100 * (s.pass_rate or 0):.1f}% of {s.measured} measured "
            f"(95% CI {100 * (s.pass_rate_low or 0):.1f}–{100 * (s.pass_rate_high or 0):.1f}%)"
        )
    shown = [(n, m) for n, m in s.metrics.items() if m.value is not None]
    if len(shown) > _MAX_METRICS_SHOWN:  # long breakdowns (per tag, per level) stay in the report
        shown = [(n, m) for n, m in shown if m.gated][:_MAX_METRICS_SHOWN]
    for name, m in shown:
        console.print(  # a name may hold brackets (``recall@5[multi-hop]``): not rich markup
            f"  {name}: {m.value:.4g}{(' ' + m.unit) if m.unit else ''}{'' if m.gated else ' (not gated)'}",
            markup=False,
        )
    if len(shown) < len(s.metrics):
        console.print(f"  ... {len(s.metrics) - len(shown)} more metrics in {result.run_dir / 'report.md'}")
    _print_failures(result, console)
    console.print(f"run directory: {result.run_dir}")


_MAX_FAILURES_SHOWN = 5


def _print_failures(result: RunResult, console: Console) -> None:
    """Each failing case with its benchmark's own reason (the first few; report.md has them all)."""
    if result.benchmark is None:
        return
    from assay.report import collect_failures
    from assay.report.failure_reasons import md_text

    failed = collect_failures(result.scorecard, result.attempts, result.benchmark.failure_reason).failed
    if not failed:
        return
    console.print("why cases failed:", markup=False)
    for case in failed[:_MAX_FAILURES_SHOWN]:
        reason = case.reasons[0][1] if case.reasons else ""
        console.print(
            f"  {case.case_id}: {md_text(reason, 300)}", markup=False, highlight=False, soft_wrap=True
        )
    if len(failed) > _MAX_FAILURES_SHOWN:
        console.print(f"  ... {len(failed) - _MAX_FAILURES_SHOWN} more in {result.run_dir / 'report.md'}")


def _gate_options(shared: dict[str, Any]) -> GateOptions:
    """What the run is held to: the shared --compare/--allow-subject-change/--noise/--save-baseline/--force/
    --require-complete/--expect/--enforce, whether CI outputs (--junit/--summary) were asked for, and --detect."""
    return GateOptions(
        compare=shared["compare"],
        noise=shared["noise"],
        allow_subject_change=shared["allow_subject_change"],
        detect=shared["detect"],
        save_baseline=shared["save_baseline"],
        require_complete=shared["require_complete"],
        force=shared["force"],
        expect=shared["expect"],
        enforce=shared["enforce"],
        fail_unspent=shared["junit"] is not None or shared["summary"] is not None,
    )


def _ci_outputs(result: RunResult, shared: dict[str, Any], cls: type[Benchmark]) -> None:
    """--junit and --summary (default $GITHUB_STEP_SUMMARY), from the scorecard and verdict the run holds."""
    from assay.ci.outputs import eval_outputs

    eval_outputs(
        result.scorecard,
        result.verdict,
        result.meta,
        has_case_filter="scenario" in cls.Options.model_fields,
        junit=shared["junit"],
        summary=shared["summary"],
    )


def _check_baseline_before_running(shared: dict[str, Any], gate: GateOptions) -> None:
    """`--save-baseline` from one iteration is refused before the run, not after it was measured."""
    if gate.save_baseline is None:
        return
    iterations = shared["iterations"]
    if shared["resume"] is not None:  # the run's own iterations, or more if --iterations extends it
        from assay.runs import load_meta

        iterations = max(iterations, load_meta(Path(shared["resume"])).iterations)
    check_options(gate, iterations)


def _check_resume_benchmark(name: str, run_dir: Path) -> None:
    """`assay eval X --resume DIR` must name the benchmark DIR was run with, not silently resume another."""
    from assay.runs import load_meta

    meta = load_meta(Path(run_dir))
    recorded = meta.benchmark
    # a command may run several named benchmarks (`retrieval` runs retrieval-rag and retrieval-code)
    if recorded != name and not recorded.startswith(f"{name}-"):
        try:
            owner: type[Benchmark] | str = load_benchmark_class(meta, Path(run_dir))
        except ResumeError:  # a class that no longer loads: the name it recorded
            owner = recorded
        raise ResumeError(
            f"--resume {run_dir}: a {recorded} run, not {name}; resume it with "
            f"`{resume_command(owner, run_dir)}`"
        )


def _given(ctx: click.Context, param: str) -> bool:
    """Whether the user set ``param`` (on the command line or through its environment variable)."""
    source = ctx.get_parameter_source(param)
    return source in (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)


def make_command(name: str, cls: type[Benchmark]) -> click.Command:
    own = click_options(cls.Options)
    clash = SHARED_NAMES & {o.name for o in own}
    if clash:
        raise ConfigError(f"benchmark {name!r} redefines shared options: {sorted(clash)}")
    params = [*SHARED_OPTIONS, *own]
    if hasattr(cls, "describe"):
        params.append(_LIST_OPTION)

    @click.pass_context
    def callback(ctx: click.Context, **kwargs: Any) -> None:
        if ctx.invoked_subcommand is not None:  # `assay eval agent controls ...`: the subcommand runs alone
            command_line = click.core.ParameterSource.COMMANDLINE  # an environment variable is no clash
            given = [
                f"--{p.replace('_', '-')}" for p in kwargs if ctx.get_parameter_source(p) == command_line
            ]
            if given:
                raise click.UsageError(
                    f"{', '.join(given)} belong(s) to `assay eval {name}`, not to its "
                    f"`{ctx.invoked_subcommand}` subcommand; put the subcommand's own options after it"
                )
            return
        shared = {k: kwargs.pop(k) for k in SHARED_NAMES}
        console = Console(stderr=False)
        if kwargs.pop("list_cases", False):
            click.echo(cls.describe(validate_options(cls.Options, kwargs)))  # type: ignore[attr-defined]
            return
        gate = _gate_options(shared)
        check_options(gate)  # a missing --compare/--noise/--expect is refused before the run
        if shared["resume"] is not None:
            _check_resume_benchmark(name, shared["resume"])
        _check_baseline_before_running(shared, gate)
        if (
            shared["executor"] != "ray"
            and ctx.get_parameter_source("ray_address") == click.core.ParameterSource.COMMANDLINE
        ):
            raise ConfigError(
                "--ray-address names the cluster of --executor ray; add --executor ray or drop it"
            )
        opts = RunOptions(
            suite=shared["suite"],
            iterations=shared["iterations"],
            max_concurrency=shared["max_concurrency"],
            timeout_s=shared["timeout_s"],
            out=shared["out"],
            results_dir=shared["results_dir"],
            seed=shared["seed"],
            resume=shared["resume"],
            # with --resume, an --iterations the user gave extends the run (fewer is refused), not ignored
            resume_iterations=shared["iterations"] if _given(ctx, "iterations") else None,
            command_line=["assay", *sys.argv[1:]],
            progress=True,
            executor=shared["executor"],
            ray_address=shared["ray_address"],
            gate=gate,
        )
        note = None if shared["resume"] else cls.suite_notes.get(shared["suite"] or cls.default_suite)
        if note:
            click.echo(f"note: {note}")
        result = run_benchmark(None if shared["resume"] else cls, kwargs, opts)
        print_summary(result, console)
        if note:
            click.echo(f"note: {note}")
        if result.stopped_reason:
            click.echo(f"error: run stopped: {result.stopped_reason}", err=True)
            click.echo(f"resume with: {result.resume_command}", err=True)
        else:
            print_verdict(result.verdict, console)
        _ci_outputs(result, shared, cls)
        ctx.exit(result.verdict.exit_code)

    help_text = cls.help or cls.__doc__
    subcommands = dict(cls.subcommands)
    if subcommands:
        return BenchmarkGroup(
            name=name, params=params, callback=callback, help=help_text, subcommands=subcommands
        )
    return click.Command(name=name, params=params, callback=callback, help=help_text)


class BenchmarkGroup(click.Group):
    """A benchmark's command that also has subcommands: run bare, it runs the benchmark."""

    def __init__(self, *, subcommands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(invoke_without_command=True, **kwargs)
        self.subcommand_specs = subcommands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.subcommand_specs)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = self.subcommand_specs.get(name)
        return load_command(spec) if spec else None


class EvalGroup(click.Group):
    """Lists every registered benchmark; builds its command when named."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        table = dict(EVAL_SHORT_HELP)
        for name in available():
            try:
                cls = get_benchmark(name)
            except (ImportError, AttributeError, ConfigError):
                continue  # listed as unavailable
            table[name] = cls.short_help or (cls.help or cls.__doc__ or "").strip().split("\n")[0]
        format_commands_from_table(self, ctx, formatter, table)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(available()) | set(EVAL_EXTRA_COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in EVAL_EXTRA_COMMANDS:
            return load_command(EVAL_EXTRA_COMMANDS[name])
        if name not in available():
            return None
        try:
            cls = get_benchmark(name)
        except (ImportError, AttributeError, ConfigError) as exc:
            from assay.cli._main import _unavailable

            return _unavailable(f"eval {name}", exc)
        if cls.command is not None:
            return load_command(cls.command)
        return make_command(name, cls)


@click.group(cls=EvalGroup, name="eval")
def eval_group() -> None:
    """Run a benchmark. Shared options: --suite, --iterations, --max-concurrency, --resume, --compare, ..."""
