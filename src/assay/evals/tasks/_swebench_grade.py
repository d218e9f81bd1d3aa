"""Grading SWE-bench predictions: the official harness (Docker) or the local grader, one instance at a time.

Both end in a ``report.json`` entry of the official shape, read back by one function (:func:`verdict_from`):
resolved, patch applied, FAIL_TO_PASS and PASS_TO_PASS passed of total. Every verdict carries its grader
(``official`` or ``local``); ``grades.json`` holds one grader's verdicts only. ``--validate`` grades the gold
patch (must resolve) and an empty one (must not) on the same instances, the SWE-bench way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.evals.tasks._swebench_data import SwebenchInstance

__all__ = ["GRADERS", "Verdict", "docker_problem", "grade_instances", "resolve_grader", "verdict_from"]

GRADERS = ("official", "local", "auto")
Kind = Literal["model", "gold", "empty"]
#: the official harness drops an empty prediction; its "empty patch" is one that touches no code
NOOP_PATCH = (
    "diff --git a/.assay-empty-patch b/.assay-empty-patch\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/.assay-empty-patch\n@@ -0,0 +1 @@\n+no change\n"
)
OFFICIAL_TIMEOUT_S = 3600


@dataclass
class Verdict:
    """One graded patch of one instance."""

    instance_id: str
    grader: str  # "official" or "local"
    patch: str  # which patch: "model", "gold" or "empty"
    status: str  # "resolved", "unresolved" or "not_run"
    patch_applied: bool | None = None
    fail_to_pass: list[int] = field(default_factory=lambda: [0, 0])  # passed, of total
    pass_to_pass: list[int] = field(default_factory=lambda: [0, 0])
    reason: str = ""
    log: str = ""

    @property
    def resolved(self) -> bool:
        return self.status == "resolved"


def verdict_from(instance_id: str, entry: dict[str, Any], grader: str, patch: Kind, log: str = "") -> Verdict:
    """A verdict read from one ``report.json`` entry (the official harness's or the local grader's)."""
    tests = entry.get("tests_status") or {}

    def counts(key: str) -> list[int]:
        part = tests.get(key) or {}
        ok, bad = len(part.get("success") or []), len(part.get("failure") or [])
        return [ok, ok + bad]

    applied = bool(entry.get("patch_successfully_applied"))
    return Verdict(
        instance_id=instance_id,
        grader=grader,
        patch=patch,
        status="resolved" if entry.get("resolved") else "unresolved",
        patch_applied=applied,
        fail_to_pass=counts("FAIL_TO_PASS"),
        pass_to_pass=counts("PASS_TO_PASS"),
        reason="" if applied else "the patch did not apply",
        log=log,
    )


# ------------------------------------------------------------------------------------------- which grader
def docker_problem(timeout_s: float = 10.0) -> str | None:
    """None when a Docker daemon answers, else why not (one line): no program, no socket, no answer."""
    if shutil.which("docker") is None:
        return "no docker program on PATH"
    host = os.environ.get("DOCKER_HOST", "")
    sock = host[len("unix://") :] if host.startswith("unix://") else ("" if host else "/var/run/docker.sock")
    if sock and not Path(sock).exists():
        return f"no Docker daemon socket at {sock}"
    try:
        done = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return f"docker info did not answer in {timeout_s:.0f} s"
    if done.returncode != 0 or not done.stdout.strip():
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return f"no Docker daemon answers (docker info: {why[:200]})"
    return None


def resolve_grader(choice: str) -> str:
    """``official``, ``local`` or ``auto`` (official where a Docker daemon answers); ``official`` without one is
    a one-line ConfigError, raised before anything runs."""
    if choice not in GRADERS:
        raise ConfigError(f"--grader {choice!r}: one of {', '.join(GRADERS)}")
    if choice == "local":
        return "local"
    problem = docker_problem()
    if problem is None:
        return "official"
    if choice == "official":
        raise ConfigError(f"--grader official needs a Docker daemon: {problem} (use --grader local)")
    return "local"


# ------------------------------------------------------------------------------------------- one patch
def _official(instance: SwebenchInstance, patch: str, kind: Kind, work: Path, keep_images: bool) -> Verdict:
    """``python -m swebench.harness.run_evaluation`` on one instance: its image pulled just before and
    removed after (unless ``keep_images``), its ``report.json`` read back."""
    from swebench.harness.test_spec.test_spec import make_test_spec

    work.mkdir(parents=True, exist_ok=True)
    model = f"assay-{kind}"
    (work / "dataset.jsonl").write_text(json.dumps(instance.row()) + "\n", encoding="utf-8")
    from assay.evals.tasks._swebench_data import prediction_line

    (work / "predictions.jsonl").write_text(
        prediction_line(instance.instance_id, model, patch or NOOP_PATCH), encoding="utf-8"
    )
    try:
        image = make_test_spec(instance.row(), namespace="swebench").instance_image_key
    except KeyError:  # the harness has images and specs for SWE-bench's own repositories and versions only
        why = f"the official harness has no spec for {instance.repo} {instance.version}"
        return Verdict(instance.instance_id, "official", kind, "not_run", reason=why)
    pulled = subprocess.run(["docker", "pull", image], capture_output=True, text=True)
    if pulled.returncode != 0:
        why = (pulled.stderr.strip().splitlines() or ["?"])[-1]
        return Verdict(
            instance.instance_id, "official", kind, "not_run", reason=f"docker pull {image}: {why[:300]}"
        )
    try:
        cmd = [sys.executable, "-m", "swebench.harness.run_evaluation", "--dataset_name", "dataset.jsonl"]
        cmd += ["--predictions_path", "predictions.jsonl", "--instance_ids", instance.instance_id]
        cmd += ["--max_workers", "1", "--run_id", f"assay-{kind}", "--namespace", "swebench"]
        cmd += ["--cache_level", "instance" if keep_images else "none"]
        done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=OFFICIAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Verdict(instance.instance_id, "official", kind, "not_run", reason="the harness timed out")
    finally:
        if not keep_images:
            subprocess.run(["docker", "rmi", "-f", image], capture_output=True, text=True)
    report = work / "logs" / "run_evaluation" / f"assay-{kind}" / model / instance.instance_id / "report.json"
    if not report.is_file():
        tail = (done.stdout + done.stderr).strip()[-400:]
        return Verdict(instance.instance_id, "official", kind, "not_run", reason=f"no report.json: {tail}")
    entry = json.loads(report.read_text(encoding="utf-8")).get(instance.instance_id, {})
    return verdict_from(instance.instance_id, entry, "official", kind, str(report))


def _local(
    instance: SwebenchInstance,
    patch: str,
    kind: Kind,
    source: str,
    work: Path,
    specs: dict[str, Any],
    cache: Path,
) -> Verdict:
    from assay.errors import InfraError
    from assay.evals._isolate import checkout_problem, isolated_checkout
    from assay.evals.tasks._swebench_local import NotBuildable, grade_local, local_spec

    out_dir = work / "logs" / kind / instance.instance_id
    try:
        spec = local_spec(instance.repo, instance.version, specs)
        work.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="grade-", dir=work))
        try:
            try:
                repo_dir = isolated_checkout(source, instance.base_commit, tmp / "repo", cache)
            except (ConfigError, InfraError) as exc:  # this instance only: the others are graded
                raise NotBuildable(checkout_problem(exc)) from exc
            entry = grade_local(instance, patch, repo_dir, spec, work / "envs", out_dir)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except NotBuildable as exc:
        return Verdict(instance.instance_id, "local", kind, "not_run", reason=str(exc)[:1000])
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.json").write_text(
        json.dumps({instance.instance_id: entry}, indent=1), encoding="utf-8"
    )
    return verdict_from(instance.instance_id, entry, "local", kind, str(out_dir / "test_output.txt"))


def repo_source(repo: str, mirrors: Path | None) -> str:
    """Where ``owner/name`` is fetched from: ``--repo-source DIR``'s ``owner__name`` (a local git repository),
    else GitHub."""
    if mirrors is None:
        return f"https://github.com/{repo}.git"
    local = Path(mirrors) / repo.replace("/", "__")
    if not (local / ".git").exists() and not (local / "HEAD").is_file():
        raise ConfigError(f"--repo-source {mirrors}: no git repository {local.name} for {repo}")
    return str(local)


def grade_instances(
    instances: Sequence[SwebenchInstance],
    patches: dict[str, str],
    grader: str,
    work: Path,
    *,
    validate: bool = False,
    keep_images: bool = False,
    mirrors: Path | None = None,
    repo_specs: Path | None = None,
    repo_cache: Path | None = None,
) -> list[Verdict]:
    """Grade ``patches[instance_id]`` (a missing one is not run) with ``grader`` (``official``/``local``, see
    :func:`resolve_grader`); with ``validate``, also the gold and the empty patch of every instance."""
    from assay.evals.tasks._swebench_local import load_repo_specs

    specs = load_repo_specs(repo_specs) if grader == "local" else {}
    cache = repo_cache or work / "repo-cache"  # the bare caches the checkouts are made from
    verdicts: list[Verdict] = []
    for inst in instances:
        todo: list[tuple[Kind, str | None]] = [("model", patches.get(inst.instance_id))]
        if validate:
            todo = [*(todo if patches else []), ("gold", inst.patch), ("empty", "")]
        for kind, patch in todo:
            if patch is None:
                verdicts.append(Verdict(inst.instance_id, grader, kind, "not_run", reason="no prediction"))
                continue
            if kind == "model" and not patch.strip():
                verdicts.append(Verdict(inst.instance_id, grader, kind, "unresolved", reason="empty patch"))
                continue
            here = work / grader / kind / inst.instance_id
            if grader == "official":
                verdicts.append(_official(inst, patch, kind, here, keep_images))
            else:
                source = repo_source(inst.repo, mirrors)
                verdicts.append(_local(inst, patch, kind, source, work / "local", specs, cache))
    return verdicts


def validation_problems(verdicts: Sequence[Verdict]) -> list[str]:
    """What ``--validate`` found wrong: a gold patch that did not resolve, an empty one that did."""
    out = []
    for v in verdicts:
        if v.patch == "gold" and v.status != "resolved":
            out.append(f"{v.instance_id}: the gold patch is {v.status} ({v.reason or _counts(v)})")
        if v.patch == "empty" and v.status == "resolved":
            out.append(f"{v.instance_id}: the empty patch resolves ({_counts(v)})")
    return out


def _counts(v: Verdict) -> str:
    return f"FAIL_TO_PASS {v.fail_to_pass[0]}/{v.fail_to_pass[1]}, PASS_TO_PASS {v.pass_to_pass[0]}/{v.pass_to_pass[1]}"


def write_grades(path: Path, grader: str, verdicts: Sequence[Verdict]) -> Path:
    """``grades.json``: one grader's verdicts (a file of the other grader's is refused, never merged)."""
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8")).get("grader")
        if old not in (None, grader):
            raise ConfigError(
                f"{path} holds grader: {old} verdicts; grader: {grader} ones are not mixed in (move it)"
            )
    body = {"schema_version": 1, "grader": grader, "verdicts": [asdict(v) for v in verdicts]}
    path.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    return path
