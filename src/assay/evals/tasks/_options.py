"""The options of one tasks run (the bare ``assay eval tasks`` and ``assay eval tasks run`` share them), each
also read from its ``ASSAY_*`` variable, and those of ``--suite swebench`` (``assay eval tasks swebench`` grades
with the same ones)."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["benchmark_options", "swebench_options"]

_P = click.Path(path_type=Path)


def swebench_options(seed: bool = True) -> list[click.Option]:
    """The options of ``--suite swebench``: which instances, where they come from, which grader (``--seed``
    only where the shared options of ``assay eval`` do not already define it)."""
    opts = [
        click.Option(["--instances"], envvar="ASSAY_INSTANCES", default=None, help="swebench: these instance ids (comma list; default a small pilot) [ASSAY_INSTANCES]."),
        click.Option(["--sample"], envvar="ASSAY_SAMPLE", type=click.IntRange(min=1), default=None, help="swebench: N instances picked by --seed [ASSAY_SAMPLE]."),
        click.Option(["--dataset"], envvar="ASSAY_DATASET", type=_P, default=None, help="swebench: a parquet or JSONL file of SWE-bench rows (default the pinned SWE-bench Verified) [ASSAY_DATASET]."),
        click.Option(["--offline"], envvar="ASSAY_OFFLINE", is_flag=True, default=False, help="swebench: never touch the network (the pinned dataset must be cached) [ASSAY_OFFLINE]."),
        click.Option(["--repo-source"], envvar="ASSAY_REPO_SOURCE", type=_P, default=None, help="swebench: fetch owner/name from DIR/owner__name (a local git repository) instead of GitHub [ASSAY_REPO_SOURCE]."),
        click.Option(["--repo-specs"], envvar="ASSAY_REPO_SPECS", type=_P, default=None, help="swebench: JSON specs (install, test_cmd, log_parser) for repositories swebench has none for [ASSAY_REPO_SPECS]."),
        click.Option(["--grader"], envvar="ASSAY_GRADER", type=click.Choice(["auto", "official", "local"]), default=None, help="swebench: official (Docker), local (a venv), auto (official where Docker answers) [ASSAY_GRADER]."),
        click.Option(["--no-evaluate"], envvar="ASSAY_NO_EVALUATE", is_flag=True, default=False, help="swebench: only write predictions.jsonl; grade later [ASSAY_NO_EVALUATE]."),
        click.Option(["--keep-images"], envvar="ASSAY_KEEP_IMAGES", is_flag=True, default=False, help="swebench, official grader: keep each instance's image [ASSAY_KEEP_IMAGES]."),
    ]  # fmt: skip
    if seed:
        opts.append(click.Option(["--seed"], envvar="ASSAY_SEED", type=int, default=None, help="swebench: the seed of --sample (default 0) [ASSAY_SEED]."))  # fmt: skip
    return opts


def benchmark_options(run: bool = False) -> list[click.Option]:
    """The settings of one tasks run (the bare `assay eval tasks` and `run` share them), each with ASSAY_*."""
    opts = [
        click.Option(["--harness"], envvar="ASSAY_HARNESS", default=None, help="Harness under test (default reference) [ASSAY_HARNESS]."),
        click.Option(["--model"], envvar="ASSAY_MODEL", default=None, help="Model every harness runs on, through the gateway (required) [ASSAY_MODEL]."),
        click.Option(["--judge-model"], envvar="ASSAY_JUDGE_MODEL", default=None, help="The judge's model (default --model) [ASSAY_JUDGE_MODEL]."),
        click.Option(["--tasks"], envvar="ASSAY_TASKS", default=None, help="Run only these task ids (comma list) [ASSAY_TASKS]."),
        click.Option(["--run-timeout"], envvar="ASSAY_RUN_TIMEOUT", type=click.FloatRange(min=1), default=None, help="Wall clock of one agent run on one task, seconds (default 600) [ASSAY_RUN_TIMEOUT]."),
        click.Option(["--max-steps"], envvar="ASSAY_MAX_STEPS", type=click.IntRange(min=1), default=None, help="Model calls one agent run may make (default 30) [ASSAY_MAX_STEPS]."),
        click.Option(["--agent-max-tokens"], envvar="ASSAY_AGENT_MAX_TOKENS", type=click.IntRange(min=16), default=None, help="Tokens one model call of the reference agent may write (default 2048) [ASSAY_AGENT_MAX_TOKENS]."),
        click.Option(["--work-root"], envvar="ASSAY_WORK_ROOT", type=_P, default=None, help="Where task copies are made (default a temporary folder) [ASSAY_WORK_ROOT]."),
        click.Option(["--fence"], envvar="ASSAY_FENCE", is_flag=True, default=False, help="Run the agent under bubblewrap [ASSAY_FENCE]."),
        click.Option(["--full-access"], envvar="ASSAY_FULL_ACCESS", is_flag=True, default=False, help="Let a harness that asks permission run every tool unasked (claude-code) [ASSAY_FULL_ACCESS]."),
        click.Option(["--profile"], envvar="ASSAY_PROFILE", type=click.Path(path_type=Path, file_okay=False), default=None, help="The reference agent's profile folder (system.md, tools/, skills/; default the built-in one) [ASSAY_PROFILE]."),
        click.Option(["--tasks-file"], envvar="ASSAY_TASKS_FILE", type=_P, default=None, help="tasks.json (default eval/tasks/tasks.json) [ASSAY_TASKS_FILE]."),
        click.Option(["--repo-url"], envvar="ASSAY_REPO_URL", default=None, help="--suite realfix: fetch the pins' repository from here instead (a local mirror: path or URL) [ASSAY_REPO_URL]."),
        # --suite swebench (eval tasks swebench RUN_DIR grades with the same ones)
        *swebench_options(seed=run),
    ]  # fmt: skip
    return opts
