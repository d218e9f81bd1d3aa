"""`assay ci plan|run|verify|scan|init`: assay in CI. Each body calls one function of :mod:`assay.ci`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass

_P = click.Path(path_type=Path)
_TIERS_HELP = "The tiers file (default eval/ci_tiers.json)."


def _tiers(path: Path | None):
    from assay.evals.agent.tiers import load_tiers

    return load_tiers(path or Path("eval") / "ci_tiers.json")


def _list(value: str | None) -> list[str]:
    from assay.evals.agent.select import parse_list

    return parse_list(value or None)


@click.group("ci")
def ci_group() -> None:
    """Run assay from CI: plan what an event runs, run it, verify a release, write workflows."""


@ci_group.command("plan")
@click.option("--event", required=True, type=click.Choice(["pr", "tag", "schedule", "dispatch"]))
@click.option("--tag", default=None, help="The tag pushed (--event tag).")
@click.option(
    "--annotation",
    default=None,
    help="The tag's message (default: read from git; a lightweight tag has none).",
)
@click.option("--tier", default=None, help="--event dispatch: the tier to run.")
@click.option("--categories", default=None, help="--event dispatch: only these categories (comma list).")
@click.option("--scenarios", default=None, help="--event dispatch: only these case ids (comma list).")
@click.option("--model", default=None, help="--event dispatch: the model under test.")
@click.option("--tiers", "tiers_file", type=_P, default=None, help=_TIERS_HELP)
@click.option("--out", type=_P, default=None, help="Write the plan as JSON here (for `assay ci run`).")
def plan_command(
    event: str,
    tag: str | None,
    annotation: str | None,
    tier: str | None,
    categories: str | None,
    scenarios: str | None,
    model: str | None,
    tiers_file: Path | None,
    out: Path | None,
) -> None:
    """Print what EVENT runs; with $GITHUB_OUTPUT set, write run_evals, verify, tier and matrix to it."""
    from assay.ci import make_plan
    from assay.ci.run import tag_annotation

    if event == "tag" and tag and annotation is None:
        annotation = tag_annotation(tag)
    plan = make_plan(
        _tiers(tiers_file),
        event,
        tag=tag,
        annotation=annotation,
        tier=tier or None,
        categories=_list(categories),
        scenarios=_list(scenarios),
        model=model or None,
    )
    click.echo(plan.text())
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(plan.to_json(), encoding="utf-8")
    gh_output = os.environ.get("GITHUB_OUTPUT")
    if gh_output:
        import json

        d = plan.as_dict()
        with open(gh_output, "a", encoding="utf-8") as fh:
            fh.write(f"run_evals={str(d['run_evals']).lower()}\nverify={str(plan.verify).lower()}\n")
            fh.write(f"tier={plan.tier or ''}\nmatrix={json.dumps(d['matrix'])}\n")


@ci_group.command("run")
@click.argument("plan_file", type=_P)
@click.option("--job", default=None, help="Run only this job of the plan (a matrix entry's name).")
@click.pass_context
def run_command(ctx: click.Context, plan_file: Path, job: str | None) -> None:
    """Run the jobs of PLAN_FILE (from `assay ci plan --out`), each to its end; exit with the worst code."""
    from assay.ci.run import load_plan_jobs, run_jobs

    done = run_jobs(load_plan_jobs(plan_file, job), echo=click.echo)
    for j in done:
        click.echo(f"{j.name:<20} exit {j.exit_code}  {j.junit}")
    ctx.exit(max((j.exit_code for j in done), default=0))


@ci_group.command("verify")
@click.option("--commit", required=True, help="The commit the final tag points at.")
@click.option("--tag", default=None, help="The final tag: its RC tags' commits count too (read from git).")
@click.option("--runs", "runs", multiple=True, required=True, type=_P, help="Run dirs, or folders of them.")
@click.option("--tiers", "tiers_file", type=_P, default=None, help=_TIERS_HELP)
@click.pass_context
def verify_command(
    ctx: click.Context, commit: str, tag: str | None, runs: tuple[Path, ...], tiers_file: Path | None
) -> None:
    """Pass only when a full sweep measured COMMIT or one of the tag's RC tags; say which run did."""
    from assay.ci.run import rc_commits
    from assay.ci.verify import find_runs, verify

    result = verify(commit, find_runs(list(runs)), _tiers(tiers_file), rc_commits(tag) if tag else {})
    click.echo(result.text())
    ctx.exit(result.exit_code)


