from pathlib import Path

import toybox


def test_changelog_names_this_version():
    changelog = (Path(__file__).resolve().parent.parent / "CHANGELOG.md").read_text()
    assert f"## {toybox.__version__}" in changelog
