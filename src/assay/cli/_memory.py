"""`assay memory show|search|forget`: look into and edit a memory database."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from assay.errors import UsageError
from assay.memory.admin import default_db_path, forget_in, open_store, search_store, show_store

_DB = click.option(
    "--db",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    envvar="ASSAY_MEMORY_DB",
    help="Memory database (default $ASSAY_HOME/memory.db).",
)
_EMB = click.option(
    "--embedder", default=None, help="Embedder spec (default: the one the database was built with)."
)


@click.group(name="memory")
def memory_group() -> None:
    """Inspect and edit long-term memory."""


@memory_group.command(name="show")
@_DB
@_EMB
@click.option("--history", is_flag=True, help="Include superseded items, old lessons and closed reminders.")
@click.option("--entity", default=None, help="Only items about this entity (user, a person, a project).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def show_command(
    db: Path | None, embedder: str | None, history: bool, entity: str | None, as_json: bool
) -> None:
    """What the store holds now: knowledge items, lessons and reminders."""
    store = open_store(db or default_db_path(), embedder)
    try:
        view = show_store(store, history=history, entity=entity)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(asdict(view), indent=2))
        return
    console = Console(width=140)
    table = Table(title=f"knowledge ({len(view.items)})")
    for col in ("id", "entity", "attribute", "content", "source", "conf", "since", "superseded by"):
        table.add_column(col)
    for it in view.items:
        table.add_row(
            str(it["id"]),
            it["entity"],
            it["attribute"] or "",
            it["content"],
            it["source"],
            f"{it['confidence']:.2f}",
            it["valid_from"][:10],
            str(it["superseded_by"] or ""),
        )
    console.print(table)
    for ls in view.lessons:
        console.print(f"lesson {ls['id']} [{ls['topic']}]: {ls['content']}")
    for r in view.reminders:
        console.print(f"reminder {r['id']} {r['status']} due {r['due_at'][:10]}: {r['content']}")
    console.print(f"{view.tombstones} forget tombstone(s)")


@memory_group.command(name="search")
@click.argument("query")
@_DB
@_EMB
@click.option("-k", "k", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--turns", is_flag=True, help="Search past conversation turns too.")
def search_command(query: str, db: Path | None, embedder: str | None, k: int, turns: bool) -> None:
    """Hybrid recall (vectors + full-text + recency + confidence) for QUERY."""
    store = open_store(db or default_db_path(), embedder)
    try:
        hits = search_store(store, query, k=k, turns=turns)
    finally:
        store.close()
    if not hits:
        click.echo("nothing matches")
    for h in hits:
        click.echo(
            f"{h.score:.3f}  {h.kind} {h.id}  {h.text}   "
            f"(vector {h.vector:.2f}, fts {h.fts:.2f}, recency {h.recency:.2f}, confidence {h.confidence:.2f})"
        )


@memory_group.command(name="forget")
@click.argument("target", required=False, default="")
@_DB
@_EMB
@click.option("--entity", default=None, help="Forget everything about this entity (e.g. manager).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def forget_command(target: str, db: Path | None, embedder: str | None, entity: str | None, yes: bool) -> None:
    """Forget TARGET (or everything about --entity) for good: items, chat sentences, and future mentions."""
    store = open_store(db or default_db_path(), embedder)
    try:
        if not yes:
            if not sys.stdin.isatty():
                raise UsageError("forgetting cannot be undone: use --yes when not interactive")
            click.confirm(
                f"Forget {(entity and 'everything about ' + entity) or repr(target)} permanently?", abort=True
            )
        result = forget_in(store, target, entity)
    finally:
        store.close()
    click.echo(
        f"forgot {result['forgotten_items']} item(s); scrubbed {result['scrubbed']} stored sentence(s)"
    )
