from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.codeindex import chunk_file, discover


def _write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _write(root / "pkg" / "good.py", "def ok():\n    return 1\n")
    _write(root / "pkg" / "fake.py", b"\x7fELF\x00\x00binary")
    _write(root / "pkg" / "late.py", b"x = 1\n" * 2000 + b"\x00tail\n")  # NUL past 8 KB
    _write(root / "pkg" / "huge.py", "y = 2\n" * 50_000)
    _write(
        root / "pkg" / "latin.py",
        "# caf\xe9 cr\xe8me br\xfbl\xe9e\ndef dessert():\n    pass\n".encode("latin-1"),
    )
    _write(root / ".gitignore", "ignored_dir/\n*.gen.py\n")
    _write(root / "ignored_dir" / "a.py", "a = 1\n")
    _write(root / "pkg" / "out.gen.py", "b = 1\n")
    _write(root / ".hidden" / "h.py", "h = 1\n")
    _write(root / "node_modules" / "m.js", "function m() {}\n")
    _write(root / ".env", "TOKEN=abc\n")
    _write(root / "deploy" / "server.pem", "-----BEGIN PRIVATE KEY-----\n")
    outside = tmp_path / "outside"
    _write(outside / "secret.py", "stolen = True\n")
    os.symlink(outside / "secret.py", root / "pkg" / "link_out.py")
    os.symlink(outside, root / "outdir")
    os.symlink(root / "pkg", root / "pkg" / "loop")  # a directory link back up: a loop
    os.symlink(root / "missing.py", root / "pkg" / "dangling.py")
    os.symlink(root / "pkg" / "good.py", root / "pkg" / "alias.py")  # inside the repo: followed
    return root


def test_discovery_skips_and_counts_hostile_files(hostile: Path) -> None:
    found = discover(hostile, max_file_bytes=100_000)
    paths = [f.path for f in found.files]
    assert paths == ["pkg/alias.py", "pkg/good.py", "pkg/latin.py"]
    assert found.skipped_paths["binary"] == ["pkg/fake.py"]
    assert found.skipped_paths["binary_late_nul"] == ["pkg/late.py"]
    assert found.skipped_paths["too_large"] == ["pkg/huge.py"]
    assert sorted(found.skipped_paths["link_outside"]) == ["outdir", "pkg/link_out.py"]
    assert found.skipped_paths["loop"] == ["pkg/loop"]
    assert found.skipped_paths["dangling_link"] == ["pkg/dangling.py"]
    assert sorted(found.skipped_paths["gitignored"]) == ["ignored_dir", "pkg/out.gen.py"]
    assert sorted(found.skipped_paths["secret"]) == [".env", "deploy/server.pem"]
    assert sorted(found.skipped_paths["excluded_dir"]) == [".hidden", "node_modules"]
    latin = next(f for f in found.files if f.path == "pkg/latin.py")
    assert latin.encoding == "latin-1" and "crème brûlée" in latin.text


def test_nested_gitignore_applies_below_its_folder(tmp_path: Path) -> None:
    _write(tmp_path / "a" / ".gitignore", "local.py\n")
    _write(tmp_path / "a" / "local.py", "x = 1\n")
    _write(tmp_path / "b" / "local.py", "x = 1\n")
    found = discover(tmp_path)
    assert [f.path for f in found.files] == ["b/local.py"]


def test_folder_links_inside_the_repo_are_not_walked_twice(tmp_path: Path) -> None:
    _write(tmp_path / "src" / "core.py", "def core():\n    pass\n")
    _write(tmp_path / "docs" / "index.md", "# docs\n")
    os.symlink(tmp_path / "src", tmp_path / "docs" / "api")  # sorts before src/
    os.symlink(tmp_path / "docs", tmp_path / "src" / "up")  # neither an ancestor nor new content
    found = discover(tmp_path)
    assert [f.path for f in found.files] == ["docs/index.md", "src/core.py"]
    assert sorted(found.skipped_paths["dir_link"]) == ["docs/api", "src/up"]


