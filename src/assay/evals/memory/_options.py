"""``assay eval memory``'s own options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from assay.exec import BenchmarkOptions, Flag

FULL_MODEL = "local/smollm2"
FULL_EMBEDDER = "local"


class MemoryOptions(BenchmarkOptions):
    dataset: Annotated[
        str | None,
        Flag(
            "--dataset",
            help="Run imported data instead of the scenarios: longmemeval:FILE, locomo:FILE (the published "
            "locomo10.json layout) or locomo (that file, fetched once from its pinned URL and checked).",
        ),
    ] = None
    model: Annotated[
        str | None,
        Flag(
            "--model",
            help=f"Extraction/answer model for full and --dataset (default for full: {FULL_MODEL}).",
        ),
    ] = None
    embedder: Annotated[
        str | None,
        Flag("--embedder", help=f"Embedder for full and --dataset (default for full: {FULL_EMBEDDER})."),
    ] = None
    scenarios_dir: Annotated[
        Path | None, Flag("--scenarios", help="Directory of scenario YAMLs (default eval/memory).")
    ] = None
    judge_model: Annotated[
        str | None,
        Flag(
            "--judge-model",
            help="--dataset: the judge grading answers (LoCoMo's CORRECT/WRONG with a reason, LongMemEval's "
            "per-type rules); needed to grade LongMemEval answers.",
        ),
    ] = None
    retrieval_only: Annotated[
        bool,
        Flag(
            "--retrieval-only",
            help="--dataset locomo: replay without extraction and answer no question; report evidence "
            "recall@k, and the calls and time a full answer run would need.",
        ),
    ] = False
    conversations: Annotated[
        int | None,
        Field(ge=1),
        Flag("--conversations", help="--dataset locomo: sample this many conversations (see --sample-seed)."),
    ] = None
    questions: Annotated[
        int | None,
        Field(ge=1),
        Flag("--questions", help="--dataset locomo: sample this many questions of each conversation."),
    ] = None
    sample_seed: Annotated[
        int, Flag("--sample-seed", help="Seed of the --conversations/--questions draw (default 0).")
    ] = 0
    call_seconds: Annotated[
        float,
        Field(gt=0),
        Flag(
            "--call-seconds",
            help="Seconds one model call is assumed to take, for the time a LoCoMo answer run is said to need "
            "(default 10; local/smollm2 took 56 s a call on two shared cores under load 10).",
        ),
    ] = 10.0
    offline: Annotated[bool, Flag("--offline", help="Never touch the network (--dataset locomo).")] = False
