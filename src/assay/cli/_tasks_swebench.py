"""``assay eval tasks swebench [RUN_DIR]``: grade a swebench run's predictions (or, with ``--validate``, the
gold and empty patches of the chosen instances) with one grader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.errors import ExitCode

_P = click.Path(path_type=Path)
_SKIP = ("no_evaluate",)  # grading is what this command does


def swebench_options(seed: bool = True) -> list[click.Option]:
    """The options of ``--suite swebench``: which instances, where they come from, which grader (``--seed``
    only where the shared options of ``assay eval`` do not already define it)."""
    opts = [
        click.Option(["--instances"], envvar="ASSAY_INSTANCES", default=None, help="swebench: these instance ids (comma list; default a small pilot) [ASSAY_INSTANCES]."),
        click.Option(["--sample"], envvar="ASSAY_SAMPLE", type=click.IntRange(min=1), default=None, help="swebench: N instances picked by --seed [ASSAY_SAMPLE]."),
        click.Option(["--dataset"], envvar="ASSAY_DATASET", type=_P, default=None, help="swebench: a parquet or JSONL file of SWE-bench rows (default the pinned SWE-bench Verified) [ASSAY_DATASET]."),
        click.Option(["--offline"], envvar="ASSAY_OFFLINE", is_flag=True, default=False, help="swebench: never touch the network (the pinned dataset must be cached) [ASSAY_OFFLINE]."),
        click.Option(["--repo-source"], envvar="ASSAY_REPO_SOURCE", type=_P, default=None, help="swebench: fetch owner/name from DIR/owner__name (a local git repository) instead of GitHub [ASSAY_REPO_SOURCE]."),
        click.Option(["--repo-specs"], envvar="ASSAY_REPO_SPECS", type=_P, default=None, help="swebench: JSON specs (install, test_cmd, log_parser) for repositories swebench has none for [ASSAY_REPO_SPECS]."),
        click.Option(["--grader"], envvar="ASSAY_GRADER", type=click.Choice(["auto", "official", "local"]), default=None, help="swebench: official (Docker), local (a venv), auto (official where Docker answers) [ASSAY_GRADER]."),
        click.Option(["--no-evaluate"], envvar="ASSAY_NO_EVALUATE", is_flag=True, default=False, help="swebench: only write predictions.jsonl; grade later [ASSAY_NO_EVALUATE]."),
        click.Option(["--keep-images"], envvar="ASSAY_KEEP_IMAGES", is_flag=True, default=False, help="swebench, official grader: keep each instance's image [ASSAY_KEEP_IMAGES]."),
    ]  # fmt: skip
    if seed:
        opts.append(click.Option(["--seed"], envvar="ASSAY_SEED", type=int, default=None, help="swebench: the seed of --sample (default 0) [ASSAY_SEED]."))  # fmt: skip
    return opts


def _callback(run_dir: Path | None, validate: bool, work_root: Path | None, **kw: Any) -> None:
    from assay.evals.tasks._swebench import grade_run_dir
    from assay.evals.tasks._swebench_grade import validation_problems

    ctx = click.get_current_context()
    grader, verdicts, out = grade_run_dir(run_dir, {**kw, "validate": validate, "work_root": work_root})
    console = Console(soft_wrap=True)
    for v in verdicts:
        f2p, p2p = v.fail_to_pass, v.pass_to_pass
        line = f"{v.instance_id} [{v.patch}] {v.status} (grader: {grader}; FAIL_TO_PASS {f2p[0]}/{f2p[1]}, PASS_TO_PASS {p2p[0]}/{p2p[1]})"
        console.print(line + (f": {v.reason}" if v.reason else ""), highlight=False, markup=False)
    model = [v for v in verdicts if v.patch == "model"]
    if model:
        done = sum(v.resolved for v in model)
        measured = sum(v.status != "not_run" for v in model)
        console.print(f"resolved {done}/{measured} graded ({len(model) - measured} not run)", highlight=False)
    if out is not None:
        console.print(f"wrote {out}", highlight=False)
    if validate:
        problems = validation_problems(verdicts)
        for p in problems:
            click.echo(f"validation: {p}", err=True)
        ok = not problems
        console.print(
            f"validation {'passed' if ok else 'FAILED'}: gold resolves, empty does not", highlight=False
        )
        ctx.exit(0 if ok else int(ExitCode.REGRESSION))
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
        *[o for o in swebench_options() if o.name not in _SKIP],
]  # fmt: skip

tasks_swebench_command = click.Command(
    "swebench",
    params=_PARAMS,
    callback=_callback,
    help="Grade RUN_DIR's predictions.jsonl (a swebench run's) with the official harness (Docker) or the local "
    "grader; writes RUN_DIR/grades-<grader>.json. --validate checks the grader on the gold and empty patches.",
)