@ci_group.command("scan")
@click.argument("root", type=_P)
@click.pass_context
def scan_command(ctx: click.Context, root: Path) -> None:
    """Exit 2 if a file under ROOT holds a secret value or a secret-shaped string (before an upload)."""
    from assay.ci.run import scan_for_secrets

    if not root.exists():
        click.echo(f"{root}: nothing to scan")
        return
    leaks = scan_for_secrets(root)
    for path in leaks:
        click.echo(f"secret found: {path}", err=True)
    click.echo(f"scanned {root}: {len(leaks)} file(s) with secrets")
    ctx.exit(2 if leaks else 0)


@ci_group.group("init")
def init_group() -> None:
    """Write CI workflow files."""


@init_group.command("github")
@click.option("--dir", "directory", type=_P, default=Path(".github/workflows"), show_default=True)
@click.option(
    "--install", default="pip install -e .", show_default=True, help="How the workflows install assay."
)
@click.option("--python", default="3.11", show_default=True)
@click.option("--force", is_flag=True, help="Overwrite workflows that exist.")
def init_github_command(directory: Path, install: str, python: str, force: bool) -> None:
    """Workflows for pull requests, release tags, the weekly backlog and a targeted dispatch."""
    from assay.ci.github import write_workflows

    for path in write_workflows(directory, install=install, python=python, force=force):
        click.echo(f"wrote {path}")


def _runs(paths: tuple[Path, ...]) -> list[Path]:
    from assay.ci.verify import find_runs

    return find_runs(list(paths))


@click.command("trend")
@click.argument("run_dirs", nargs=-1, required=True, type=_P)
@click.option("--metric", default="pass_rate", show_default=True, help="pass_rate or a summary metric.")
@click.option("--target", type=float, required=True, help="The value a backlog item must reach, every run.")
@click.option(
    "--previous", type=_P, default=None, help="Last week's trend.json: its points are carried forward."
)
@click.option("--out", type=_P, required=True, help="Folder for trend.json and trend.png.")
def trend_command(
    run_dirs: tuple[Path, ...], metric: str, target: float, previous: Path | None, out: Path
) -> None:
    """Track METRIC over RUN_DIRs (or folders of runs); suggest moving items that pass reliably (never applied)."""
    from assay.ci.trend import build_trend, load_previous, write_trend
    from assay.runs import load_scorecard

    cards = [load_scorecard(r) for r in _runs(run_dirs)]
    prev = load_previous(previous, metric) if previous is not None else None
    trend = build_trend(cards, metric, target, prev)
    for path in write_trend(trend, out):
        click.echo(f"wrote {path}")
    click.echo(f"{len(trend.points)} point(s) of {metric}, target {target:g}")
    for line in trend.suggestions:
        click.echo(f"suggest: {line}")


@click.command("scorecard")
@click.argument("run_dirs", nargs=-1, required=True, type=_P)
@click.option("--weights", type=_P, required=True, help="benchmark -> weight (JSON or YAML).")
@click.option("--out", type=_P, required=True, help="Folder for SCORECARD.md and release_scorecard.json.")
@click.option(
    "--compare", "previous", type=_P, default=None, help="A previous release scorecard (folder or JSON)."
)
@click.pass_context
def scorecard_command(
    ctx: click.Context, run_dirs: tuple[Path, ...], weights: Path, out: Path, previous: Path | None
) -> None:
    """Fold one run per benchmark into a weighted release aggregate; exit 2 on a drop beyond noise."""
    from assay.ci.scorecard import (
        compare_release,
        load_release,
        load_weights,
        release_scorecard,
        write_release,
    )
    from assay.runs import load_scorecard

    card = release_scorecard([load_scorecard(r) for r in _runs(run_dirs)], load_weights(weights))
    if previous is not None:
        card = compare_release(card, load_release(previous), str(previous))
    for path in write_release(card, out):
        click.echo(f"wrote {path}")
    click.echo(f"aggregate {card.aggregate:.3f} (95% CI {card.low:.3f}–{card.high:.3f})")
    if card.verdict:
        click.echo(card.verdict)
        for drop in card.drops:
            click.echo(f"  {drop}")
    ctx.exit(card.exit_code)


@click.command("cost")
@click.argument("run_dirs", nargs=-1, required=True, type=_P)
def cost_command(run_dirs: tuple[Path, ...]) -> None:
    """Sum tokens and cost per benchmark and role over RUN_DIRs (or folders of runs), with each cost's source."""
    from assay.ci.cost import cost_rollup

    click.echo(cost_rollup(_runs(run_dirs)).text())


__all__ = ["ci_group", "cost_command", "scorecard_command", "trend_command"]
