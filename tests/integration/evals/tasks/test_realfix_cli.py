"""`assay eval tasks run --suite realfix --repo-url <a repository the test builds>` end to end: the reference
agent on a scripted model makes a real edit in its isolated checkout, the upstream diff is fetched only in the
judge step and shown to the judge, a wrong parent refuses the grade, forbidden web use fails the attempt,
and under --fence neither the cache nor the source repository is in the agent's sight."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from realfix_repo import MARKER, FixRepo, build_fix_repo

from assay.cli._tasks import tasks_judge_command, tasks_run_command
from assay.errors import ConfigError
from assay.runs._journal import latest_attempts, read_journal

PIN = "calc-add"
GRADE = {"task": PIN, "instructions": 4, "quality": 4, "reasoning": 4, "claims": 4, "note": "same fix"}
#: the judge grades only when its prompt carries the upstream diff, introduced as one answer of several
SEES_REFERENCE = r"(?s)Reference diff \(one correct answer, not the only one\):.*" + MARKER


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    for name in ("ASSAY_MODEL", "ASSAY_JUDGE_MODEL", "ASSAY_SUITE", "ASSAY_TASKS", "ASSAY_REPO_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> FixRepo:
    return build_fix_repo(tmp_path_factory.mktemp("realfix-e2e"))


def write_pin(root: Path, upstream: FixRepo, **over: Any) -> Path:
    folder = root / "tasks" / "realfix"
    folder.mkdir(parents=True, exist_ok=True)
    pin = {
        "repo": "https://example.invalid/upstream.git",  # never reached: --repo-url replaces it
        "merge": upstream.merge,
        "parent": upstream.parent,
        "prompt": "calc.add(2, 3) returns -1 instead of 5. Fix it.",
        "forbid_internet": True,
        **over,
    }
    (folder / f"{PIN}.json").write_text(json.dumps(pin, indent=1))
    return root / "tasks" / "tasks.json"


def agent(upstream: FixRepo, *extra_shell: str) -> list[dict[str, Any]]:
    """Probe the environment into probe.txt, fix calc.py, add a test file, answer."""
    probe = (
        "{ command -v python; python -c 'import sys; print(sys.prefix)'; git log --all --format=%H | wc -l; "
        f"git cat-file -e {upstream.merge} 2>/dev/null && echo LEAK || echo no-merge; "
        f"git cat-file -e {upstream.fixed_blob} 2>/dev/null && echo LEAK || echo no-fix; "
        "git remote | wc -l; } > probe.txt"
    )
    calls = [
        {"name": "run_shell", "arguments": {"command": probe}},
        {"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}},
        {
            "name": "write_file",
            "arguments": {"path": "tests/test_sum.py", "content": "def test_x():\n    pass\n"},
        },
        *({"name": "run_shell", "arguments": {"command": c}} for c in extra_shell),
    ]
    return [{"tool_calls": [c]} for c in calls] + [{"text": "Fixed add: it subtracted b."}]


def run(
    tmp_path: Path, tasks_file: Path, repo: Path, agent_replies: list, *extra: str
) -> tuple[int, str, Path]:
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump({"replies": agent_replies}))
    judge = {
        "replies": [{"regex": SEES_REFERENCE, "text": json.dumps({"tasks": [GRADE]})}],
        "default": {"text": "?"},
    }
    (tmp_path / "judge.yaml").write_text(yaml.safe_dump(judge))
    args = [
        "--suite", "realfix", "--repo-url", str(repo),
        "--model", f"scripted/{tmp_path / 'agent.yaml'}", "--judge-model", f"scripted/{tmp_path / 'judge.yaml'}",
        "--tasks-file", str(tasks_file), "--results-dir", str(tmp_path / "results"),
        "--work-root", str(tmp_path / "work"), *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    found = [
        ln.split(": ", 1)[1].strip() for ln in result.output.splitlines() if ln.startswith("run directory: ")
    ]
    assert found, result.output
    return result.exit_code, result.output, Path(found[-1])


def attempt(run_dir: Path) -> Any:
    return latest_attempts(read_journal(run_dir / "results.jsonl"))[(PIN, 0)]


def text_of(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_the_agent_fixes_its_isolated_checkout_and_the_judge_step_alone_sees_upstream(
    tmp_path: Path, upstream: FixRepo
) -> None:
    tasks_file = write_pin(tmp_path, upstream)
    replies = agent(upstream, "python -m py_compile calc.py")  # bytecode in the checkout
    code, out, run_dir = run(tmp_path, tasks_file, upstream.path, replies, "--no-judge")
    assert code == 0, out
    att = attempt(run_dir)
    assert att.status == "SKIPPED" and att.details["awaiting_judge"] is True
    diff = att.details["diff"]
    assert "+    return a + b" in diff and "tests/test_sum.py" in diff  # its edit and its new file
    assert "__pycache__" not in diff and "Binary files" not in diff  # bytecode left out (the one patch rule)
    probe = diff.split("+++ b/probe.txt\n", 1)[1].split("\ndiff --git", 1)[0].splitlines()[1:]
    venvs = tmp_path / "work" / "venvs"
    assert list(venvs.iterdir()) == []  # the attempt's own venv went with it
    # its python is the attempt's bare venv; one commit in its history; neither the merge nor the fix; no remote
    assert probe[0].startswith(f"+{venvs}/realfix-calc-add-") and probe[0].endswith("/bin/python")
    assert probe[1] == probe[0].removesuffix("/bin/python")
    assert probe[2:] == ["+1", "+no-merge", "+no-fix", "+0"]
    assert att.details["venv_installed"] == [] and att.details["compliance"] == []
    # before the judge step nothing of the fix is anywhere: not in the run, not in the agent's cache
    assert MARKER not in text_of(run_dir) and "reference_diff" not in att.details
    # before the judge step the report has no grade and no upstream size
    row = "| calc-add | 0 | SKIPPED | - | - | none | +9/-1 in 3 files | - (not judged yet) |"
    assert row in (run_dir / "report.md").read_text()
    for cache in (tmp_path / "work" / "git-cache").glob("*.git"):
        assert subprocess.run(["git", "cat-file", "-e", upstream.merge], cwd=cache).returncode != 0
    judged = CliRunner().invoke(tasks_judge_command, [str(run_dir)], catch_exceptions=False)
    assert judged.exit_code == 0, judged.output
    att = attempt(run_dir)
    assert att.status == "PASS" and att.details["grade"]["scores"]["quality"] == 4
    assert MARKER in att.details["reference_diff"] and "+    return a + b" in att.details["reference_diff"]
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert card["summary"]["counts"]["PASS"] == 1
    assert card["config"]["extra"]["repo_url"] == str(upstream.path)
    report = (run_dir / "report.md").read_text()
    assert "- web use (compliance): 0 of 1 attempts read" in report
    # the realfix section: the judged grade, no web use, the agent's diff size against upstream's
    assert report.index("## Tasks") < report.index("## Real fixes")
    assert "| calc-add | 0 | PASS | 4.00 | yes | none | +9/-1 in 3 files | +7/-1 in 2 files | - |" in report


def test_a_pin_whose_parent_is_not_the_merges_first_parent_is_refused_a_grade(
    tmp_path: Path, upstream: FixRepo
) -> None:
    tasks_file = write_pin(tmp_path, upstream, parent=upstream.start)
    code, out, run_dir = run(tmp_path, tasks_file, upstream.path, agent(upstream), "--no-judge")
    assert code == 0, out
    with pytest.raises(
        ConfigError, match=f"grade is refused: the first parent of merge {upstream.merge} is"
    ) as e:
        CliRunner().invoke(tasks_judge_command, [str(run_dir)], catch_exceptions=False)
    assert (
        f"{PIN}.json" in str(e.value) and upstream.start in str(e.value) and upstream.parent in str(e.value)
    )
    assert not (run_dir / "judge.json").exists()


def test_web_use_the_prompt_forbade_fails_a_well_graded_attempt_and_an_install_is_said(
    tmp_path: Path, upstream: FixRepo
) -> None:
    tasks_file = write_pin(tmp_path, upstream)
    install = "python -c \"import os, site; os.mkdir(os.path.join(site.getsitepackages()[0], 'leftpad-1.0.dist-info'))\""
    replies = agent(upstream, "curl -s --max-time 2 http://127.0.0.1:9/fix.patch || true", install)
    # unfenced: under the fence (the default where it works) the venv is read-only and the install fails
    code, out, run_dir = run(tmp_path, tasks_file, upstream.path, replies, "--no-fence")
    assert code == 0, out
    att = attempt(run_dir)
    assert att.details["grade"]["scores"]["quality"] == 4  # graded well, yet:
    assert att.status == "FAIL" and att.details["reason"].startswith("compliance: web use the prompt forbade")
    assert [f["why"].split(":")[0] for f in att.details["compliance"]] == ["shell command runs curl"]
    assert att.details["venv_installed"] == ["site-packages/leftpad-1.0.dist-info"]  # said, and not handed on
    row = "| calc-add | 0 | FAIL | 4.00 | yes | 1 (forbidden): shell command runs curl: curl -s"
    assert row in (run_dir / "report.md").read_text()


def test_a_local_edit_that_rewrites_urls_is_no_web_use_under_forbid_internet(
    tmp_path: Path, upstream: FixRepo
) -> None:
    """The pyenv-doctor pin's honest fix: a sed moving a clone command from git:// to https:// fetches nothing."""
    tasks_file = write_pin(tmp_path, upstream)
    readme = "printf 'git clone git://github.com/pyenv/pyenv-doctor.git\\n' > INSTALL.md"
    sed = "sed -i 's|git://github.com/|https://github.com/|' INSTALL.md && grep -n https:// INSTALL.md"
    code, out, run_dir = run(tmp_path, tasks_file, upstream.path, agent(upstream, readme, sed))
    assert code == 0, out
    att = attempt(run_dir)
    assert att.details["compliance"] == [] and att.status == "PASS", att.details.get("reason")


