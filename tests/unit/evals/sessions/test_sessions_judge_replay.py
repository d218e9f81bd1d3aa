"""The sessions judge's strict answer reading, the replay workspace (an isolated checkout at the recorded commit, a
copy, or a skip), the recorded commit read from the repository, and output kept out of git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.sessions._dataset import guard_output, recorded_commit
from assay.evals.sessions._judge import derived_score, parse_grade
from assay.evals.sessions._replay import map_cwd, parse_cwd_map, prepare_workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "sessions"))
from acme_repo import make_repo


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"score": 4, "claims_unseen_work": false, "reason": "ok"}', (4, False, "ok")),
        ('Sure. {"score": "5", "claims_unseen_work": true, "reason": "x"}', (5, True, "x")),
        (
            '{"score": 0, "claims_unseen_work": true, "reason": "claims a test run"}',
            (0, True, "claims a test run"),
        ),
    ],
)
def test_a_usable_grade(reply: str, expected: tuple[int, bool, str]) -> None:
    assert parse_grade(reply) == expected


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("The answer is good, 4/5.", "no JSON object"),
        ('{"score": 4.5, "claims_unseen_work": false}', "not a whole number 0-5"),
        ('{"score": 6, "claims_unseen_work": false}', "not a whole number 0-5"),
        ('{"score": true, "claims_unseen_work": false}', "not a whole number 0-5"),
        ('{"score": 3, "claims_unseen_work": "no"}', "not true or false"),
    ],
)
def test_an_unusable_grade_is_refused_never_read_as_a_zero(reply: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_grade(reply)


def test_claiming_unseen_work_is_a_zero_whatever_number_came_with_it() -> None:
    assert derived_score(5, True) == 0 and derived_score(4, False) == 4


def test_replay_at_the_recorded_commit_cannot_see_the_future(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "acme-app")
    first = recorded_commit(str(repo), "main", "2026-12-01T16:00:00Z")
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert first is not None and first != head  # the 2031 commit came after the session
    space = prepare_workspace(str(repo), first, tmp_path / "work")
    assert not isinstance(space, str)
    assert "MAX_RETRIES = 5" in (space.workdir / "client.py").read_text()
    assert space.how == f"isolated checkout of {repo} at {first[:12]}"

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=space.workdir, capture_output=True, text=True)

    # the later commit (RETRY_LIMIT = 7, what a recorded fix would be) is reachable by no git command
    assert git("log", "--all", "--format=%H").stdout.split() == [first]
    assert git("cat-file", "-e", head).returncode != 0 and git("show", head).returncode != 0
    assert git("for-each-ref").stdout == "" and git("remote").stdout == ""
    every = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=space.workdir, capture_output=True
    ).stdout
    assert b"RETRY_LIMIT" not in every and b"MAX_RETRIES" in every
    fsck = git("fsck", "--unreachable", "--no-reflogs", "--no-progress")
    assert fsck.returncode == 0 and fsck.stdout == fsck.stderr == ""
    space.remove()
    assert not space.workdir.exists()
    listed = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True
    ).stdout
    assert len(listed.splitlines()) == 1 and "RETRY_LIMIT" in (repo / "client.py").read_text()
    # a commit the repository lacks by now (rewritten away) is copied, never guessed
    gone = prepare_workspace(str(repo), "0" * 40, tmp_path / "work")
    assert not isinstance(gone, str) and gone.how.endswith(f"(commit {'0' * 40} not in it)")
    gone.remove()


def test_a_copy_without_git_and_a_skip_without_the_directory(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.md").write_text("hi\n")
    space = prepare_workspace(str(plain), None, tmp_path / "work")
    assert not isinstance(space, str) and (space.workdir / "notes.md").read_text() == "hi\n"
    assert "not a git repository" in space.how
    space.remove()
    why = prepare_workspace("/home/dev/src/gone", "abc", tmp_path / "work")
    assert (
        why
        == "the recorded working directory /home/dev/src/gone is not on this machine (map it with --cwd-map OLD=NEW)"
    )
    mapping = parse_cwd_map(["/home/dev/src=/srv/src"])
    assert (
        map_cwd("/home/dev/src/app/sub", mapping) == "/srv/src/app/sub"
        and map_cwd("/other", mapping) == "/other"
    )
    with pytest.raises(ConfigError, match="--cwd-map 'nope': give OLD=NEW"):
        parse_cwd_map(["nope"])


def test_output_inside_a_work_tree_that_does_not_ignore_it_is_kept_out_of_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", later=False)
    warning = guard_output(repo / "results" / "run")
    assert warning is not None and "does not ignore it" in warning
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == ""  # the folder ignores itself
    (repo / ".gitignore").write_text("ignored/\n")
    assert guard_output(repo / "ignored" / "run") is None
    assert not (repo / "ignored" / "run" / ".gitignore").exists()
    assert guard_output(tmp_path / "elsewhere") is None  # not in a work tree


def test_attempts_side_by_side_each_get_a_checkout(tmp_path: Path) -> None:
    """Attempts prepare their workspaces in threads at once: they share one cache of the repository."""
    from concurrent.futures import ThreadPoolExecutor

    repo = make_repo(tmp_path / "acme-app")
    first = recorded_commit(str(repo), "main", "2026-12-01T16:00:00Z")
    with ThreadPoolExecutor(8) as pool:
        spaces = list(pool.map(lambda _: prepare_workspace(str(repo), first, tmp_path / "work"), range(8)))
    assert all(not isinstance(s, str) and (s.workdir / "client.py").is_file() for s in spaces)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda s: s.remove(), spaces))
    listed = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True
    ).stdout
    assert len(listed.strip().splitlines()) == 1
