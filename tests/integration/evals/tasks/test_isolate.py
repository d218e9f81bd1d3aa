"""The agent's checkout and venv on a real repository: the fix is unreachable by every git command, the
cache is fetched by commit, a bad pin is named, and the venv holds nothing and is replaced once dirtied."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from realfix_repo import MARKER, FixRepo, build_fix_repo

from assay.errors import ConfigError, InfraError
from assay.evals._isolate import (
    PIN_REFS,
    assert_isolated,
    cache_repo,
    isolated_checkout,
    source_url,
)
from assay.evals._workspace import bare_venv


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> FixRepo:
    return build_fix_repo(tmp_path_factory.mktemp("realfix"))


def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)


def objects(repo: Path) -> set[str]:
    out = run(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").stdout
    return set(out.split())


def reachable(repo: Path, commit: str) -> set[str]:
    return {line.split()[0] for line in run(repo, "rev-list", "--objects", commit).stdout.splitlines()}


@pytest.mark.parametrize("depth", [1, None])
def test_the_fix_is_unreachable_in_the_checkout_by_every_git_command(
    tmp_path: Path, upstream: FixRepo, depth: int | None
) -> None:
    dest = isolated_checkout(upstream.path, upstream.parent, tmp_path / "co", tmp_path / "cache", depth=depth)
    fix_objects = {upstream.fix, upstream.merge, upstream.later, upstream.fixed_blob}
    assert run(dest, "rev-parse", "HEAD").stdout.strip() == upstream.parent
    assert run(dest, "symbolic-ref", "-q", "HEAD").returncode != 0  # detached
    assert (dest / "calc.py").read_text().count("a - b") == 1
    logged = run(dest, "log", "--all", "--format=%H").stdout.split()
    assert upstream.parent in logged and not fix_objects & set(logged)
    for sha in fix_objects:
        assert run(dest, "rev-parse", "--verify", "--quiet", f"{sha}^{{object}}").returncode != 0
        assert run(dest, "cat-file", "-e", sha).returncode != 0
        assert run(dest, "show", sha).returncode != 0
    assert run(dest, "for-each-ref").stdout == "" and run(dest, "show-ref").stdout == ""
    # no branch, local or remote: only the detached HEAD
    assert run(dest, "branch", "-a").stdout.splitlines() == ["* (no branch)"]
    assert run(dest, "tag").stdout == ""
    assert run(dest, "remote", "-v").stdout == "" and run(dest, "reflog", "--all").stdout == ""
    assert not (dest / ".git" / "FETCH_HEAD").exists() and not (dest / ".git" / "ORIG_HEAD").exists()
    # every object stored (packed or loose) is one the parent reaches: nothing else came over
    held = objects(dest)
    assert held and held <= reachable(upstream.path, upstream.parent) and not held & fix_objects
    if depth is None:
        assert held == reachable(upstream.path, upstream.parent)
    else:
        assert run(dest, "rev-list", "--count", "HEAD").stdout.strip() == "1"
    batch = ["git", "cat-file", "--batch-all-objects", "--batch"]
    contents = subprocess.run(batch, cwd=dest, capture_output=True, check=True).stdout  # trees are binary
    assert MARKER.encode() not in contents and b"a + b" not in contents
    fsck = run(dest, "fsck", "--unreachable", "--no-reflogs", "--no-progress")
    assert fsck.returncode == 0 and fsck.stdout == "" and fsck.stderr == ""


def test_the_cache_is_bare_keyed_by_source_and_holds_only_the_fetched_commit(
    tmp_path: Path, upstream: FixRepo
) -> None:
    cache_root = tmp_path / "cache"
    isolated_checkout(upstream.path, upstream.parent, tmp_path / "a", cache_root, depth=1)
    # a file:// URL of the same folder is the same source: one cache, no second fetch needed
    isolated_checkout(source_url(upstream.path), upstream.parent, tmp_path / "b", cache_root, depth=1)
    caches = sorted(cache_root.glob("*.git"))
    assert caches == [cache_repo(upstream.path, cache_root)]
    cache = caches[0]
    assert run(cache, "rev-parse", "--is-bare-repository").stdout.strip() == "true"
    assert run(cache, "for-each-ref", "--format=%(refname)").stdout.split() == [PIN_REFS + upstream.parent]
    assert not objects(cache) & {upstream.fix, upstream.merge, upstream.fixed_blob}


def test_a_missing_commit_or_a_short_id_or_no_source_is_named(tmp_path: Path, upstream: FixRepo) -> None:
    absent = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(ConfigError, match=f"{absent} is not in the repository") as err:
        isolated_checkout(upstream.path, absent, tmp_path / "x", tmp_path / "cache")
    assert upstream.path.as_uri() in str(err.value)
    with pytest.raises(ConfigError, match="not a full commit id"):
        isolated_checkout(upstream.path, upstream.parent[:12], tmp_path / "y", tmp_path / "cache")
    with pytest.raises(ConfigError, match="no such folder"):
        isolated_checkout(tmp_path / "nowhere", upstream.parent, tmp_path / "z", tmp_path / "cache")


def test_an_object_beyond_the_commit_fails_the_isolation_check(tmp_path: Path, upstream: FixRepo) -> None:
    dest = isolated_checkout(upstream.path, upstream.parent, tmp_path / "co", tmp_path / "cache", depth=1)
    assert_isolated(dest, "upstream", upstream.parent)  # as made: holds
    stray = tmp_path / "stray.txt"
    stray.write_text("the fix, smuggled in\n")
    run(dest, "hash-object", "-w", str(stray))
    with pytest.raises(InfraError, match=f"upstream at {upstream.parent}: .*unreachable blob"):
        assert_isolated(dest, "upstream", upstream.parent)


def test_the_venv_has_nothing_installed_and_the_host_python_is_off_path(tmp_path: Path) -> None:
    venv = bare_venv(tmp_path / "work", "agent")
    assert venv.installed() == []
    shims = tmp_path / "shims"  # a pyenv-like folder that would run the host's Python
    shims.mkdir()
    (shims / "python3").write_text("#!/bin/sh\nexit 3\n")
    (shims / "python3").chmod(0o755)
    host_bin = str(Path(os.sys.prefix) / "bin")  # type: ignore[attr-defined]
    base = {
        "PATH": f"{host_bin}:{shims}:/usr/bin:/bin",
        "PYTHONPATH": "/src",
        "PYTHONHOME": "/x",
        "LANG": "C",
    }
    env = venv.env(base)
    path = env["PATH"].split(":")
    assert path[0] == str(venv.bin) and host_bin not in path and str(shims) not in path
    assert "/usr/bin" in path and env["VIRTUAL_ENV"] == str(venv.root)
    assert "PYTHONPATH" not in env and "PYTHONHOME" not in env
    probe = (
        "import sys, importlib.util as u; print(sys.prefix); print(u.find_spec('pytest'), u.find_spec('pip'))"
    )
    done = subprocess.run(["python", "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == [str(venv.root), "None None"]


def test_a_venv_something_was_installed_into_is_replaced(tmp_path: Path) -> None:
    venv = bare_venv(tmp_path / "work", "agent")
    assert bare_venv(tmp_path / "work", "agent").fresh_if_dirty() == venv  # clean: kept as is
    site = next((venv.root / "lib").glob("python*/site-packages"))
    (site / "leftpad-1.0.dist-info").mkdir()
    (site / "leftpad.py").write_text("x = 1\n")
    (venv.bin / "leftpad").write_text("#!/bin/sh\n")
    assert venv.installed() == [
        "bin/leftpad",
        "site-packages/leftpad-1.0.dist-info",
        "site-packages/leftpad.py",
    ]
    fresh = venv.fresh_if_dirty()
    assert fresh.installed() == [] and not (site / "leftpad.py").exists() and fresh.python.exists()
    with pytest.raises(ConfigError, match="venv key"):
        bare_venv(tmp_path / "work", "../escape")


def test_the_agent_patch_leaves_bytecode_out_and_applies_on_a_fresh_checkout_of_the_parent(
    tmp_path: Path, upstream: FixRepo
) -> None:
    from assay.evals._workspace import agent_patch

    dest = isolated_checkout(upstream.path, upstream.parent, tmp_path / "co", tmp_path / "cache", depth=1)
    assert agent_patch(dest, upstream.parent) == ""  # nothing changed
    (dest / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (dest / "tests").mkdir()
    (dest / "tests" / "test_sum.py").write_text("def test_x():\n    pass\n")
    subprocess.run(["python", "-m", "py_compile", "calc.py"], cwd=dest, check=True)  # real bytecode
    (dest / "tests" / "__pycache__").mkdir()
    (dest / "tests" / "__pycache__" / "test_sum.cpython-311.pyc").write_bytes(b"\x00\x01bytecode")
    (dest / "stray.pyc").write_bytes(b"\x00\x02")
    (dest / ".pytest_cache").mkdir()
    (dest / ".pytest_cache" / "CACHEDIR.TAG").write_text("x\n")
    assert list((dest / "__pycache__").glob("calc.*.pyc"))
    patch = agent_patch(dest, upstream.parent)
    assert "+    return a + b" in patch and "+++ b/tests/test_sum.py" in patch  # the edit and the new file
    assert "pyc" not in patch and "__pycache__" not in patch and ".pytest_cache" not in patch
    assert "Binary files" not in patch
    fresh = isolated_checkout(upstream.path, upstream.parent, tmp_path / "fresh", tmp_path / "cache", depth=1)
    (tmp_path / "agent.diff").write_text(patch)
    applied = run(fresh, "apply", str(tmp_path / "agent.diff"))
    assert applied.returncode == 0, applied.stderr
    assert (fresh / "calc.py").read_text() == (dest / "calc.py").read_text()
    assert (fresh / "tests" / "test_sum.py").read_text() == "def test_x():\n    pass\n"
    assert not (fresh / "__pycache__").exists() and not (fresh / "stray.pyc").exists()


def test_an_agent_patch_of_a_folder_that_is_no_repository_is_an_infra_error(tmp_path: Path) -> None:
    from assay.evals._workspace import agent_patch

    with pytest.raises(InfraError, match="git add -A"):
        agent_patch(tmp_path, "0" * 40)  # never an empty patch (that would fail the agent)
