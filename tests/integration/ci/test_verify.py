"""`assay ci verify` over real runs made by the runner in a git repository whose commits and tags the test
makes: only a full sweep of the tagged commit, or of one of its RC tags, from a clean tree, counts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.ci.verify import find_runs, verify
from assay.evals import get_benchmark
from assay.evals.agent.tiers import load_tiers
from assay.exec import RunOptions, run_benchmark

SHIPPED = Path(__file__).parents[3] / "eval" / "ci_tiers.json"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo: Path, text: str) -> str:
    (repo / "app.txt").write_text(text, encoding="utf-8")
    _git(repo, "add", "app.txt")
    _git(repo, "commit", "-qm", text)
    return _git(repo, "rev-parse", "HEAD")


def _run(results: Path, suite: str = "full", **options: object) -> Path:
    opts = RunOptions(suite=suite, results_dir=results, max_concurrency=1)
    return run_benchmark(
        get_benchmark("cibench"), {"no_outage": True, "weak": False, "scenario": None, **options}, opts
    ).run_dir


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "ci@example.invalid")
    _git(repo, "config", "user.name", "ci")
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    data["benchmarks"] = {
        "cibench": {
            "full": {"args": ["--suite", "full", "--no-outage"], "reason": "the whole suite, no outage"}
        }
    }
    (repo / "ci_tiers.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.chdir(repo)  # the runner records the commit of the current directory
    return repo


def test_verify_passes_on_a_full_sweep_of_an_rc_tag_and_says_which_run(repo: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    old = _commit(repo, "one")
    stale = _run(results / "old")  # a full sweep, but of an older commit
    rc = _commit(repo, "two")
    _git(repo, "tag", "-a", "v1.0.0-rc1", "-m", "rc1 [full eval]")
    pr_run = _run(results / "pr", suite="pr")  # the rc commit, but the pr suite
    targeted = _run(results / "targeted", scenario="ok-1")  # the rc commit, a narrower selection
    sweep = _run(results / "sweep")
    final = _commit(repo, "three")
    _git(repo, "tag", "v1.0.0")
    tiers = load_tiers(repo / "ci_tiers.json")
    runs = find_runs([results])
    assert set(runs) == {stale, pr_run, targeted, sweep}

    result = verify(final, runs, tiers, {"v1.0.0-rc1": rc})
    assert result.passed and result.exit_code == 0
    assert result.covered == {"cibench": (str(sweep), "RC tag v1.0.0-rc1")}
    assert result.rejected[str(stale)] == f"measured commit {old[:12]}"
    assert result.rejected[str(pr_run)] == "suite pr, not full"
    assert result.rejected[str(targeted)] == "a targeted run (--scenario)"

    # without the RC tag's commit, nothing measured the final commit
    alone = verify(final, runs, tiers)
    assert not alone.passed and alone.exit_code == 2 and alone.missing == ["cibench"]

    # the CLI reads the RC tags from git
    from assay.cli._main import cli

    res = CliRunner().invoke(
        cli,
        [
            "ci",
            "verify",
            "--commit",
            final,
            "--tag",
            "v1.0.0",
            "--runs",
            str(results),
            "--tiers",
            str(repo / "ci_tiers.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert f"cibench: measured by {sweep} (RC tag v1.0.0-rc1)" in res.output


def test_verify_refuses_a_dirty_tree_and_a_configuration_the_job_does_not_run(
    repo: Path, tmp_path: Path
) -> None:
    head = _commit(repo, "one")
    results = tmp_path / "results"
    weak = _run(results / "weak", no_outage=False)  # the job's --no-outage was not given: another config
    (repo / "app.txt").write_text("edited, not committed", encoding="utf-8")
    dirty = _run(results / "dirty")
    result = verify(head, find_runs([results]), load_tiers(repo / "ci_tiers.json"))
    assert not result.passed
    assert result.rejected[str(dirty)] == "measured a tree with uncommitted changes"
    assert result.rejected[str(weak)] == "--no-outage False, not True"
    assert "FAIL" in result.text() and "no full sweep measured" in result.text()
