"""Isolation checked for what it means on a repository with old malformed commits (psf/requests has one with a
bad timezone): git's historical-format findings are not leaks, while a ref, a remote or an object beyond the
commit still is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.evals._isolate import (
    TOLERATED_FSCK,
    NotIsolated,
    assert_isolated,
    fsck_findings,
    isolated_checkout,
    isolation_problems,
)


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, check=True)
    return done.stdout.decode().strip()


def old_format_repo(root: Path) -> dict[str, str]:
    """A repository whose history holds a commit with a bad timezone over a tree with a zero-padded file mode,
    then one whose author has no email (objects git itself would not write today, written with
    ``hash-object --literally``), then a normal commit (the base) and a later one (the fix)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    blob = bytes.fromhex(git(root, "hash-object", "-w", "calc.py"))
    literally = ("hash-object", "--literally", "-w", "--stdin", "-t")
    zero_tree = git(root, *literally, "tree", stdin=b"0100644 calc.py\0" + blob)
    tree = git(root, *literally, "tree", stdin=b"100644 calc.py\0" + blob)
    old = git(
        root, *literally, "commit",
        stdin=f"tree {zero_tree}\nauthor Old Timer <old@example.org> 1313519617 -07000\n"
        f"committer Old Timer <old@example.org> 1313519617 -07000\n\nan old commit\n".encode(),
    )  # fmt: skip
    no_email = git(
        root, *literally, "commit",
        stdin=f"tree {tree}\nparent {old}\nauthor NoMail 1313519700 +0000\ncommitter NoMail 1313519700 +0000\n"
        "\nno email\n".encode(),
    )  # fmt: skip
    git(root, "update-ref", "refs/heads/main", no_email)
    git(root, "reset", "-q", "--hard")
    env = ["-c", "user.name=t", "-c", "user.email=t@localhost"]
    (root / "README").write_text("calc\n")
    git(root, "add", "README")
    git(root, *env, "commit", "-q", "-m", "readme")
    base = git(root, "rev-parse", "HEAD")
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(root, *env, "commit", "-q", "-am", "the fix")
    return {"old": old, "no_email": no_email, "base": base, "fix": git(root, "rev-parse", "HEAD")}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("oldformat") / "repo"
    return root, old_format_repo(root)


def test_old_malformed_commits_are_not_leaks(tmp_path: Path, history: tuple[Path, dict[str, str]]) -> None:
    source, commits = history
    dest = isolated_checkout(source, commits["base"], tmp_path / "co", tmp_path / "cache")
    # the findings are real: plain git fsck reports all three in the checkout (exit 1), as on psf/requests
    plain = subprocess.run(["git", "fsck", "--no-progress"], cwd=dest, capture_output=True, text=True)
    assert plain.returncode != 0
    for msg, sha in (("badTimezone", commits["old"]), ("missingEmail", commits["no_email"])):
        assert f"error in commit {sha}: {msg}" in plain.stderr
    assert "zeroPaddedFilemode" in plain.stderr
    # and tolerated: the checkout holds the old history and is isolated
    assert {"badTimezone", "missingEmail", "zeroPaddedFilemode"} <= set(TOLERATED_FSCK)
    assert fsck_findings(dest) == [] and isolation_problems(dest) == []
    logged = git(dest, "log", "--all", "--format=%H").split()
    assert commits["old"] in logged and commits["fix"] not in logged
    assert subprocess.run(["git", "cat-file", "-e", commits["fix"]], cwd=dest).returncode != 0


def test_a_leak_is_still_caught_beside_the_old_commits(
    tmp_path: Path, history: tuple[Path, dict[str, str]]
) -> None:
    source, commits = history
    dest = isolated_checkout(source, commits["base"], tmp_path / "co", tmp_path / "cache")
    stray = tmp_path / "fix.txt"
    stray.write_text("return a + b\n")
    blob = git(dest, "hash-object", "-w", str(stray))
    with pytest.raises(NotIsolated, match=f"not isolated: unreachable blob {blob}") as err:
        assert_isolated(dest, "upstream", commits["base"])
    assert "badTimezone" not in str(err.value)
    git(dest, "prune", "--expire=now")
    assert isolation_problems(dest) == []
    git(dest, "update-ref", "refs/heads/later", commits["base"])
    git(dest, "remote", "add", "origin", str(source))
    assert {"ref refs/heads/later", "remote origin", "a reflog (.git/logs)"} == set(isolation_problems(dest))
