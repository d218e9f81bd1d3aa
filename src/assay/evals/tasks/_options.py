"""The options of one tasks run (the bare ``assay eval tasks`` and ``assay eval tasks run`` share them), each
also read from its ``ASSAY_*`` variable, and those of ``--suite swebench`` (``assay eval tasks swebench`` grades
with the same ones)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from assay.evals._held import HeldOptions
from assay.exec import BenchmarkOptions, Flag

__all__ = ["SwebenchGradeOptions", "SwebenchOptions", "TasksOptions", "TasksRunOptions"]

_SEED_HELP = "swebench: the seed of --sample (default 0) [ASSAY_SEED]."


class SwebenchOptions(BenchmarkOptions):
    """The options of ``--suite swebench``: which instances, where they come from, which grader."""

    instances: Annotated[
        str | None,
        Flag(
            "--instances",
            envvar="ASSAY_INSTANCES",
            help="swebench: these instance ids (comma list; default a small pilot) [ASSAY_INSTANCES].",
        ),
    ] = None
    sample: Annotated[
        int | None,
        Field(ge=1),
        Flag(
            "--sample", envvar="ASSAY_SAMPLE", help="swebench: N instances picked by --seed [ASSAY_SAMPLE]."
        ),
    ] = None
    dataset: Annotated[
        Path | None,
        Flag(
            "--dataset",
            envvar="ASSAY_DATASET",
            help="swebench: a parquet or JSONL file of SWE-bench rows (default the pinned SWE-bench Verified) "
            "[ASSAY_DATASET].",
        ),
    ] = None
    offline: Annotated[
        bool,
        Flag(
            "--offline",
            envvar="ASSAY_OFFLINE",
            help="swebench: never touch the network (the pinned dataset must be cached) [ASSAY_OFFLINE].",
        ),
    ] = False
    repo_source: Annotated[
        Path | None,
        Flag(
            "--repo-source",
            envvar="ASSAY_REPO_SOURCE",
            help="swebench: fetch owner/name from DIR/owner__name (a local git repository) instead of GitHub "
            "[ASSAY_REPO_SOURCE].",
        ),
    ] = None
    repo_specs: Annotated[
        Path | None,
        Flag(
            "--repo-specs",
            envvar="ASSAY_REPO_SPECS",
            help="swebench: JSON specs (install, test_cmd, log_parser) for repositories swebench has none for "
            "[ASSAY_REPO_SPECS].",
        ),
    ] = None
    grader: Annotated[
        Literal["auto", "official", "local"] | None,
        Flag(
            "--grader",
            envvar="ASSAY_GRADER",
            help="swebench: official (Docker), local (a venv), auto (official where Docker answers) [ASSAY_GRADER].",
        ),
    ] = None
    no_evaluate: Annotated[
        bool,
        Flag(
            "--no-evaluate",
            envvar="ASSAY_NO_EVALUATE",
            help="swebench: only write predictions.jsonl; grade later [ASSAY_NO_EVALUATE].",
        ),
    ] = False
    keep_images: Annotated[
        bool,
        Flag(
            "--keep-images",
            envvar="ASSAY_KEEP_IMAGES",
            help="swebench, official grader: keep each instance's image [ASSAY_KEEP_IMAGES].",
        ),
    ] = False
    docker_platform: Annotated[
        str | None,
        Flag(
            "--docker-platform",
            envvar="ASSAY_DOCKER_PLATFORM",
            help="swebench, official grader: the platform its images are pulled or built for: linux/x86_64 "
            "(default, the published images; emulated on an arm64 host) or linux/arm64 (built here) "
            "[ASSAY_DOCKER_PLATFORM].",
        ),
    ] = None


class _TasksRunFields(HeldOptions):
    harness: Annotated[
        str | None,
        Flag(
            "--harness",
            envvar="ASSAY_HARNESS",
            help="Harness under test (default reference) [ASSAY_HARNESS].",
        ),
    ] = None
    model: Annotated[
        str | None,
        Flag(
            "--model",
            envvar="ASSAY_MODEL",
            help="Model every harness runs on, through the gateway (required) [ASSAY_MODEL].",
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
    tasks: Annotated[
        str | None,
        Flag("--tasks", envvar="ASSAY_TASKS", help="Run only these task ids (comma list) [ASSAY_TASKS]."),
    ] = None
    run_timeout: Annotated[
        float | None,
        Field(ge=1),
        Flag(
            "--run-timeout",
            envvar="ASSAY_RUN_TIMEOUT",
            help="Wall clock of one agent run on one task, seconds (default 600) [ASSAY_RUN_TIMEOUT].",
        ),
    ] = None
    max_steps: Annotated[
        int | None,
        Field(ge=1),
        Flag(
            "--max-steps",
            envvar="ASSAY_MAX_STEPS",
            help="Model calls one agent run may make (default 30) [ASSAY_MAX_STEPS].",
        ),
    ] = None
    agent_max_tokens: Annotated[
        int | None,
        Field(ge=16),
        Flag(
            "--agent-max-tokens",
            envvar="ASSAY_AGENT_MAX_TOKENS",
            help="Tokens one model call of the reference agent may write (default 2048) [ASSAY_AGENT_MAX_TOKENS].",
        ),
    ] = None
    work_root: Annotated[
        Path | None,
        Flag(
            "--work-root",
            envvar="ASSAY_WORK_ROOT",
            help="Where task copies are made (default a temporary folder) [ASSAY_WORK_ROOT].",
        ),
    ] = None
    full_access: Annotated[
        bool,
        Flag(
            "--full-access",
            envvar="ASSAY_FULL_ACCESS",
            help="Let a harness that asks permission run every tool unasked (claude-code) [ASSAY_FULL_ACCESS].",
        ),
    ] = False
    profile: Annotated[
        Path | None,
        Flag(
            "--profile",
            envvar="ASSAY_PROFILE",
            path="dir",
            help="The reference agent's profile folder (system.md, tools/, skills/; default the built-in one) "
            "[ASSAY_PROFILE].",
        ),
    ] = None
    tasks_file: Annotated[
        Path | None,
        Flag(
            "--tasks-file",
            envvar="ASSAY_TASKS_FILE",
            help="tasks.json (default eval/tasks/tasks.json) [ASSAY_TASKS_FILE].",
        ),
    ] = None
    repo_url: Annotated[
        str | None,
        Flag(
            "--repo-url",
            envvar="ASSAY_REPO_URL",
            help="--suite realfix: fetch the pins' repository from here instead (a local mirror: path or URL) "
            "[ASSAY_REPO_URL].",
        ),
    ] = None


class TasksOptions(SwebenchOptions, _TasksRunFields):
    """The settings of one tasks run, then those of ``--suite swebench``. The bare ``assay eval tasks`` takes
    the shared ``--seed`` (the run's); ``seed`` here is set only by ``assay eval tasks run`` (whether it was
    given at all is read from ``model_fields_set``)."""

    seed: int | None = None


class TasksRunOptions(TasksOptions):
    """``assay eval tasks run``'s settings: the same, with a ``--seed`` of its own."""

    seed: Annotated[int | None, Flag("--seed", envvar="ASSAY_SEED", help=_SEED_HELP)] = None


class SwebenchGradeOptions(SwebenchOptions):
    """What ``assay eval tasks swebench [RUN_DIR]`` grades with: the swebench options and ``--seed``; its
    ``--validate`` and ``--work-root`` are the command's own."""

    seed: Annotated[int | None, Flag("--seed", envvar="ASSAY_SEED", help=_SEED_HELP)] = None
    work_root: Path | None = None
    validate_patches: bool = Field(default=False, alias="validate")
