"""read_json_file: a user's JSON file is parsed, or one ConfigError names the file (and the line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._util import read_json_file
from assay.errors import ConfigError


def test_a_good_file_is_parsed(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text('{"a": [1, 2]}\n', encoding="utf-8")
    assert read_json_file(f, missing="no such thing") == {"a": [1, 2]}


def test_malformed_json_names_the_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('[\n  {"a": 1},\n  {"a": }\n]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_json_file(f)
    assert str(err.value).startswith(f"{f}:3: invalid JSON: ")
    assert (err.value.path, err.value.line) == (str(f), 3)


def test_a_missing_file_says_what_was_expected(tmp_path: Path) -> None:
    f = tmp_path / "gone.json"
    with pytest.raises(ConfigError, match=r"gone\.json: LoCoMo file not found"):
        read_json_file(f, missing="LoCoMo file not found")
    with pytest.raises(ConfigError, match=r"gone\.json: cannot read: No such file"):
        read_json_file(f)


def test_a_folder_is_not_read_as_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        read_json_file(tmp_path, missing="not found")
    with pytest.raises(ConfigError, match="cannot read: Is a directory"):
        read_json_file(tmp_path)
