"""A real git repository the realfix and isolation tests build: several commits, a fix merged from a branch.

History (first parents on ``main``)::

    start -- util -- docs ------- merge(fix) -- later      (main; tag v1 on later)
                 \\              /
                  fix ---------                              (branch fix: the fix commit)

``docs`` is the merge's first parent (the pinned parent); the fix changes ``calc.py`` and adds a test file.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    # FIX-MARKER: add, not subtract\n    return a + b\n"
NEW_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5  # FIX-MARKER\n"
MARKER = "FIX-MARKER"


@dataclass(frozen=True)
class FixRepo:
    path: Path
    start: str
    parent: str
    fix: str
    merge: str
    later: str
    #: the blob of the fixed calc.py (an object only the fix brings)
    fixed_blob: str


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "dev",
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": "dev",
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def build_fix_repo(root: Path) -> FixRepo:
    repo = root / "upstream"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    start = _commit(repo, {"calc.py": BUGGY, "README.md": "calc: add two numbers.\n"}, "start")
    _commit(repo, {"util.py": "def double(x):\n    return 2 * x\n"}, "util")
    git(repo, "checkout", "-q", "-b", "fix")
    fix = _commit(repo, {"calc.py": FIXED, "tests/test_calc.py": NEW_TEST}, "fix add")
    git(repo, "checkout", "-q", "main")
    parent = _commit(repo, {"README.md": "calc: add two numbers (see calc.add).\n"}, "docs")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch fix", "fix")
    merge = git(repo, "rev-parse", "HEAD")
    later = _commit(repo, {"CHANGES.md": "- add adds\n"}, "later")
    git(repo, "tag", "v1")
    return FixRepo(repo, start, parent, fix, merge, later, git(repo, "rev-parse", f"{fix}:calc.py"))
