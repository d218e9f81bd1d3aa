"""`assay rag index|search|ask|list|remove`: the document retrieval SDK from the command line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import click

from assay._util import reporting

_INDEX = click.option(
    "--index",
    "index_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    envvar="ASSAY_RAG_INDEX",
    help="Index folder (default $ASSAY_HOME/rag/index).",
)
_EMBEDDER = click.option(
    "--embedder", default=None, help="Embedder spec (default: the index's own, else local)."
)


@click.group(name="rag")
def rag_group() -> None:
    """Index documents (PDF, DOCX, PPTX, Markdown, HTML, text) and search or ask them."""


@rag_group.command(name="index")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@_INDEX
@_EMBEDDER
@click.option(
    "--chunk-tokens", type=click.IntRange(min=8), default=200, show_default=True, help="Chunk size in tokens."
)
@click.option(
    "--overlap",
    type=click.IntRange(min=0),
    default=32,
    show_default=True,
    help="Tokens shared by neighbouring chunks (at most half of --chunk-tokens).",
)
@click.option(
    "--max-documents",
    type=click.IntRange(min=1),
    default=None,
    help="Cap: past it the oldest documents are evicted.",
)
@click.option(
    "--ocr",
    is_flag=True,
    default=False,
    help="Read the mostly-image pages of PDFs with tesseract (else they are flagged DEGRADED).",
)
def index_command(
    paths: tuple[Path, ...],
    index_dir: Path | None,
    embedder: str | None,
    chunk_tokens: int,
    overlap: int,
    max_documents: int | None,
    ocr: bool,
) -> None:
    """Index files and folders; a changed file replaces its old text, an unchanged one is skipped."""
    from assay.rag import ChunkConfig, index_paths, open_index

    idx = open_index(
        index_dir,
        embedder=embedder,
        create=True,
        chunking=ChunkConfig(max_tokens=chunk_tokens, overlap_tokens=overlap),
        max_documents=max_documents,
        ocr=ocr,
    )
    with reporting():
        report = index_paths(idx, list(paths), index_dir)
    for r in report.results:
        extra = f" DEGRADED: {'; '.join(r.warnings)}" if r.degraded else ""
        evicted = f" (evicted {', '.join(r.evicted)})" if r.evicted else ""
        click.echo(f"{r.status:9} {r.doc_id}: {r.n_chunks} chunks, cache {r.cache}{evicted}{extra}")
    for path, msg in report.failures.items():
        click.echo(f"error: {msg}" if path in msg else f"error: {path}: {msg}", err=True)
    click.echo(f"{len(idx)} documents, {idx.n_chunks} chunks in the index")
    if report.failures:
        sys.exit(1)


@rag_group.command(name="search")
@click.argument("query")
@_INDEX
@_EMBEDDER
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="How many chunks.")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "bm25"]), default="hybrid", show_default=True)
@click.option(
    "--tool", is_flag=True, help="Use the query_documents tool (expansion, boost, adaptive cutoff)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines instead of text.")
def search_command(
    query: str, index_dir: Path | None, embedder: str | None, k: int, mode: str, tool: bool, as_json: bool
) -> None:
    """The chunks that best match QUERY, with document, page and score."""
    from assay.rag import open_index, query_documents

    idx = open_index(index_dir, embedder=embedder)
    hits = query_documents(idx, query, max_chunks=k).hits if tool else idx.search(query, k, mode)  # type: ignore[arg-type]
    for h in hits:
        c = h.chunk
        if as_json:
            click.echo(json.dumps({"rank": h.rank, "score": h.score, "doc": c.doc_id, "page": c.page,
                                   "start": c.start, "end": c.end, "text": c.text}))  # fmt: skip
        else:
            click.echo(f"{h.rank}. {c.doc_id} p.{c.page} [{c.start}:{c.end}] score {h.score:.4f}")
            click.echo("   " + " ".join(c.text.split())[:300])


@rag_group.command(name="ask")
@click.argument("question")
@_INDEX
@_EMBEDDER
@click.option("--model", required=True, envvar="ASSAY_MODEL", help="Model that answers (provider/name).")
@click.option(
    "-k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="Most chunks to give the model."
)
def ask_command(question: str, index_dir: Path | None, embedder: str | None, model: str, k: int) -> None:
    """Answer QUESTION from the indexed documents, citing the chunks used."""
    from assay.models import get_model
    from assay.rag import answer, open_index

    idx = open_index(index_dir, embedder=embedder)
    got = asyncio.run(answer(idx, question, get_model(model), k=k))
    click.echo(got.text)
    for n, h in enumerate(got.context, start=1):
        mark = "*" if h in got.cited else " "
        click.echo(f"{mark}[{n}] {h.chunk.doc_id} p.{h.chunk.page}", err=True)


@rag_group.command(name="list")
@_INDEX
def list_command(index_dir: Path | None) -> None:
    """The indexed documents, oldest first."""
    from assay.rag import open_index

    idx = open_index(index_dir)
    for d in idx.documents:
        flag = " (degraded)" if d.degraded else ""
        click.echo(f"{d.doc_id}\t{d.kind}\t{d.n_chunks} chunks\t{d.sha256[:12]}{flag}")


@rag_group.command(name="remove")
@click.argument("doc_ids", nargs=-1, required=True)
@_INDEX
def remove_command(doc_ids: tuple[str, ...], index_dir: Path | None) -> None:
    """Remove documents (by the id `assay rag list` shows)."""
    from assay.rag import default_index_dir, open_index

    idx = open_index(index_dir)
    missing = [d for d in doc_ids if not idx.remove_document(d)]
    idx.save(index_dir or default_index_dir())
    if missing:
        raise click.BadParameter(f"not in the index: {', '.join(missing)}", param_hint="DOC_IDS")
