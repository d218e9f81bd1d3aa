"""``assay eval memory``'s own options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from assay.exec import BenchmarkOptions, Flag

FULL_MODEL = "local/smollm2"
FULL_EMBEDDER = "local"


class MemoryOptions(BenchmarkOptions):
    dataset: Annotated[
        str | None, Flag("--dataset", help="Run imported data instead of the scenarios: longmemeval:FILE.")
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
