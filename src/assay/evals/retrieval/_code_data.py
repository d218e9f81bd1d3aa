"""Data for the code search benchmark: SWE-bench-format queries, gold files/symbols, and repositories.

Queries are SWE-bench-format JSONL or parquet (``instance_id``, ``repo``, ``base_commit``,
``problem_statement``, ``patch``); the ``nightly``/``scale`` suites read the pinned SWE-bench Verified
parquet (dataset revision + sha256, verified before it is parsed) from the repo cache. Relevant files are those the patch modifies or deletes; relevant symbols are the innermost
def/class around each changed line of the base-commit version (an insertion counts only when a symbol
spans both sides of it).

Repositories come from a bare-repo cache (``$ASSAY_HOME/repos`` or ``--repo-cache``). The ``pr`` suite's
repository is assembled there from successive source releases of a real package (pinned by sha256,
fetched with pip when missing), with fixed commit dates so every machine gets the same commit ids.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._util import run_process, ticking
from assay.errors import ConfigError, DataIntegrityError, InfraError
from assay.evals._swebench_dataset import REQUIRED_COLUMNS, dataset_rows, file_sha256

__all__ = [
    "DATA_DIR",
    "Query",
    "changed_symbols",
    "dataset_rows",
    "ensure_pr_repo",
    "ensure_repo",
    "git",
    "load_queries",
    "parse_patch",
    "sdist_sources",
]

DATA_DIR = Path(__file__).resolve().parents[4] / "eval" / "code_retrieval"
#: suites whose repository is a history of pinned source releases: (queries, pins) under DATA_DIR
SDIST_SUITES: dict[str, tuple[str, str]] = {
    "pr": ("pr.jsonl", "sources.json"),
    "jinja": ("jinja.jsonl", "sources-jinja.json"),
}


@dataclass
class FilePatch:
    old_path: str | None  # None: a created file
    new_path: str | None  # None: a deleted file
    old_lines: set[int] = field(default_factory=set)  # removed/changed lines, base numbering
    insert_after: set[int] = field(default_factory=set)  # pure insertions between line n and n+1 (base)


@dataclass
class Query:
    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str
    created_at: str = ""
    relevant_files: list[str] = field(default_factory=list)

    def to_case_input(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "repo": self.repo,
            "base_commit": self.base_commit,
            "problem_statement": self.problem_statement,
            "patch": self.patch,
            "created_at": self.created_at,
        }


def git(cwd: Path | str, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    proc = run_process(
        ["git", "-c", "core.autocrlf=false", "-c", "advice.detachedHead=false", *args],
        cwd=str(cwd),
        env=full_env,
        errors="replace",
    )
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[:500]}")
    return proc.stdout


# ------------------------------------------------------------------------------------------- patches
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _diff_path(token: str) -> str | None:
    token = token.strip().split("\t")[0]
    if token == "/dev/null":
        return None
    return token[2:] if token[:2] in ("a/", "b/") else token


def parse_patch(patch: str) -> list[FilePatch]:
    """Files of a unified diff with the base-side lines each one changes."""
    files: list[FilePatch] = []
    cur: FilePatch | None = None
    old_ln = 0
    lines = patch.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            m = re.match(r"diff --git a/(.*) b/(.*)$", line)
            cur = FilePatch(m.group(1) if m else None, m.group(2) if m else None)
            files.append(cur)
        elif (
            line.startswith("--- ")
            and cur is not None
            and i + 1 < len(lines)
            and lines[i + 1].startswith("+++ ")
        ):
            cur.old_path = _diff_path(line[4:])
            cur.new_path = _diff_path(lines[i + 1][4:])
            i += 1
        elif line.startswith("new file mode") and cur is not None:
            cur.old_path = None
        elif line.startswith("deleted file mode") and cur is not None:
            cur.new_path = None
        elif (m := _HUNK.match(line)) and cur is not None:
            old_ln = int(m.group(1))
            # a hunk header that starts at 0 means the file was empty on that side
        elif cur is not None and old_ln and line[:1] in (" ", "-", "+"):
            if line[0] == " ":
                old_ln += 1
            elif line[0] == "-":
                cur.old_lines.add(old_ln)
                old_ln += 1
            else:
                cur.insert_after.add(old_ln - 1)
        i += 1
    return files


def relevant_files(patch: str) -> list[str]:
    """Files the patch modifies or deletes (created files are not scored)."""
    out = []
    for fp in parse_patch(patch):
        if fp.old_path is not None and fp.old_path not in out:
            out.append(fp.old_path)
    return out


def _python_defs(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line incl. decorators, last line) of every def/class, outer first."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[str, int, int]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                start = min([node.lineno, *[d.lineno for d in node.decorator_list]])
                name = prefix + node.name
                out.append((name, start, node.end_lineno or node.lineno))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, name + ".")

    visit(tree.body, "")
    return out


def _symbol_defs(path: str, source: str) -> list[tuple[str, int, int]]:
    if path.endswith((".py", ".pyi")):
        return _python_defs(source)
    from assay.codeindex.chunk import tree_sitter_symbols
    from assay.codeindex.discovery import language_for

    lang = language_for(path)
    spans = tree_sitter_symbols(source, lang) if lang else None
    return [(s.symbol, s.start, s.end) for s in spans or [] if s.kind != "class"]


def changed_symbols(path: str, base_source: str, fp: FilePatch) -> list[str]:
    """Innermost def/class around each changed base line; an insertion counts when a symbol spans both sides."""
    defs = _symbol_defs(path, base_source)
    found: list[str] = []

    def innermost(pred: Any) -> str | None:
        best = None
        for name, s, e in defs:
            if pred(s, e) and (best is None or (e - s) < (best[2] - best[1])):
                best = (name, s, e)
        return best[0] if best else None

    for ln in sorted(fp.old_lines):
        name = innermost(lambda s, e, ln=ln: s <= ln <= e)
        if name and name not in found:
            found.append(name)
    for after in sorted(fp.insert_after):
        name = innermost(lambda s, e, a=after: s <= a and a + 1 <= e)
        if name and name not in found:
            found.append(name)
    return found


# ------------------------------------------------------------------------------------------- queries
def load_queries(path: Path) -> list[Query]:
    """Read SWE-bench-format queries from JSONL, or from a ``.parquet`` file (needs pyarrow).

    Both give the same records; a bad record raises ConfigError naming the file and its line (JSONL) or
    row (parquet).
    """
    if not path.is_file():
        raise ConfigError(f"--dataset {path}: no such file")
    unit, rows = dataset_rows(path)
    return _queries_from_rows(path, rows, unit=unit)


def _queries_from_rows(path: Path, rows: Iterable[tuple[int, Any]], *, unit: str) -> list[Query]:
    def bad(n: int, message: str) -> ConfigError:
        if unit == "line":
            return ConfigError(message, path=str(path), line=n)
        return ConfigError(f"{unit} {n}: {message}", path=str(path))

    queries: list[Query] = []
    seen: set[str] = set()
    for n, row in rows:
        if not isinstance(row, dict):
            raise bad(n, f"each {unit} must be a JSON object")
        missing = [k for k in REQUIRED_COLUMNS if not isinstance(row.get(k), str) or not row.get(k)]
        if missing:
            raise bad(n, f"missing or empty field(s): {', '.join(missing)}")
        if row["instance_id"] in seen:
            raise bad(n, f"duplicate instance_id {row['instance_id']!r}")
        seen.add(row["instance_id"])
        q = Query(**{k: row[k] for k in REQUIRED_COLUMNS}, created_at=str(row.get("created_at") or ""))
        q.relevant_files = relevant_files(q.patch)
        if not q.relevant_files:
            raise bad(n, f"{q.instance_id}: the patch modifies no existing file (nothing to score)")
        queries.append(q)
    if not queries:
        raise ConfigError(f"--dataset {path}: no queries")
    return queries


# ------------------------------------------------------------------------------------------- repositories
def _repo_slug(repo: str) -> str:
    return repo.replace("/", "__")


def ensure_repo(repo: str, cache: Path, *, offline: bool) -> Path:
    """The bare repository for ``owner/name`` in ``cache``, cloned from GitHub when missing and allowed."""
    bare = cache / f"{_repo_slug(repo)}.git"
    if (bare / "HEAD").exists():
        return bare
    if offline:
        raise ConfigError(f"--offline: repository {repo} is not in the cache {cache} (expected {bare})")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=cache))
    try:
        git(cache, "clone", "--bare", "--quiet", f"https://github.com/{repo}.git", str(tmp / "r.git"))
    except RuntimeError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InfraError(f"cannot clone {repo}: {exc}") from exc
    os.replace(tmp / "r.git", bare)
    shutil.rmtree(tmp, ignore_errors=True)
    return bare


def _fetch_sdist(package: str, release: dict[str, str], dest: Path, offline: bool) -> Path:
    target = dest / release["file"]
    if target.is_file() and file_sha256(target) == release["sha256"]:
        return target
    if offline:
        raise ConfigError(
            f"--offline: {release['file']} is not in {dest}; run once with a package index reachable, "
            f"or place the file there (sha256 {release['sha256']})"
        )
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet"]
    cmd += ["-d", str(dest), f"{package}=={release['version']}"]
    proc = run_process(cmd)
    if proc.returncode != 0 or not target.is_file():
        raise InfraError(
            f"pip could not download {package}=={release['version']}: {proc.stderr.strip()[-400:]}"
        )
    got = file_sha256(target)
    if got != release["sha256"]:
        raise DataIntegrityError(f"{target}: sha256 {got} does not match the pinned {release['sha256']}")
    return target


def _extract_release(sdist: Path, work: Path) -> None:
    for child in work.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    with tarfile.open(sdist) as tar:
        members = []
        for m in tar.getmembers():
            parts = Path(m.name).parts
            if len(parts) < 2 or m.issym() or m.islnk() or ".." in parts:
                continue
            m.name = str(Path(*parts[1:]))
            members.append(m)
        tar.extractall(work, members=members, filter="data")


def ensure_pr_repo(
    cache: Path, *, offline: bool, sources: Path | None = None
) -> tuple[str, Path, dict[str, str]]:
    """The ``pr`` suite's repository: (repo name, bare repo path, {version: commit}).

    Assembled once into ``cache`` from pinned sdists (one commit per release, fixed dates); the commits
    must come out exactly as pinned in ``sources.json``, else DataIntegrityError.
    """
    spec = json.loads((sources or DATA_DIR / "sources.json").read_text())
    name: str = spec["repo"]
    releases: list[dict[str, str]] = spec["releases"]
    bare = cache / f"{_repo_slug(name)}.git"
    want = {r["version"]: r["commit"] for r in releases}
    if (bare / "HEAD").exists():
        have = git(bare, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags").split("\n")
        tags = dict(line.split(" ", 1) for line in have if " " in line)
        if all(tags.get(f"v{v}") == c for v, c in want.items()):
            return name, bare, want
        shutil.rmtree(bare)
    sdist_dir = cache / "sdists"
    fetching = ticking(releases, f"fetching {spec['package']} releases", "sdists")
    sdists = [_fetch_sdist(spec["package"], r, sdist_dir, offline) for r in fetching]
    tmp = Path(tempfile.mkdtemp(prefix=".assemble-", dir=cache))
    try:
        work = tmp / "work"
        work.mkdir()
        git(work, "init", "--quiet", "-b", "main")
        history = ticking(list(zip(releases, sdists, strict=True)), f"building the {name} history", "commits")
        for r, sdist in history:
            _extract_release(sdist, work)
            git(work, "add", "-A", "-f")
            date = f"{r['date']}T12:00:00+0000"
            env = {
                "GIT_AUTHOR_NAME": "assay",
                "GIT_AUTHOR_EMAIL": "assay@localhost",
                "GIT_COMMITTER_NAME": "assay",
                "GIT_COMMITTER_EMAIL": "assay@localhost",
                "GIT_AUTHOR_DATE": date,
                "GIT_COMMITTER_DATE": date,
            }
            git(
                work,
                "-c",
                "commit.gpgsign=false",
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                f"{spec['package']} {r['version']}",
                env=env,
            )
            sha = git(work, "rev-parse", "HEAD").strip()
            if r.get("commit") and sha != r["commit"]:
                raise DataIntegrityError(
                    f"assembling {name}: release {r['version']} gave commit {sha}, pinned {r['commit']} in sources.json"
                )
            git(work, "tag", f"v{r['version']}")
        git(tmp, "clone", "--bare", "--quiet", str(work), str(tmp / "r.git"))
        if bare.exists():
            shutil.rmtree(bare)
        os.replace(tmp / "r.git", bare)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return name, bare, want


def sdist_sources(repo: str) -> Path:
    """The pins (``sources*.json``) of the sdist-history repository ``repo``; ConfigError if none names it."""
    for _, pins in SDIST_SUITES.values():
        path = DATA_DIR / pins
        if json.loads(path.read_text())["repo"] == repo:
            return path
    known = ", ".join(json.loads((DATA_DIR / p).read_text())["repo"] for _, p in SDIST_SUITES.values())
    raise ConfigError(f"repository {repo} is not one of the release-history suites' ({known})")


def checkout(bare: Path, worktree: Path, commit: str) -> None:
    """Reuse one worktree per repository: clone it once (sharing objects), then check out ``commit``."""
    if not (worktree / ".git").exists():
        worktree.parent.mkdir(parents=True, exist_ok=True)
        git(worktree.parent, "clone", "--shared", "--no-checkout", "--quiet", str(bare), str(worktree))
    git(worktree, "checkout", "--quiet", "--force", "--detach", commit)
    git(worktree, "clean", "-fdxq")


def file_at(worktree: Path, commit: str, path: str) -> str | None:
    try:
        return git(worktree, "show", f"{commit}:{path}")
    except RuntimeError:
        return None