def test_an_agent_that_broke_is_an_error_and_its_web_use_is_still_read(
    tmp_path: Path, upstream: FixRepo
) -> None:
    tasks_file = write_pin(tmp_path, upstream)
    curl = {
        "name": "run_shell",
        "arguments": {"command": "curl -s --max-time 2 http://127.0.0.1:9/x || true"},
    }
    replies = [{"tool_calls": [curl]}, {"error": "subject", "message": "unreadable output"}]
    code, out, run_dir = run(tmp_path, tasks_file, upstream.path, replies, "--no-judge")
    assert code == 0, out  # measured against the agent, not a stopped run
    att = attempt(run_dir)
    assert att.status == "ERROR" and att.details["reason"].startswith("the agent broke: "), att.details
    assert [f["why"].split(":")[0] for f in att.details["compliance"]] == ["shell command runs curl"]
    assert (
        "| calc-add | 0 | ERROR | - | - | 1 (forbidden): shell command runs curl"
        in (run_dir / "report.md").read_text()
    )


def test_repo_url_is_refused_outside_realfix(tmp_path: Path, upstream: FixRepo) -> None:
    args = ["--suite", "core", "--repo-url", str(upstream.path), "--model", "scripted/x.yaml"]
    with pytest.raises(ConfigError, match="--repo-url applies to --suite realfix, not core"):
        CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)


