"""Walk a repository and decide which files are indexed.

Respects ``.gitignore`` files (root and nested), skips hidden and build folders and likely secrets, and
skips-and-counts every file it will not index (too large, binary, a link out of the repository, a
directory loop, a dangling link) instead of crashing the walk. Non-UTF-8 text is decoded as Latin-1.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError, MissingDependencyError

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "Discovery",
    "SourceFile",
    "decode_source",
    "discover",
    "language_for",
]

DEFAULT_MAX_FILE_BYTES = 1_000_000
BINARY_SNIFF_BYTES = 8192

#: folders never descended into (besides hidden ones)
BUILD_DIRS = frozenset(
    {
        "node_modules",
        "__pycache__",
        "build",
        "dist",
        "target",
        "venv",
        "env",
        "site-packages",
        "bower_components",
        "vendor",
        "_build",
        "htmlcov",
        "out",
    }
)

#: file extension -> language name (tree-sitter-language-pack names; "python" is chunked with ast)
LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "bash",
    ".lua": "lua",
}
#: text files indexed with the line-block fallback
TEXT_EXTENSIONS = frozenset(
    {".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".html", ".css", ".sql"}
)
TEXT_NAMES = frozenset({"Makefile", "Dockerfile", "README", "CHANGES", "LICENSE"})

_SECRET_NAME = re.compile(
    r"(^\.env(\..*)?$|^\.netrc$|^\.pypirc$|^id_(rsa|dsa|ecdsa|ed25519)$|\.(pem|key|p12|pfx|jks|keystore)$"
    r"|^credentials(\..*)?$|^secrets?\.(json|ya?ml|toml|env|txt)$|^service[-_]account.*\.json$)",
    re.IGNORECASE,
)


def language_for(path: str) -> str | None:
    """The language of ``path`` (None for a file indexed as plain text)."""
    return LANGUAGES.get(os.path.splitext(path)[1].lower())


def _indexable_name(name: str) -> bool:
    ext = os.path.splitext(name)[1].lower()
    return ext in LANGUAGES or ext in TEXT_EXTENSIONS or name in TEXT_NAMES


def decode_source(data: bytes) -> tuple[str, str]:
    """Decode file bytes: UTF-8 (with or without BOM), else Latin-1, which never fails."""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


@dataclass(frozen=True)
class SourceFile:
    """One file to index: its path relative to the root (POSIX separators) and its decoded text."""

    path: str
    text: str
    encoding: str
    size: int
    language: str | None


@dataclass
class Discovery:
    """What a walk found: the files to index and, per reason, what it skipped."""

    root: str
    files: list[SourceFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_paths: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, reason: str, path: str) -> None:
        self.skipped[reason] += 1
        self.skipped_paths.setdefault(reason, []).append(path)


class _Ignore:
    """The .gitignore rules that apply below one folder (nested files add to their parents')."""

    def __init__(self) -> None:
        try:
            import pathspec
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingDependencyError("pathspec", "code") from exc
        self._pathspec = pathspec
        self.specs: list[tuple[str, object]] = []

    def extended(self, rel_dir: str, abs_dir: str) -> _Ignore:
        gi = os.path.join(abs_dir, ".gitignore")
        if not os.path.isfile(gi):
            return self
        try:
            with open(gi, "rb") as fh:
                lines = decode_source(fh.read())[0].splitlines()
        except OSError:
            return self
        new = _Ignore.__new__(_Ignore)
        new._pathspec = self._pathspec
        new.specs = [*self.specs, (rel_dir, self._pathspec.GitIgnoreSpec.from_lines(lines))]
        return new

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        for base, spec in self.specs:
            sub = rel_path[len(base) + 1 :] if base else rel_path
            if base and not rel_path.startswith(base + "/"):
                continue
            if spec.match_file(sub + "/" if is_dir else sub):  # type: ignore[attr-defined]
                return True
        return False


def discover(root: str | os.PathLike[str], *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Discovery:
    """Walk ``root`` and return the files to index, sorted by path, with skip counts by reason."""
    root_path = Path(root)
    if not root_path.is_dir():
        raise ConfigError(f"not a directory: {root}")
    real_root = os.path.realpath(root_path)
    result = Discovery(root=str(root_path))
    visited: set[tuple[int, int]] = set()
    _walk(real_root, "", real_root, _Ignore().extended("", real_root), visited, result, max_file_bytes)
    result.files.sort(key=lambda f: f.path)
    return result


def _inside(real_root: str, target: str) -> bool:
    return target == real_root or target.startswith(real_root.rstrip(os.sep) + os.sep)


def _walk(
    abs_dir: str,
    rel_dir: str,
    real_root: str,
    ignore: _Ignore,
    visited: set[tuple[int, int]],
    result: Discovery,
    cap: int,
) -> None:
    try:
        st = os.stat(abs_dir)
    except OSError:
        result.skip("unreadable", rel_dir or ".")
        return
    key = (st.st_dev, st.st_ino)
    if key in visited:
        result.skip("loop", rel_dir)
        return
    visited.add(key)
    try:
        entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except OSError:
        result.skip("unreadable", rel_dir or ".")
        return
    for entry in entries:
        name = entry.name
        rel = f"{rel_dir}/{name}" if rel_dir else name
        try:
            is_link = entry.is_symlink()
            if is_link:
                target = os.path.realpath(entry.path)
                if not os.path.exists(target):
                    result.skip("dangling_link", rel)
                    continue
                if not _inside(real_root, target):
                    result.skip("link_outside", rel)
                    continue
                st_entry = os.stat(entry.path)
            else:
                st_entry = entry.stat(follow_symlinks=False)
        except OSError as exc:
            # ELOOP: a link that points at itself or a cycle of links
            result.skip("loop" if getattr(exc, "errno", None) == 40 else "unreadable", rel)
            continue
        if stat.S_ISDIR(st_entry.st_mode):
            if name.startswith(".") or name in BUILD_DIRS or name.endswith(".egg-info"):
                result.skip("excluded_dir", rel)
                continue
            if ignore.ignored(rel, True):
                result.skip("gitignored", rel)
                continue
            if is_link:
                # a link to a folder inside the repository: an ancestor is a loop; anything else is the
                # same files under a second name, walked (if at all) under their own path
                real = os.path.realpath(entry.path)
                ancestor = _inside(real, os.path.realpath(abs_dir))
                result.skip("loop" if ancestor else "dir_link", rel)
                continue
            _walk(entry.path, rel, real_root, ignore.extended(rel, entry.path), visited, result, cap)
            continue
        if not stat.S_ISREG(st_entry.st_mode):
            result.skip("not_regular", rel)
            continue
        if _SECRET_NAME.search(name):
            result.skip("secret", rel)
            continue
        if not _indexable_name(name):
            result.skip("not_code", rel)
            continue
        if name.startswith("."):
            result.skip("hidden", rel)
            continue
        if ignore.ignored(rel, False):
            result.skip("gitignored", rel)
            continue
        if st_entry.st_size > cap:
            result.skip("too_large", rel)
            continue
        try:
            with open(entry.path, "rb") as fh:
                data = fh.read(cap + 1)
        except OSError:
            result.skip("unreadable", rel)
            continue
        if len(data) > cap:  # grew since stat
            result.skip("too_large", rel)
            continue
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            result.skip("binary", rel)
            continue
        if b"\x00" in data:
            result.skip("binary_late_nul", rel)
            continue
        text, encoding = decode_source(data)
        result.files.append(
            SourceFile(path=rel, text=text, encoding=encoding, size=len(data), language=language_for(name))
        )
