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

from assay._util import Scrubber, write_scrubbed
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.evals.tasks._swebench_data import SwebenchInstance

__all__ = [
    "DEFAULT_PLATFORM",
    "GRADERS",
    "Grading",
    "Verdict",
    "docker_problem",
    "resolve_grader",
    "verdict_from",
]

GRADERS = ("official", "local", "auto")
Kind = Literal["model", "gold", "empty"]
#: the official harness drops an empty prediction; its "empty patch" is one that touches no code
NOOP_PATCH = (
    "diff --git a/.assay-empty-patch b/.assay-empty-patch\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/.assay-empty-patch\n@@ -0,0 +1 @@\n+no change\n"
)
OFFICIAL_TIMEOUT_S = 3600
#: the official harness's images are built for x86_64 (its ``TestSpec.platform``); ``--docker-platform``
#: chooses another (an arm64 host: ``linux/arm64/v8``, images built locally, as SWE-bench's docs say)
DEFAULT_PLATFORM = "linux/x86_64"
PLATFORMS = {
    "linux/x86_64": "x86_64",
    "linux/amd64": "x86_64",
    "linux/arm64": "arm64",
    "linux/arm64/v8": "arm64",
}


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
    #: a model verdict: whether the grader was validated on the instance (None: not asked, e.g. gold/empty)
    validated: bool | None = None

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
#: the official harness at another architecture: its ``make_test_spec`` takes ``arch``, its command line
#: does not; this runs its command line with that default changed (argv[1] is the arch)
_RUN_AT_ARCH = (
    "import runpy, sys\n"
    "from swebench.harness.test_spec import test_spec as t\n"
    "d = list(t.make_test_spec.__defaults__); d[-1] = sys.argv.pop(1); t.make_test_spec.__defaults__ = tuple(d)\n"
    "runpy.run_module('swebench.harness.run_evaluation', run_name='__main__', alter_sys=True)\n"
)


def _scrub_tree(folder: Path) -> None:
    """Every text file the official harness wrote under ``folder`` (logs, reports), scrubbed in place."""
    scrubber = Scrubber()
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in (".log", ".txt", ".json", ".jsonl", ".diff", ".patch"):
            text = path.read_text(encoding="utf-8", errors="replace")
            if scrubber.scrub_text(text) != text:
                write_scrubbed(path, text, scrubber)


def check_platform(platform: str | None) -> str:
    """``--docker-platform`` (default :data:`DEFAULT_PLATFORM`); one the harness cannot build for is a
    ConfigError, raised before anything runs."""
    chosen = platform or DEFAULT_PLATFORM
    if chosen not in PLATFORMS:
        raise ConfigError(f"--docker-platform {chosen}: one of {', '.join(PLATFORMS)}")
    return chosen


