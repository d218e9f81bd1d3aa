"""`assay eval agent draft` (a scenario from a real session or issue) and `assay eval agent promote`."""

from __future__ import annotations

from pathlib import Path

import click

from assay.errors import ConfigError
from assay.evals.agent.draft_session import FORMATS

_P = click.Path(path_type=Path)


@click.command("draft")
@click.option(
    "--from-session",
    "session",
    type=_P,
    default=None,
    help="A session: Claude Code stream-json, codex/mini-swe-agent/aider transcript, an `assay agent run "
    "--save` record, or an `assay eval agent` run (folder or results.jsonl).",
)
@click.option(
    "--from-issue",
    "issue",
    type=_P,
    default=None,
    help="A GitHub issue: `gh issue view N --json title,body,comments,url,number,labels` output, or markdown.",
)
@click.option(
    "--category",
    default=None,
    help="The draft's category (default: from the issue's labels, else uncategorized).",
)
@click.option(
    "--id", "draft_id", default=None, help="The scenario id (default: from the first message or the title)."
)
@click.option(
    "--out-dir",
    type=_P,
    default=None,
    help="Where drafts go, as <out-dir>/<category>/<id>.yaml (default eval/scenarios/drafts).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", *FORMATS]),
    default="auto",
    show_default=True,
    help="--from-session's format (auto: found from the file).",
)
@click.option("--case", default=None, help="--from-session RUN: the scenario of the run to draft from.")
@click.option("--force", is_flag=True, default=False, help="Replace a draft already at the target.")
def draft_command(
    session: Path | None,
    issue: Path | None,
    category: str | None,
    draft_id: str | None,
    out_dir: Path | None,
    fmt: str,
    case: str | None,
    force: bool,
) -> None:
    """Draft a scenario from real use: a session's user turns (its tool calls as expected_tools candidates), or
    an issue's reproduction steps (its expected section as the success criteria). Scrubbed; TODO marks what a
    person must write before `promote`."""
    from assay.evals.agent.draft import draft_from_issue, draft_from_session, write_draft
    from assay.evals.agent.promote import draft_problems

    if (session is None) == (issue is None):
        raise ConfigError("give one of --from-session FILE or --from-issue FILE")
    if issue is not None:
        if fmt != "auto" or case is not None:
            raise ConfigError("--format and --case read a --from-session file, not --from-issue")
        draft = draft_from_issue(issue, category=category, draft_id=draft_id)
    else:
        assert session is not None
        draft = draft_from_session(session, category=category, draft_id=draft_id, fmt=fmt, case=case)
    path, scenario = write_draft(draft, out_dir=out_dir, force=force)
    click.echo(f"wrote {path} ({len(scenario.turns)} turn(s), source {draft.source_kind}: {draft.link})")
    problems = draft_problems(scenario, path.read_text(encoding="utf-8"), None)
    click.echo(f"to finish before promote ({len(problems)}):")
    for problem in problems:
        click.echo(f"  - {problem}")
    click.echo("then run it on a strong and a weak model, and promote it:")
    click.echo(f"  assay eval agent --suite full --scenario {scenario.id} --model MODEL --iterations 2")
    click.echo(f"  assay eval agent promote {path} --strong RUN_DIR --weak RUN_DIR")


@click.command("promote")
@click.argument("draft", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--strong",
    multiple=True,
    type=_P,
    required=True,
    help="A run of the stronger model that includes the draft (repeatable).",
)
@click.option(
    "--weak",
    multiple=True,
    type=_P,
    required=True,
    help="A run of the weaker model that includes the draft (repeatable).",
)
@click.option("--category", default=None, help="The category to move it into (default: the draft's).")
@click.option(
    "--scenarios",
    "scenarios_dir",
    type=_P,
    default=None,
    help="The scenarios folder to move it into (default: the one the draft is in).",
)
def promote_command(
    draft: Path,
    strong: tuple[Path, ...],
    weak: tuple[Path, ...],
    category: str | None,
    scenarios_dir: Path | None,
) -> None:
    """Move a finished DRAFT into the suite: refused with a TODO left, no difficulty_rationale, a turn without
    success criteria or ground truth, no known category, or when the health rule on the two runs flags it
    saturated or always-fail (impossible)."""
    from assay.evals.agent.promote import promote

    done = promote(draft, strong=strong, weak=weak, category=category, scenarios_dir=scenarios_dir)
    flags = f" (health: {', '.join(done.flags)})" if done.flags else ""
    click.echo(f"promoted {done.scenario_id}: {done.source} -> {done.target}{flags}")
    click.echo("still to do:")
    for step in done.next_steps:
        click.echo(f"  - {step}")
