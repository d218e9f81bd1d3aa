"""Running a plan's jobs (``assay ci run``), reading a tag's annotation from git, scanning artifacts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

__all__ = ["JobRun", "load_plan_jobs", "run_jobs", "scan_for_secrets", "tag_annotation"]


def tag_annotation(tag: str, cwd: Path | None = None) -> str | None:
    """The message of an annotated tag; None for a lightweight one (its commit's message is no marker)."""

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)

    kind = git("cat-file", "-t", f"refs/tags/{tag}")
    if kind.returncode != 0:
        raise ConfigError(f"--tag {tag}: no such tag in this checkout (fetch tags, or pass --annotation)")
    if kind.stdout.strip() != "tag":
        return None
    return git("tag", "-l", "--format=%(contents)", tag).stdout


def rc_commits(final: str, cwd: Path | None = None) -> dict[str, str]:
    """RC tag -> commit, for the RC tags of ``final`` in this checkout."""
    from assay.ci._plan import rc_tags_of

    listed = subprocess.run(["git", "tag", "-l"], cwd=cwd, capture_output=True, text=True, check=False)
    out: dict[str, str] = {}
    for tag in rc_tags_of(final, listed.stdout.split()):
        sha = subprocess.run(
            ["git", "rev-list", "-n", "1", tag], cwd=cwd, capture_output=True, text=True, check=False
        )
        out[tag] = sha.stdout.strip()
    return out


@dataclass(frozen=True)
class JobRun:
    name: str
    tier: str
    exit_code: int
    junit: str


def load_plan_jobs(path: Path, job: str | None = None) -> list[dict[str, Any]]:
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"not a plan written by `assay ci plan --out` ({exc})", path=str(path)) from None
    jobs = list(plan.get("matrix", {}).get("include", []))
    if job is not None:
        jobs = [j for j in jobs if j.get("name") == job]
        if not jobs:
            raise ConfigError(f"--job {job}: the plan has no such job", path=str(path))
    return jobs


def run_jobs(jobs: list[dict[str, Any]], echo: Callable[[str], object] = print) -> list[JobRun]:
    """Run each job's ``assay eval`` with this interpreter, one after the other; every job runs."""
    done: list[JobRun] = []
    for job in jobs:
        argv = [str(a) for a in job["argv"]]
        assert argv[0] == "assay", argv
        env = {**os.environ, "ASSAY_CI_TIER": str(job["tier"])}
        echo(f"$ {job['command']}")
        code = subprocess.run([sys.executable, "-m", "assay", *argv[1:]], env=env, check=False).returncode
        done.append(JobRun(str(job["name"]), str(job["tier"]), code, str(job["junit"])))
    return done


def scan_for_secrets(root: Path) -> list[Path]:
    """Files under ``root`` that hold a known secret value or a secret-shaped string (never uploaded)."""
    from assay._util import Scrubber

    scrubber = Scrubber()
    leaks: list[Path] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary (PNGs): assay writes no text into them
        if scrubber.scrub_text(text) != text:
            leaks.append(path)
    return leaks
