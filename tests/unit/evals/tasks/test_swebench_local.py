"""The local SWE-bench grader on a real SWE-bench-style instance the tests build (a git repository with a bug,
its fix and the tests that show it, as a row of SWE-bench's schema): gold resolves, empty and wrong do not,
a patch that does not apply is unresolved, what it cannot build is NOT_RUN with the reason. One grading venv
(from an offline wheelhouse of pytest) serves the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import swebench_fixture as fx
from click.testing import CliRunner

from assay.cli._main import cli
from assay.errors import ConfigError
from assay.evals.tasks._swebench_data import load_instances
from assay.evals.tasks._swebench_grade import write_grades
from assay.evals.tasks._swebench_local import load_repo_specs, local_spec
from assay.evals.tasks._swebench_validate import grade_instances, validation_problems


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    world: dict[str, Any] = dict(fx.shared_world(tmp_path_factory.getbasetemp()))
    root = world["root"]
    saved = {k: os.environ.get(k) for k in ("PIP_NO_INDEX", "PIP_FIND_LINKS")}
    os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(world["wheels"]))
    world["instance"] = load_instances(world["dataset"])[0]
    world["work"] = world["work_root"] / "swebench" / "grade"  # where the CLI's --work-root grades
    world["verdicts"] = grade_instances(
        [world["instance"]],
        {fx.IID: fx.wrong_patch(root)},
        "local",
        world["work"],
        validate=True,
        mirrors=world["mirrors"],
        repo_specs=world["specs"],
    )
    yield world
    for k, v in saved.items():
        os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def test_gold_resolves_empty_and_wrong_do_not(world: dict[str, Any]) -> None:
    by = {v.patch: v for v in world["verdicts"]}
    assert by["gold"].status == "resolved" and by["gold"].grader == "local"
    assert (by["gold"].fail_to_pass, by["gold"].pass_to_pass) == ([1, 1], [1, 1])
    assert by["empty"].status == "unresolved"  # the bug is still there: FAIL_TO_PASS fails
    assert (by["empty"].fail_to_pass, by["empty"].pass_to_pass) == ([0, 1], [1, 1])
    assert by["model"].status == "unresolved" and by["model"].patch_applied is True
    assert (by["model"].fail_to_pass, by["model"].pass_to_pass) == ([0, 1], [0, 1])  # it broke mul
    assert validation_problems(world["verdicts"]) == []
    report = world["work"] / "local" / "logs" / "gold" / fx.IID / "report.json"
    assert json.loads(report.read_text())[fx.IID]["resolved"] is True


def test_validation_reports_a_gold_patch_that_fails(world: dict[str, Any]) -> None:
    bad = world["instance"].__class__(
        **{**world["instance"].__dict__, "patch": fx.wrong_patch(world["root"])}
    )
    verdicts = grade_instances(
        [bad],
        {},
        "local",
        world["work"],
        validate=True,
        mirrors=world["mirrors"],
        repo_specs=world["specs"],
    )
    assert [v.patch for v in verdicts] == ["gold", "empty"]
    assert validation_problems(verdicts) == [
        f"{fx.IID}: the gold patch does not resolve it here (FAIL_TO_PASS 0/1, PASS_TO_PASS 0/1)"
    ]


def test_patch_that_does_not_apply_is_unresolved(world: dict[str, Any]) -> None:
    junk = (  # a change to a file the repository does not have: no way of applying it works
        "diff --git a/tinycalc/gone.py b/tinycalc/gone.py\n--- a/tinycalc/gone.py\n+++ b/tinycalc/gone.py\n"
        "@@ -1,2 +1,2 @@\n-def add(a, b):\n+def add(a, b):  # fixed\n     return 0\n"
    )
    (v,) = grade_instances(
        [world["instance"]],
        {fx.IID: junk},
        "local",
        world["work"],
        mirrors=world["mirrors"],
        repo_specs=world["specs"],
    )
    assert (v.status, v.patch_applied, v.reason) == ("unresolved", False, "the patch did not apply")


def test_what_cannot_be_built_is_not_run_with_the_reason(world: dict[str, Any], tmp_path: Path) -> None:
    inst = world["instance"]
    other = inst.__class__(**{**inst.__dict__, "version": "9.9"})
    (v,) = grade_instances(
        [other], {fx.IID: inst.patch}, "local", tmp_path, mirrors=world["mirrors"], repo_specs=world["specs"]
    )
    assert v.status == "not_run" and "no spec for example-org/tinycalc 9.9" in v.reason
    specs = json.loads(world["specs"].read_text())
    specs[fx.REPO][fx.VERSION]["python"] = "2.1"
    (tmp_path / "old.json").write_text(json.dumps(specs))
    (v,) = grade_instances(
        [inst],
        {fx.IID: inst.patch},
        "local",
        tmp_path,
        mirrors=world["mirrors"],
        repo_specs=tmp_path / "old.json",
    )
    assert v.status == "not_run" and "needs Python 2.1, not on PATH" in v.reason


def test_swebench_own_specs_are_used_and_never_replaced(tmp_path: Path) -> None:
    from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER

    spec = local_spec("psf/requests", "2.27", {})
    assert spec.source == "swebench" and spec.parser is MAP_REPO_TO_PARSER["psf/requests"]
    assert spec.spec == MAP_REPO_VERSION_TO_SPECS["psf/requests"]["2.27"]
    path = tmp_path / "specs.json"
    path.write_text(
        json.dumps(
            {"psf/requests": {"2.27": {"install": "x", "test_cmd": "y", "log_parser": "parse_log_pytest"}}}
        )
    )
    with pytest.raises(ConfigError, match="swebench has its own spec for it"):
        load_repo_specs(path)
    path.write_text(
        json.dumps({"a/b": {"1": {"install": "x", "test_cmd": "y", "log_parser": "parse_log_nothing"}}})
    )
    with pytest.raises(ConfigError, match="not one of swebench's Python log parsers"):
        local_spec("a/b", "1", load_repo_specs(path))


def test_one_grader_per_grades_file(tmp_path: Path) -> None:
    from assay.evals.tasks._swebench_grade import Verdict

    path = write_grades(tmp_path / "grades.json", "local", [Verdict("x", "local", "model", "resolved")])
    assert json.loads(path.read_text())["grader"] == "local"
    with pytest.raises(ConfigError, match="grader: local verdicts; grader: official ones are not mixed"):
        write_grades(path, "official", [])


def test_cli_validate_and_official_without_docker(world: dict[str, Any], tmp_path: Path) -> None:
    args = [
        "eval",
        "tasks",
        "swebench",
        "--dataset",
        str(world["dataset"]),
        "--repo-source",
        str(world["mirrors"]),
    ]
    args += [
        "--repo-specs",
        str(world["specs"]),
        "--work-root",
        str(world["work_root"]),
        "--instances",
        fx.IID,
    ]
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
    done = CliRunner().invoke(cli, [*args, "--validate", "--grader", "local"], env=env)
    assert done.exit_code == 0, done.output
    assert "validation: 1 validated, 0 not buildable here, 0 wrong" in done.output
    assert "[gold] resolved (grader: local" in done.output
    # the real command line, as a user runs it: one line on stderr, exit 1, before anything runs
    proc = subprocess.run(
        [sys.executable, "-m", "assay", *args, "--validate", "--grader", "official"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: --grader official needs a Docker daemon: no Docker daemon socket at {tmp_path}/no-docker.sock "
        "(use --grader local)"
    ]
    assert not (world["work"] / "official").exists()  # nothing ran


def test_official_grader_has_no_spec_for_an_unknown_repository(world: dict[str, Any], tmp_path: Path) -> None:
    from assay.evals.tasks._swebench_grade import _official

    v = _official(world["instance"], world["instance"].patch, "gold", tmp_path, keep_images=False)
    assert (v.grader, v.status) == ("official", "not_run")
    assert v.reason == "the official harness has no spec for example-org/tinycalc 0.1"


def test_an_old_malformed_commit_is_graded_and_an_unbuildable_checkout_is_not_run(
    world: dict[str, Any], tmp_path: Path
) -> None:
    # the instance's history holds a commit with a bad timezone (as psf/requests does): git fsck reports it,
    # and the grading above still built its isolated checkouts (gold resolved)
    mirror = world["mirrors"] / fx.REPO.replace("/", "__")
    fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=mirror, capture_output=True, text=True)
    assert "badTimezone" in fsck.stderr
    assert {v.patch: v.status for v in world["verdicts"]}["gold"] == "resolved"
    # a base commit the source lacks: that instance is NOT_RUN with the reason, the next one is graded
    inst = world["instance"]
    gone = inst.__class__(**{**inst.__dict__, "instance_id": "gone-1", "base_commit": "0" * 40})
    verdicts = grade_instances(
        [gone, inst],
        {"gone-1": inst.patch, fx.IID: inst.patch},
        "local",
        world["work"],
        mirrors=world["mirrors"],
        repo_specs=world["specs"],
    )
    assert [(v.instance_id, v.status) for v in verdicts] == [("gone-1", "not_run"), (fx.IID, "resolved")]
    assert verdicts[0].reason.startswith(
        "the grader is not validated on this instance: the gold patch could not be graded: "
        "the checkout cannot be built: "
    )
    assert "0000000000000000000000000000000000000000 is not in the repository" in verdicts[0].reason


def test_a_validation_is_cached_per_instance_and_grader_version(
    world: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.evals.tasks import _swebench_validate
    from assay.evals.tasks._swebench_grade import Grading
    from assay.evals.tasks._swebench_validate import grader_version, validation

    inst = world["instance"]
    grading = Grading("local", world["work"], mirrors=world["mirrors"], specs=load_repo_specs(world["specs"]))
    first = validation(inst, grading)  # the module's grading validated it: cached since
    assert first.validated and first.cached and first.outcome == "validated" and first.reason == ""
    assert first.gold.status == "resolved" and first.empty.status == "unresolved"
    assert "local" in first.grader_version and "swebench 4." in first.grader_version
    # another spec is another grader version
    specs = json.loads(world["specs"].read_text())
    specs[fx.REPO][fx.VERSION]["test_cmd"] += " -q"
    other = Grading("local", world["work"], mirrors=world["mirrors"], specs=specs)
    assert grader_version(inst, other) != first.grader_version
    # and a new version of the grader's own rules: validated again, not read from the cache, then cached
    monkeypatch.setattr(_swebench_validate, "LOCAL_GRADER_VERSION", "test-next")
    again = validation(inst, grading)
    assert again.validated and not again.cached and "local test-next" in again.grader_version
    assert validation(inst, grading).cached
    # what could not be graded is not cached: asked again next time, and not validated meanwhile
    gone = inst.__class__(**{**inst.__dict__, "instance_id": "gone-2", "base_commit": "1" * 40})
    missing = validation(gone, grading)
    assert (missing.validated, missing.outcome, missing.cached) == (False, "not buildable", False)
    assert not validation(gone, grading).cached


def test_docker_platform_chooses_the_official_harness_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.evals.tasks._swebench_data import SwebenchInstance
    from assay.evals.tasks._swebench_grade import _official, check_platform

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "docker-calls"
    # a docker that records its calls and has no such image to pull (the harness itself then never runs)
    (bin_dir / "docker").write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\n[ "$1" = pull ] && echo "manifest unknown" >&2 && exit 1\nexit 0\n'
    )
    (bin_dir / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")  # the harness itself finds none
    inst = SwebenchInstance(
        "psf__requests-9999", "psf/requests", "a" * 40, "issue", "diff", "diff", "2.27", ["t"], ["u"]
    )
    v = _official(inst, "", "gold", tmp_path / "x86", keep_images=False, platform="linux/x86_64")
    image = "swebench/sweb.eval.x86_64.psf_1776_requests-9999:latest"
    assert (v.status, v.reason) == ("not_run", f"docker pull {image}: manifest unknown")
    assert calls.read_text().splitlines() == [f"pull --platform linux/x86_64 {image}"]
    calls.unlink()
    secret = "s3cr3t-of-the-user-0123456789"
    monkeypatch.setenv("ASSAY_TEST_API_KEY", secret)
    v = _official(inst, f"+{secret}\n", "gold", tmp_path / "arm", keep_images=True, platform="linux/arm64")
    assert v.status == "not_run" and "DockerException" in v.reason  # the harness ran, and found no daemon
    left = [f for f in (tmp_path / "arm").rglob("*") if f.is_file()]
    assert left and not [f for f in left if secret in f.read_text(errors="replace")]  # scrubbed after it ran
    assert not calls.exists()  # no published arm64 image: the harness builds it here, nothing is pulled
    with pytest.raises(ConfigError, match="--docker-platform windows/amd64: one of linux/x86_64"):
        check_platform("windows/amd64")


def test_a_repository_without_a_mirror_is_not_run_and_the_others_are_graded(
    world: dict[str, Any], tmp_path: Path
) -> None:
    specs = json.loads(world["specs"].read_text())
    specs["example-org/othercalc"] = specs[fx.REPO]
    (tmp_path / "specs.json").write_text(json.dumps(specs))
    inst = world["instance"]
    other = inst.__class__(**{**inst.__dict__, "instance_id": "other-1", "repo": "example-org/othercalc"})
    verdicts = grade_instances(
        [other, inst],
        {"other-1": inst.patch, fx.IID: inst.patch},
        "local",
        world["work"],
        mirrors=world["mirrors"],
        repo_specs=tmp_path / "specs.json",
    )
    assert [(v.instance_id, v.status) for v in verdicts] == [("other-1", "not_run"), (fx.IID, "resolved")]
    assert "the checkout cannot be built: --repo-source" in verdicts[0].reason
    assert "no git repository example-org__othercalc" in verdicts[0].reason
