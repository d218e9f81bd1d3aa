"""``assay eval tasks swebench [RUN_DIR]``: grade a swebench run's predictions (or, with ``--validate``, the
gold and empty patches of the chosen instances) with one grader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.cli._options import click_options
from assay.errors import ExitCode
from assay.evals.tasks import SwebenchGradeOptions

_SKIP = ("no_evaluate",)  # grading is what this command does


def _callback(run_dir: Path | None, validate: bool, work_root: Path | None, **kw: Any) -> None:
    from assay.evals.tasks import grade_run_dir, validation_counts

    ctx = click.get_current_context()
    checks: list[Any] = []
    grader, verdicts, out = grade_run_dir(
        run_dir, {**kw, "validate": validate, "work_root": work_root}, checks
    )
    console = Console(soft_wrap=True)
    cached = {c.instance_id for c in checks if c.cached}
    for v in verdicts:
        f2p, p2p = v.fail_to_pass, v.pass_to_pass
        line = f"{v.instance_id} [{v.patch}] {v.status} (grader: {grader}; FAIL_TO_PASS {f2p[0]}/{f2p[1]}, PASS_TO_PASS {p2p[0]}/{p2p[1]})"
        if v.patch != "model" and v.instance_id in cached:
            line += " [cached validation]"
        console.print(line + (f": {v.reason}" if v.reason else ""), highlight=False, markup=False)
    model = [v for v in verdicts if v.patch == "model"]
    if model:
        done = sum(v.resolved for v in model)
        measured = sum(v.status != "not_run" for v in model)
        console.print(
            f"resolved {done}/{measured} graded on a validated grader ({len(model) - measured} not run)",
            highlight=False,
        )
    if out is not None:
        console.print(f"wrote {out}", highlight=False)
    if validate:
        counts = validation_counts(checks)
        for outcome in ("not buildable", "wrong"):
            for iid, why in counts[outcome]:
                click.echo(f"{outcome}: {iid}: {why}", err=True)
        n = {k: len(v) for k, v in counts.items()}
        console.print(
            f"validation: {n['validated']} validated, {n['not buildable']} not buildable here, {n['wrong']} "
            f"wrong (gold does not resolve, or empty does) of {len({c.instance_id for c in checks})} instances "
            f"(grader: {grader})",
            highlight=False,
        )
        # the grader shown wrong on an instance, or validated on none: exit 2; instances that cannot be built
        # here are NOT_RUN in a run (listed above), never counted
        ctx.exit(int(ExitCode.REGRESSION) if n["wrong"] or not n["validated"] else 0)
    ctx.exit(0)


_PARAMS: list[click.Parameter] = [
        click.Argument(["run_dir"], required=False, type=click.Path(path_type=Path)),
        click.Option(
            ["--validate"],
            envvar="ASSAY_VALIDATE",
            is_flag=True,
            default=False,
            help="Also grade each instance's gold patch (must resolve) and an empty one (must not); exit 2 otherwise [ASSAY_VALIDATE].",
        ),
        click.Option(
            ["--work-root"],
            envvar="ASSAY_WORK_ROOT",
            type=click.Path(path_type=Path),
            default=None,
            help="Caches: dataset, repositories, grading envs (default $ASSAY_HOME/work) [ASSAY_WORK_ROOT].",
        ),
        *[o for o in click_options(SwebenchGradeOptions) if o.name not in _SKIP],
]  # fmt: skip

tasks_swebench_command = click.Command(
    "swebench",
    params=_PARAMS,
    callback=_callback,
    help="Grade RUN_DIR's predictions.jsonl (a swebench run's) with the official harness (Docker) or the local "
    "grader; writes RUN_DIR/grades-<grader>.json. --validate checks the grader on the gold and empty patches.",
)
