"""The `assay` command: a lazy group whose subcommands load on use, and one error edge."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from assay import __version__
from assay.cli._commands import COMMANDS, SHORT_HELP
from assay.errors import AssayError, ExitCode, StopEarly


def load_command(spec: str) -> click.Command:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


class LazyGroup(click.Group):
    """A group whose commands are imported only when named (or when help lists them)."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            try:
                return load_command(self.lazy[name])
            except (ImportError, AttributeError) as exc:
                return _unavailable(name, exc)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        format_commands_from_table(self, ctx, formatter, SHORT_HELP)


def format_commands_from_table(
    group: click.Group, ctx: click.Context, formatter: click.HelpFormatter, table: dict[str, str]
) -> None:
    """List a group's commands from a static help table, so `--help` imports nothing heavy."""
    rows = []
    for name in group.list_commands(ctx):
        text = table.get(name)
        if text is None:
            cmd = group.get_command(ctx, name)
            text = cmd.get_short_help_str(80) if cmd is not None else ""
        rows.append((name, text))
    if rows:
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _unavailable(name: str, exc: Exception) -> click.Command:
    @click.command(name=name, help=f"(unavailable: {exc})", context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def cmd(args: tuple[str, ...]) -> None:
        raise click.UsageError(f"`assay {name}` is unavailable: {exc}")

    return cmd


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "ASSAY"},
)
@click.version_option(__version__, prog_name="assay")
def cli() -> None:
    """assay: did this change make the agent better, or is that noise?

    Measures the parts an agent stands on (retrieval, code search, memory, serving speed) on one
    machine, with repeats, noise floors, baselines and gates. Every eval writes a run directory
    (meta.json, results.jsonl, scorecard.json, report.md, report.html).

    Exit codes: 0 ok, 1 usage or configuration error, 2 regression or missed expectation,
    3 not comparable or stopped by an infrastructure outage, 4 busy (another eval holds the lock),
    130 interrupted (Ctrl-C) or declined at a prompt.
    """


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user-fixable errors become one line on stderr and an exit code, never a traceback."""
    try:
        rv = cli.main(args=argv, prog_name="assay", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort as exc:
        # click turns Ctrl-C into Abort too; a declined confirmation is the other way here
        ctrl_c = isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt)
        from assay._util import stop_said

        if not (ctrl_c and stop_said()):  # a stopped run said so already, with its resume command
            click.echo("interrupted" if ctrl_c else "aborted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(ExitCode.USAGE)
    except StopEarly as exc:
        click.echo(str(exc), err=True)
        sys.exit(ExitCode.OK)
    except AssayError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        from assay._util import stop_said

        if not stop_said():
            click.echo("interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    # without standalone mode click returns the code given to ctx.exit()
    sys.exit(rv if isinstance(rv, int) else 0)
