"""`assay code-index build|search`: the code search index from the command line."""

from __future__ import annotations

from pathlib import Path

import click

from assay._util import reporting

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
_EMBEDDER = click.option(
    "--embedder",
    default=None,
    envvar="ASSAY_EMBEDDER",
    help="Embedder spec: local (default, MiniLM ONNX), hash, hash:DIM, openai-compat/NAME@URL.",
)
_INDEX_DIR = click.option(
    "--index-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the index lives (default $ASSAY_HOME/code_index/<name>-<hash>).",
)


@click.group(name="code-index")
def code_index_group() -> None:
    """Build and search the code index of a repository (dense + lexical, incremental)."""


@code_index_group.command("build")
@click.argument("path", type=_DIR)
@_EMBEDDER
@_INDEX_DIR
@click.option(
    "--max-file-bytes", type=click.IntRange(min=1), default=None, help="Skip files larger than this."
)
def build_command(
    path: Path, embedder: str | None, index_dir: Path | None, max_file_bytes: int | None
) -> None:
    """Index PATH, or update its index embedding only chunks whose text is new.

    Vectors of texts seen before come from a checksummed vector cache beside the index folder
    (ASSAY_VECTOR_CACHE=off turns it off, ASSAY_VECTOR_CACHE=/abs/dir moves it)."""
    from assay.codeindex import build_index

    with reporting():  # a bar on a terminal, plain progress lines otherwise
        idx, stats = build_index(path, embedder=embedder, index_dir=index_dir, max_file_bytes=max_file_bytes)
    if stats.rebuilt_reason:
        click.echo(f"rebuilt: the stored index could not be used ({stats.rebuilt_reason})", err=True)
    for note in idx.load_report.notes:
        click.echo(f"note: {note}", err=True)
    skipped = ", ".join(f"{k} {v}" for k, v in stats.skipped.items()) or "none"
    click.echo(
        f"{idx.index_dir}\n"
        f"files {stats.files_total} (added {stats.files_added}, changed {stats.files_changed}, "
        f"removed {stats.files_removed}, unchanged {stats.files_unchanged}); "
        f"chunks {stats.chunks_total}, embedded {stats.chunks_embedded} "
        f"(by content {stats.chunks_reused + stats.chunks_cached}); {stats.total_s:.2f}s\n"
        f"skipped: {skipped}"
    )


@code_index_group.command("search")
@click.argument("path", type=_DIR)
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many results.")
@click.option("--files", "level", flag_value="file", help="Rank files (by their best chunk).")
@click.option("--symbols", "level", flag_value="symbol", help="Rank symbols (functions, classes, methods).")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "dense", "lexical"]),
    default="hybrid",
    show_default=True,
    help="Retrieval.",
)
@_EMBEDDER
@_INDEX_DIR
def search_command(
    path: Path, query: str, k: int, level: str | None, mode: str, embedder: str | None, index_dir: Path | None
) -> None:
    """Search the index of PATH for QUERY."""
    from assay.codeindex import search_index

    result = search_index(
        path,
        query,
        k=k,
        level=level or "chunk",  # type: ignore[arg-type]
        mode=mode,
        embedder=embedder,
        index_dir=index_dir,
    )
    hits = result.hits
    if result.stale_paths:
        shown = ", ".join(result.stale_paths[:5]) + (" ..." if len(result.stale_paths) > 5 else "")
        click.echo(
            f"warning: {len(result.stale_paths)} file(s) changed since the index was built ({shown}); "
            f"run `assay code-index build {path}`",
            err=True,
        )
    if not hits:
        click.echo("no results")
    for h in hits:
        where = f"{h.path}:{h.start_line}-{h.end_line}"
        if level == "file":
            click.echo(f"{h.rank:>3}  {h.score:.4f}  {h.path}")
        else:
            click.echo(f"{h.rank:>3}  {h.score:.4f}  {where}  {h.kind} {h.symbol}".rstrip())
