"""`assay hillclimb`: edit the agent's profile one change at a time, keep only real, held-out-safe gains."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from assay.errors import ConfigError, InfraError

if TYPE_CHECKING:
    from assay.hillclimb import FixHistory

_P = click.Path(path_type=Path)


@click.command("hillclimb")
@click.option(
    "--benchmark",
    type=click.Choice(["agent", "tasks"]),
    default="agent",
    show_default=True,
    help="What to climb: agent (eval agent's scenarios) or tasks (the coding tasks of an eval tasks toybox suite).",
)
@click.option(
    "--suite",
    default=None,
    help="agent: pr or full (default full); tasks: core, adversarial, everyday or full (default core).",
)
@click.option("--category", default=None, help="Only these scenario or task categories (comma list).")
@click.option(
    "--scenarios",
    "scenarios_dir",
    type=_P,
    default=None,
    help="agent: scenario folder (default eval/scenarios).",
)
@click.option(
    "--tasks-file", type=_P, default=None, help="tasks: tasks.json (default eval/tasks/tasks.json)."
)
@click.option(
    "--work-root",
    type=_P,
    default=None,
    help="tasks: where task copies are made (default a temporary folder).",
)
@click.option(
    "--fixer", default=None, help="The harness that edits: reference, claude-code, command:TEMPLATE, ..."
)
@click.option("--fixer-model", default=None, help="The fixer's model (needed by --fixer reference).")
@click.option(
    "--fixer-tool",
    default=None,
    help="--fixer reference: hold each of its model calls to this tool (write_file, edit_file, ...): a weak "
    "model calls none by itself.",
)
@click.option(
    "--fixer-fence",
    is_flag=True,
    default=None,
    help="Run the fixer under bubblewrap: it sees its copy of the profile and no other file (a command fixer "
    "could otherwise read held-out runs).",
)
@click.option(
    "--fixer-max-steps",
    type=click.IntRange(min=1),
    default=None,
    help="Model calls per fixer run (default 12).",
)
@click.option(
    "--fixer-wall", type=click.FloatRange(min=1), default=None, help="Seconds per fixer run (default 900)."
)
@click.option("--rounds", type=click.IntRange(min=1), default=5, show_default=True, help="Most rounds.")
@click.option(
    "--iterations", type=click.IntRange(min=3), default=3, show_default=True, help="Repeats per split."
)
@click.option("--salt", default=None, help="Salt of the train/held-out split (rotates it).")
@click.option(
    "--noise", type=_P, default=None, help="noise.json from `assay eval noise`: per-case noise floors."
)
@click.option(
    "--max-cost", type=click.FloatRange(min=0), default=None, help="Stop once this many USD are spent."
)
@click.option("--max-wall", type=click.FloatRange(min=0), default=None, help="Stop after this many seconds.")
@click.option(
    "--profile",
    type=_P,
    default=None,
    help="The profile folder to edit, in the repository this runs from (`assay agent profile init DIR` copies the built-in one).",
)
@click.option(
    "--branch", default=None, help="Name of the scratch branch to create (default hillclimb/<time>)."
)
@click.option("--out", type=_P, default=None, help="The loop's folder (default results/hillclimb-<time>).")
@click.option("--resume", type=_P, default=None, help="Resume the loop in this folder where it stopped.")
@click.option("--model", default=None, help="The agent's model (agent: full only; tasks: required).")
@click.option("--simulator-model", default=None, help="full: the simulated user's model.")
@click.option(
    "--judge-model",
    default=None,
    help="The judge's model (agent: full only; tasks: recorded, and a --noise file must match it).",
)
@click.option(
    "--allow-self-judge",
    is_flag=True,
    default=None,
    help="agent full: let the judge and the simulator run the agent's own model (refused otherwise).",
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=None,
    help="Agent model calls per user message (agent) or per task (tasks).",
)
@click.option(
    "--max-user-messages", type=click.IntRange(min=1), default=None, help="User messages per objective."
)
@click.option(
    "--run-timeout",
    type=click.FloatRange(min=1),
    default=None,
    help="tasks: wall clock of one agent run on one task, seconds (default 600).",
)
@click.option("--agent-max-tokens", type=click.IntRange(min=16), default=None, help="Tokens per agent call.")
@click.option("--judge-schema", type=click.Choice(["auto", "on", "off"]), default=None)
@click.pass_context
def hillclimb_command(ctx: click.Context, **kw: object) -> None:
    """Split the scenarios into train and held-out, measure both, then let --fixer make one edit of the
    agent's profile per round: kept (committed on a scratch branch) only if train improves beyond the noise
    floor and held-out does not regress, else reverted. Writes fix_history.json and report.md.

    Exit 0 finished, 1 usage error (a dirty tree names its files), 3 stopped by an outage (resume with
    --resume DIR), 130 interrupted (resume with --resume DIR).
    """
    from assay.hillclimb import HillclimbConfig, resume_hillclimb, run_hillclimb
    from assay.hillclimb.loop import default_out
    from assay.hillclimb.report import render_report

    resume, out = kw.pop("resume"), kw.pop("out")
    if resume is not None:
        given = [f"--{k.replace('_', '-')}" for k, v in kw.items() if v is not None and k not in _DEFAULTED]
        if given:
            raise ConfigError(f"--resume runs under the loop's recorded settings; drop {', '.join(given)}")
        where = Path(resume).resolve()
        history = _guard(lambda: resume_hillclimb(where, echo=click.echo, progress=True), where)
    else:
        if not kw.get("fixer"):
            raise click.UsageError(
                "--fixer is required (reference with --fixer-model, claude-code, command:...)"
            )
        eval_keys = ("suite", "category", "scenarios_dir", "tasks_file", "work_root", "run_timeout", "model", "simulator_model",
                     "judge_model", "allow_self_judge", "max_steps", "max_user_messages", "agent_max_tokens", "judge_schema")  # fmt: skip
        where = Path(out).resolve() if out is not None else default_out(Path("results"))  # type: ignore[arg-type]
        config = HillclimbConfig(
            fixer=str(kw["fixer"]),
            benchmark=str(kw["benchmark"]),
            eval_options={k: kw[k] for k in eval_keys if kw[k] is not None},
            fixer_model=kw["fixer_model"],  # type: ignore[arg-type]
            fixer_tool=kw["fixer_tool"],  # type: ignore[arg-type]
            fixer_fence=bool(kw["fixer_fence"]),
            rounds=int(kw["rounds"]),  # type: ignore[call-overload]
            iterations=int(kw["iterations"]),  # type: ignore[call-overload]
            noise=kw["noise"],  # type: ignore[arg-type]
            max_cost=kw["max_cost"],  # type: ignore[arg-type]
            max_wall_s=kw["max_wall"],  # type: ignore[arg-type]
            profile=kw["profile"],  # type: ignore[arg-type]
            out=where,
            branch=kw["branch"],  # type: ignore[arg-type]
            progress=True,
            echo=click.echo,
        )
        config.fixer_limits = config.fixer_limits.model_copy(
            update={k: v for k, v in (("max_steps", kw["fixer_max_steps"]), ("wall_clock_s", kw["fixer_wall"]))
                    if v is not None}
        )  # fmt: skip
        if kw["salt"] is not None:
            config.salt = str(kw["salt"])
        history = _guard(lambda: run_hillclimb(config), where)
    click.echo(render_report(history))
    click.echo(f"fix_history.json and report.md in {where}")
    ctx.exit(0)


#: options with a default that --resume does not count as given
_DEFAULTED = {"benchmark", "rounds", "iterations"}


def _guard(fn: Callable[[], FixHistory], out: Path) -> FixHistory:
    """Run the loop; a Ctrl-C or an outage says how to resume it (the loop saved where it was)."""
    try:
        return fn()
    except KeyboardInterrupt:
        if (out / "fix_history.json").is_file():
            from assay._util import say_stopped

            say_stopped(f"interrupted; resume with: assay hillclimb --resume {out}")
        raise
    except InfraError:
        if (out / "fix_history.json").is_file():
            click.echo(f"stopped by an outage; resume with: assay hillclimb --resume {out}", err=True)
        raise
