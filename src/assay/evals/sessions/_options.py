"""``assay eval sessions``'s own options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from assay.exec import BenchmarkOptions, Flag


class SessionsOptions(BenchmarkOptions):
    source: Annotated[
        Path | None, Flag("--source", help="A session file, or a folder searched for *.jsonl.")
    ] = None
    project: Annotated[
        str | None,
        Flag("--project", help="One Claude Code project (~/.claude/projects/<slug>), by slug or path."),
    ] = None
    dataset: Annotated[
        Path | None, Flag("--dataset", help="Replay this dataset.json (from --dataset-only).")
    ] = None
    dataset_only: Annotated[
        bool, Flag("--dataset-only", help="Build dataset.json in --out (or the results dir) and stop.")
    ] = False
    limit: Annotated[
        int | None,
        Field(ge=1),
        Flag("--limit", help="Replay only the dataset's first N requests (default all)."),
    ] = None
    explain: Annotated[
        bool, Flag("--explain", help="Print, per transcript, what was kept and dropped, and why.")
    ] = False
    cwd_map: Annotated[
        tuple[str, ...],
        Flag("--cwd-map", help="OLD=NEW: a recorded working directory and where it is now (repeatable)."),
    ] = ()
    harness: Annotated[
        str | None,
        Flag(
            "--harness",
            envvar="ASSAY_HARNESS",
            help="Harness replaying the requests (default reference) [ASSAY_HARNESS].",
        ),
    ] = None
    model: Annotated[
        str | None,
        Flag(
            "--model",
            envvar="ASSAY_MODEL",
            help="Model the harness runs on, through the gateway [ASSAY_MODEL].",
        ),
    ] = None
    judge_model: Annotated[
        str | None,
        Flag(
            "--judge-model",
            envvar="ASSAY_JUDGE_MODEL",
            help="The judge's model (default --model) [ASSAY_JUDGE_MODEL].",
        ),
    ] = None
    judge_schema: Annotated[
        Literal["auto", "on", "off"],
        Flag("--judge-schema", show_default=True, help="Hold the judge's decoding to its JSON schema."),
    ] = "auto"
    work_root: Annotated[
        Path | None,
        Flag("--work-root", help="Where worktrees and copies are made (default a temporary folder)."),
    ] = None
    max_steps: Annotated[
        int | None, Field(ge=1), Flag("--max-steps", help="Model calls one agent turn may make (default 20).")
    ] = None
    run_timeout: Annotated[
        float | None,
        Field(ge=1),
        Flag("--run-timeout", help="Wall clock of one agent turn, seconds (default 600)."),
    ] = None
