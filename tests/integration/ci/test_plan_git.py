"""`assay ci plan --event tag` reads the tag's annotation from git: a marker counts only in an annotated
tag's message, never in the commit message a lightweight tag points at. `assay ci scan` refuses secrets."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli

TIERS = Path(__file__).parents[3] / "eval" / "ci_tiers.json"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "ci@example.invalid")
    _git(tmp_path, "config", "user.name", "ci")
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-qm", "docs only [skip eval]")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _plan(tag: str, out: Path) -> dict:
    res = CliRunner().invoke(
        cli, ["ci", "plan", "--event", "tag", "--tag", tag, "--tiers", str(TIERS), "--out", str(out)]
    )
    assert res.exit_code == 0, (res.output, res.exception)
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("tag", "message", "tier", "skipped"),
    [
        ("v2.0.0-rc1", None, "smoke", False),  # lightweight: the commit's [skip eval] is no marker
        ("v2.0.0-rc2", "second candidate", "smoke", False),
        ("v2.0.0-rc3", "candidate [full eval]", "full", False),
        ("v2.0.0-rc4", "typo fix [skip eval]", None, True),
        ("v2.0.0", "release [skip eval]", None, False),  # final: verify, the marker ignored
    ],
)
def test_tag_annotation_from_git(
    repo: Path, tag: str, message: str | None, tier: str | None, skipped: bool
) -> None:
    if message is None:
        _git(repo, "tag", tag)
    else:
        _git(repo, "tag", "-a", tag, "-m", message)
    plan = _plan(tag, repo / "plan.json")
    assert (plan["tier"], plan["skipped"]) == (tier, skipped)
    assert plan["verify"] == (tag == "v2.0.0")


def test_unknown_tag_is_an_error(repo: Path) -> None:
    res = CliRunner().invoke(
        cli, ["ci", "plan", "--event", "tag", "--tag", "v9.0.0-rc1", "--tiers", str(TIERS)]
    )
    assert res.exit_code == 1 and "--tag v9.0.0-rc1: no such tag" in str(res.exception)


def test_scan_finds_a_planted_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_API_KEY", "sk-test-0123456789abcdefghij")
    (tmp_path / "ok.md").write_text("nothing here", encoding="utf-8")
    res = CliRunner().invoke(cli, ["ci", "scan", str(tmp_path)])
    assert res.exit_code == 0 and "0 file(s) with secrets" in res.output
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "leak.jsonl").write_text('{"k": "sk-test-0123456789abcdefghij"}', encoding="utf-8")
    res = CliRunner().invoke(cli, ["ci", "scan", str(tmp_path)])
    assert res.exit_code == 2 and "leak.jsonl" in res.output
