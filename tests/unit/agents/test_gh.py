"""The offline gh stand-in, run as the agent runs it: the generated shim, a real subprocess, on PATH as ``gh``."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.agents._gh import install_gh, read_gh_log
from assay.errors import ConfigError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "agents" / "gh"


@pytest.fixture
def gh(tmp_path: Path):
    stand_in = install_gh(tmp_path / "bin", FIXTURES, tmp_path / "logs" / "gh.jsonl")
    env = {"PATH": f"{stand_in.bin_dir}{os.pathsep}/usr/bin:/bin"}

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        # through PATH, by name, the way an agent's shell finds it
        return subprocess.run(
            ["gh", *args], env=env, capture_output=True, text=True, timeout=20, cwd=tmp_path
        )

    call.stand_in = stand_in  # type: ignore[attr-defined]
    return call


def test_issue_view_prints_title_state_labels_and_markdown_body(gh) -> None:
    done = gh("issue", "view", "12")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "title:\tparse_date accepts 2023-02-30",
        "state:\tOPEN",
        "author:\tdana",
    ]
    assert "labels:\tbug, dates" in done.stdout
    assert "comments:\t1" in done.stdout
    # the body comes from 12.md, which wins over the JSON
    assert done.stdout.split("\n--\n", 1)[1].startswith('`toybox.dates.parse_date("2023-02-30")`')
    assert "Same for 2023-04-31." not in done.stdout
    assert "Same for 2023-04-31." in gh("issue", "view", "12", "--comments").stdout


def test_issue_view_json_fields_and_unknown_ones(gh) -> None:
    done = gh("issue", "view", "#12", "--json", "title,labels", "-R", "acme/toybox")
    assert json.loads(done.stdout) == {
        "title": "parse_date accepts 2023-02-30",
        "labels": [{"name": "bug"}, {"name": "dates"}],
    }
    bad = gh("issue", "view", "12", "--json", "milestone")
    assert bad.returncode == 1 and "Unknown JSON field: 'milestone'" in bad.stderr


def test_missing_issue_is_an_error_like_ghs(gh) -> None:
    done = gh("issue", "view", "99")
    assert done.returncode == 1
    assert "Could not resolve to an issue with the number of 99" in done.stderr


def test_issue_list_filters_by_state_and_label(gh) -> None:
    assert gh("issue", "list").stdout == "12\tparse_date accepts 2023-02-30\tbug, dates\tOPEN\n"
    assert [line.split("\t")[0] for line in gh("issue", "list", "--state", "all").stdout.splitlines()] == [
        "12",
        "7",
    ]
    closed = json.loads(gh("issue", "list", "-s", "closed", "--json", "number,title").stdout)
    assert closed == [{"number": 7, "title": "README typo"}]
    assert gh("issue", "list", "--state", "all", "--label", "docs").stdout.startswith("7\t")
    assert gh("issue", "list", "--state", "all", "--limit", "1").stdout.count("\n") == 1


def test_pr_view_list_and_diff(gh) -> None:
    view = gh("pr", "view", "15")
    assert "title:\tReject impossible dates in parse_date" in view.stdout
    assert "head:\tfix-parse-date" in view.stdout and view.stdout.rstrip().endswith("Fixes #12.")
    assert gh("pr", "list").stdout == "15\tReject impossible dates in parse_date\tfix-parse-date\tOPEN\n"
    diff = gh("pr", "diff", "15")
    assert diff.returncode == 0
    assert diff.stdout == (FIXTURES / "pulls" / "15.diff").read_text()


@pytest.mark.parametrize(
    "args",
    [
        ("issue", "create", "--title", "x", "--body", "y"),
        ("issue", "comment", "12", "--body", "done"),
        ("issue", "close", "12"),
        ("pr", "create", "--fill"),
        ("pr", "merge", "15", "--squash"),
        ("api", "-X", "POST", "repos/acme/toybox/issues"),
        ("api", "repos/acme/toybox/issues/12/comments", "-f", "body=hi"),
        ("api", "--method=DELETE", "repos/acme/toybox"),
    ],
)
def test_writes_are_refused_with_exit_1(gh, args) -> None:
    done = gh(*args)
    assert done.returncode == 1
    assert "writes are refused in this evaluation" in done.stderr
    assert done.stdout == ""
    (call,) = read_gh_log(gh.stand_in.log)
    assert call.argv == ["gh", *args] and call.refused and call.exit_code == 1


def test_every_call_is_logged_in_order_with_time_and_exit_code(gh) -> None:
    gh("issue", "view", "12")
    gh("pr", "diff", "15")
    gh("issue", "view", "99")
    gh("api", "repos/acme/toybox")  # a read that is not served: an error, not a refusal
    calls = read_gh_log(gh.stand_in.log)
    assert [c.argv[1:] for c in calls] == [
        ["issue", "view", "12"],
        ["pr", "diff", "15"],
        ["issue", "view", "99"],
        ["api", "repos/acme/toybox"],
    ]
    assert [c.exit_code for c in calls] == [0, 0, 1, 1]
    assert [c.refused for c in calls] == [False, False, False, False]
    assert all(a.time <= b.time for a, b in itertools.pairwise(calls))


def test_shim_runs_without_assay_importable(gh, tmp_path: Path) -> None:
    # the shim runs a copy of the module with the system Python in isolated mode: nothing from the host venv
    shim = (gh.stand_in.bin_dir / "gh").read_text()
    assert " -I -S " in shim and str(gh.stand_in.bin_dir / ".assay-gh.py") in shim
    done = gh("--version")
    assert done.returncode == 0 and "offline" in done.stdout


def test_install_refuses_a_missing_fixtures_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"gh fixtures .*nope: not a folder"):
        install_gh(tmp_path / "bin", tmp_path / "nope", tmp_path / "gh.jsonl")


def test_module_entry_reads_fixtures_and_log_from_the_environment(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    env = {**os.environ, "ASSAY_GH_FIXTURES": str(FIXTURES), "ASSAY_GH_LOG": str(log)}
    done = subprocess.run(
        [sys.executable, "-m", "assay.agents._gh", "issue", "list", "--state", "closed"],
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "7\tREADME typo\tdocs\tCLOSED\n"
    assert [c.argv for c in read_gh_log(log)] == [["gh", "issue", "list", "--state", "closed"]]
