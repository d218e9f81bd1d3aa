"""``assay eval retrieval``'s options: the flags both components take, declared once so `--component rag|code`
share their meaning, then each component's own."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from assay.exec import BenchmarkOptions, Flag

#: code search: how many commits the incremental replay re-indexes one after another
REPLAY_COMMITS = 3


class SharedRetrievalOptions(BenchmarkOptions):
    component: Annotated[
        Literal["rag", "code"],
        Flag("--component", show_default=True, help="What to evaluate: documents (rag) or code."),
    ] = "rag"
    dataset: Annotated[
        str | None, Flag("--dataset", help="Queries: an assay dataset file, or beir:DIR for a BEIR folder.")
    ] = None
    embedder: Annotated[
        str | None,
        Flag(
            "--embedder",
            help="Embedder spec (default: rag uses hash for pr and local for full; code uses local).",
        ),
    ] = None
    tolerance: Annotated[
        float | None,
        Field(ge=0, le=1),
        Flag(
            "--tolerance",
            help="How far a gated quality metric may fall before the gate fails "
            "(default: rag 0.02 or 1.5/questions, code 0.05).",
        ),
    ] = None
    offline: Annotated[bool, Flag("--offline", help="Never touch the network.")] = False


class RagOptions(SharedRetrievalOptions):
    model: Annotated[
        str | None, Flag("--model", help="Answer the questions with this model (provider/name).")
    ] = None
    judge: Annotated[
        str | None, Flag("--judge", help="Grade 'judge' answers with this model; else unscored.")
    ] = None
    scale_tiers: Annotated[
        str | None, Flag("--scale-tiers", help="Document counts to measure, e.g. 10,100,1000.")
    ] = None
    fetch_only: Annotated[bool, Flag("--fetch-only", help="Download and verify corpora, then stop.")] = False
    ocr: Annotated[
        bool,
        Flag(
            "--ocr",
            help="Read image pages of PDFs with tesseract (full suite only; checked on a test image first).",
        ),
    ] = False


class CodeOptions(SharedRetrievalOptions):
    repo_cache: Annotated[
        Path | None,
        Flag(
            "--repo-cache",
            path="dir",
            help="Bare-repository cache for code search (default $ASSAY_HOME/repos).",
        ),
    ] = None
    code_replay_commits: Annotated[
        int,
        Field(ge=2),
        Flag(
            "--code-replay-commits",
            show_default=True,
            help="Code search: how many commits the incremental replay re-indexes one after another.",
        ),
    ] = REPLAY_COMMITS
    code_max_queries: Annotated[
        int | None,
        Field(ge=1),
        Flag("--code-max-queries", help="Code search: at most this many queries (nightly default 50)."),
    ] = None


class RetrievalOptions(CodeOptions, RagOptions):
    """Both components' options: ``assay eval retrieval`` takes them all and refuses one of the other
    component's given with ``--component``."""