def test_under_the_fence_the_agent_sees_neither_the_cache_nor_the_source(
    tmp_path: Path, upstream: FixRepo
) -> None:
    import base64

    from assay.agents.fence import fence_available

    assert fence_available() is None, fence_available()  # not a skip: a machine without the fence fails here
    hidden = base64.b64encode(str(upstream.path).encode()).decode()  # named without an absolute path
    look = (
        'python -c "import base64, os, pathlib; w = pathlib.Path.cwd().parent.parent; '
        f"print(sorted(p.name for p in w.iterdir())); print(os.path.exists(base64.b64decode('{hidden}').decode()))\""
        " > seen.txt"
    )
    replies = [{"tool_calls": [{"name": "run_shell", "arguments": {"command": look}}]}, *agent(upstream)]
    tasks_file = write_pin(tmp_path, upstream)
    code, out, run_dir = run(tmp_path, tasks_file, upstream.path, replies, "--no-judge", "--fence")
    assert code == 0, out
    diff = attempt(run_dir).details["diff"]
    seen = diff.split("+++ b/seen.txt\n", 1)[1].splitlines()[1:3]
    assert "git-cache" not in seen[0] and "calc-add-" in seen[0]  # the work root shows only the attempt's own
    assert seen[1] == "+False"  # the source repository (it holds the fix) is not there
    assert (tmp_path / "work" / "git-cache").is_dir()  # ... though it is on the host