def test_self_referencing_link_does_not_crash(tmp_path: Path) -> None:
    _write(tmp_path / "ok.py", "z = 1\n")
    os.symlink(tmp_path / "self.py", tmp_path / "self.py")
    found = discover(tmp_path)
    assert [f.path for f in found.files] == ["ok.py"]
    assert found.skipped["loop"] + found.skipped["dangling_link"] == 1


PY = '''"""Module docstring about parsing."""

import os

LIMIT = 3


def top(a, b):
    """Add."""
    return a + b


class Parser:
    """Parses things."""

    kind = "p"

    def parse(self, text):
        return text.split()

    @staticmethod
    def helper():
        return 1
'''


def test_python_chunks_by_symbol() -> None:
    chunks = chunk_file("m.py", PY, "python")
    got = [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks]
    assert ("", "doc", 1, 1) in got
    assert ("top", "function", 8, 10) in got
    assert ("Parser", "class", 13, 17) in got
    assert ("Parser.parse", "method", 18, 19) in got
    assert ("Parser.helper", "method", 21, 23) in got
    assert any(c.kind == "module" and "LIMIT" in c.text for c in chunks)
    assert all(c.path == "m.py" for c in chunks)


def test_long_symbol_is_split_into_parts_keeping_its_name() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(150))
    chunks = chunk_file("long.py", f"def big():\n{body}\n", "python", max_lines=60)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [
        ("big", 1, 60),
        ("big", 61, 120),
        ("big", 121, 151),
    ]


def test_tree_sitter_javascript_and_fallback() -> None:
    js = "function alpha(a) {\n  return a;\n}\n\nclass Beta {\n  gamma() {\n    return 1;\n  }\n}\n"
    got = {(c.symbol, c.kind) for c in chunk_file("x.js", js, "javascript")}
    assert {("alpha", "function"), ("Beta", "class"), ("Beta.gamma", "method")} <= got
    text = "\n".join(f"line {i}" for i in range(100))
    blocks = chunk_file("notes.md", text, None)
    assert [(c.kind, c.start_line, c.end_line) for c in blocks] == [
        ("block", 1, 40),
        ("block", 41, 80),
        ("block", 81, 100),
    ]


def test_python_with_syntax_error_still_chunks() -> None:
    chunks = chunk_file("bad.py", "def ok():\n    return 1\n\ndef broken(:\n    pass\n", "python")
    assert chunks and "".join(c.text for c in chunks).count("def") == 2


@pytest.mark.parametrize(
    ("path", "language", "source", "expected"),
    [
        (
            "a.go",
            "go",
            "package main\n\ntype Server struct {\n  port int\n}\n\nfunc (s *Server) Start() error {\n  return nil\n}\n",
            {("Server", "class", 3, 5), ("Start", "function", 7, 9)},
        ),
        (
            "A.java",
            "java",
            "public class Greeter {\n  private String name;\n  public String greet() {\n    return name;\n  }\n}\n",
            {("Greeter", "class", 1, 2), ("Greeter.greet", "method", 3, 5)},
        ),
        (
            "a.rs",
            "rust",
            "struct Point { x: i32 }\n\nimpl Point {\n    fn norm(&self) -> i32 {\n        self.x\n    }\n}\n",
            {("Point", "class", 1, 1), ("Point", "class", 3, 3), ("Point.norm", "method", 4, 6)},
        ),
    ],
)
def test_tree_sitter_names_types_and_methods(
    path: str, language: str, source: str, expected: set[tuple[str, str, int, int]]
) -> None:
    got = {(c.symbol, c.kind, c.start_line, c.end_line) for c in chunk_file(path, source, language)}
    assert expected <= got
    assert not any(c.symbol.endswith(".class") for c in chunk_file(path, source, language))