def _official(
    instance: SwebenchInstance,
    patch: str,
    kind: Kind,
    work: Path,
    keep_images: bool,
    platform: str = DEFAULT_PLATFORM,
) -> Verdict:
    """``python -m swebench.harness.run_evaluation`` on one instance, its ``report.json`` read back. On
    x86_64 (the default platform) its published image is pulled for ``platform`` just before and removed
    after (unless ``keep_images``); on arm64 the harness builds its images here for that architecture (no
    published image is arm64)."""
    from swebench.harness.test_spec.test_spec import make_test_spec

    from assay.evals.tasks._swebench_data import prediction_line

    arch = PLATFORMS[check_platform(platform)]
    remote = arch == "x86_64"
    work.mkdir(parents=True, exist_ok=True)
    model = f"assay-{kind}"
    (work / "dataset.jsonl").write_text(json.dumps(instance.row()) + "\n", encoding="utf-8")
    (work / "predictions.jsonl").write_text(
        prediction_line(instance.instance_id, model, patch or NOOP_PATCH), encoding="utf-8"
    )
    try:
        spec = make_test_spec(instance.row(), namespace="swebench" if remote else None, arch=arch)
    except KeyError:  # the harness has images and specs for SWE-bench's own repositories and versions only
        why = f"the official harness has no spec for {instance.repo} {instance.version}"
        return Verdict(instance.instance_id, "official", kind, "not_run", reason=why)
    image = spec.instance_image_key
    if remote:
        pulled = subprocess.run(
            ["docker", "pull", "--platform", platform, image], capture_output=True, text=True
        )
        if pulled.returncode != 0:
            why = (pulled.stderr.strip().splitlines() or ["?"])[-1]
            return Verdict(
                instance.instance_id, "official", kind, "not_run", reason=f"docker pull {image}: {why[:300]}"
            )
    try:
        cmd = (
            [sys.executable, "-m", "swebench.harness.run_evaluation"]
            if remote
            else [sys.executable, "-c", _RUN_AT_ARCH, arch]
        )
        cmd += ["--dataset_name", "dataset.jsonl"]
        cmd += ["--predictions_path", "predictions.jsonl", "--instance_ids", instance.instance_id]
        cmd += [
            "--max_workers",
            "1",
            "--run_id",
            f"assay-{kind}",
            "--namespace",
            "swebench" if remote else "none",
        ]
        cmd += ["--cache_level", "instance" if keep_images else "none"]
        done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=OFFICIAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Verdict(instance.instance_id, "official", kind, "not_run", reason="the harness timed out")
    finally:
        if not keep_images:
            subprocess.run(["docker", "rmi", "-f", image], capture_output=True, text=True)
        _scrub_tree(work)  # the harness's logs and reports, as every file this suite leaves
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
    offline: bool = False,
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
                repo_dir = isolated_checkout(
                    source, instance.base_commit, tmp / "repo", cache, offline=offline
                )
            except (ConfigError, InfraError) as exc:  # this instance only: the others are graded
                raise NotBuildable(checkout_problem(exc)) from exc
            entry = grade_local(instance, patch, repo_dir, spec, work / "envs", out_dir)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except NotBuildable as exc:
        return Verdict(instance.instance_id, "local", kind, "not_run", reason=str(exc)[:1000])
    out_dir.mkdir(parents=True, exist_ok=True)
    write_scrubbed(out_dir / "report.json", json.dumps({instance.instance_id: entry}, indent=1), Scrubber())
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


@dataclass
class Grading:
    """One grader, set up: where it works, its caches and what it grades with; :meth:`one` grades a patch."""

    grader: str  # "official" or "local"
    work: Path
    keep_images: bool = False
    mirrors: Path | None = None
    specs: dict[str, Any] = field(default_factory=dict)
    cache: Path | None = None
    docker_platform: str = DEFAULT_PLATFORM
    #: --offline: a checkout whose commit is not cached from a remote source is not run (never fetched)
    offline: bool = False

    def one(self, inst: SwebenchInstance, kind: Kind, patch: str) -> Verdict:
        if self.grader == "official":
            here = self.work / "official" / kind / inst.instance_id
            return _official(inst, patch, kind, here, self.keep_images, self.docker_platform)
        try:
            source = repo_source(inst.repo, self.mirrors)
        except ConfigError as exc:  # no mirror of this repository: this instance only is not run
            from assay.evals._isolate import checkout_problem

            return Verdict(inst.instance_id, "local", kind, "not_run", reason=checkout_problem(exc))
        cache = self.cache or self.work / "repo-cache"  # the bare caches the checkouts are made from
        return _local(inst, patch, kind, source, self.work / "local", self.specs, cache, self.offline)


def write_grades(
    path: Path, grader: str, verdicts: Sequence[Verdict], scrubber: Scrubber | None = None
) -> Path:
    """``grades.json``: one grader's verdicts (a file of the other grader's is refused, never merged)."""
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8")).get("grader")
        if old not in (None, grader):
            raise ConfigError(
                f"{path} holds grader: {old} verdicts; grader: {grader} ones are not mixed in (move it)"
            )
    body = {"schema_version": 1, "grader": grader, "verdicts": [asdict(v) for v in verdicts]}
    write_scrubbed(path, json.dumps(body, indent=1) + "\n", scrubber or Scrubber())
    return path
