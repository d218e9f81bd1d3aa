"""The toy benchmark's subcommand: ``assay eval toyreg hello``."""

from __future__ import annotations

import click


@click.command("hello")
def hello_command() -> None:
    """Say hello from the toy benchmark."""
    click.echo("hello from toyreg")
