"""A small real SWE-bench-style instance the tests build: a git repository of a tiny package with a bug,
its fix (the gold patch) and the tests that show it (the test patch), as a row in SWE-bench's exact schema;
a repo spec file for it; and an offline wheelhouse (pytest and its dependencies repacked as wheels from
this interpreter's install) so the local grader's venv installs from it with no network."""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = "example-org/tinycalc"
VERSION = "0.1"
IID = "example-org__tinycalc-1"
PY = f"{sys.version_info.major}.{sys.version_info.minor}"
WHEELS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")

SOURCE = """def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""
FIXED = SOURCE.replace("return a - b", "return a + b")
TESTS = """from tinycalc import mul


def test_mul():
    assert mul(3, 4) == 12
"""
NEW_TESTS = """from tinycalc import add, mul


def test_mul():
    assert mul(3, 4) == 12


def test_add():
    assert add(2, 3) == 5
"""
PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "tinycalc"
version = "0.1"
"""
#: a wrong fix: it changes mul and leaves add broken
WRONG = SOURCE.replace("return a * b", "return a + b")


def git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@localhost", "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000", "PATH": "/usr/bin:/bin",
    }  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def _diff(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    out = git(repo, "diff", "--", *files)
    git(repo, "checkout", "-q", "--", *files)
    return out


def build_instance(root: Path) -> tuple[Path, dict[str, str]]:
    """``root/mirrors/example-org__tinycalc`` (two commits, the first with a bad timezone; the fix is in
    neither) and the instance row."""
    repo = root / "mirrors" / REPO.replace("/", "__")
    (repo / "tinycalc").mkdir(parents=True)
    (repo / "tests").mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (repo / "tinycalc" / "__init__.py").write_text("", encoding="utf-8")
    git(repo, "add", "-A")
    # the first commit as psf/requests has one: a malformed timezone git fsck reports ("badTimezone") and
    # git itself fetches and checks out; the isolation check must not read it as a leak
    old = subprocess.run(
        ["git", "hash-object", "--literally", "-w", "--stdin", "-t", "commit"],
        cwd=repo,
        input=f"tree {git(repo, 'write-tree').strip()}\nauthor t <t@localhost> 1313519617 -07000\n"
        "committer t <t@localhost> 1313519617 -07000\n\nstart\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", "refs/heads/main", old)
    (repo / "tinycalc" / "__init__.py").write_text(SOURCE, encoding="utf-8")
    (repo / "tests" / "test_calc.py").write_text(TESTS, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add and mul")
    base = git(repo, "rev-parse", "HEAD").strip()
    gold = _diff(repo, {"tinycalc/__init__.py": FIXED})
    row = {
        "repo": REPO,
        "instance_id": IID,
        "base_commit": base,
        "patch": gold,
        "test_patch": _diff(repo, {"tests/test_calc.py": NEW_TESTS}),
        "problem_statement": "add(2, 3) returns -1 instead of 5.",
        "hints_text": "",
        "created_at": "2024-01-01T00:00:00Z",
        "version": VERSION,
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
        "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_mul"]),
        "environment_setup_commit": base,
    }
    return repo.parent, row


def wrong_patch(root: Path) -> str:
    return _diff(root / "mirrors" / REPO.replace("/", "__"), {"tinycalc/__init__.py": WRONG})


def write_specs(path: Path) -> Path:
    spec = {
        "python": PY,
        # the package runs from the checkout (``python -m pytest`` puts it on sys.path): building a wheel
        # offline would need the ``wheel`` package, which this interpreter may not have
        "install": 'python -c "import tinycalc"',
        "test_cmd": "python -m pytest -rA -p no:cacheprovider",
        "pip_packages": ["pytest"],
        "log_parser": "parse_log_pytest",
    }
    path.write_text(json.dumps({REPO: {VERSION: spec}}, indent=1), encoding="utf-8")
    return path


def wheelhouse(dest: Path) -> Path:
    """pytest and its dependencies as wheels, zipped from this interpreter's installed files."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WHEELS:
        dist = md.distribution(name)
        info = next(f for f in dist.files or [] if f.parts[0].endswith(".dist-info")).parts[0]
        wheel = dest / f"{info[: -len('.dist-info')]}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            for f in dist.files or []:
                src = Path(str(dist.locate_file(f)))
                if f.parts[0] == ".." or "__pycache__" in f.parts or not src.is_file():
                    continue
                if f.parts[0] == info and f.name in ("INSTALLER", "REQUESTED", "direct_url.json"):
                    continue
                zf.write(src, f.as_posix())
    return dest


def shared_world(base: Path) -> dict[str, Path]:
    """The instance's mirror, dataset, repo specs and wheelhouse under ``base`` (the session's temp root),
    built once; test modules that grade with the same work root share the grading venv too."""
    root = base / "swebench-world"
    if not (root / "ready").is_file():
        _, row = build_instance(root)
        wheelhouse(root / "wheels")
        write_specs(root / "specs.json")
        (root / "dataset.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
        (root / "ready").write_text("ok\n")
    return {
        "root": root,
        "mirrors": root / "mirrors",
        "dataset": root / "dataset.jsonl",
        "specs": root / "specs.json",
        "wheels": root / "wheels",
        "work_root": root / "wr",  # --work-root: grading under wr/swebench/grade
    }
