"""The reference agent as fixer (`--fixer reference --fixer-model M`): it edits the copy of the profile with its
file tools, and the loop takes that edit. Here M is a scripted model that restores the removed description."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import yaml

from assay.cli import main

if TYPE_CHECKING:
    from conftest import Climb


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_the_reference_fixer_edits_through_its_tools(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    c = small_climb
    script = c.root / "fixer-model.yaml"
    args = {"path": "tools/query_documents.md", "content": c.description}
    script.write_text(
        yaml.safe_dump(
            {
                "replies": [
                    {"tool_calls": [{"name": "list_files", "arguments": {}}]},
                    {"tool_calls": [{"name": "write_file", "arguments": args}]},
                    {"text": "Described the document search tool again, so it is offered."},
                ]
            }
        )
    )
    argv = ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", "reference", "--fixer-model", f"scripted/{script}", "--out", str(c.out), "--rounds", "1"]  # fmt: skip
    code, _, err = _cli(argv, capsys)
    assert code == 0, err
    h = json.loads((c.out / "fix_history.json").read_text())
    r = h["rounds"][0]
    assert r["outcome"] == "kept" and r["fixer_answer"].startswith("Described the document search tool")
    assert r["touched"] == ["profile/tools/query_documents.md"]
    assert r["cost"]["fixer"]["calls"] == 3
    assert (c.profile / "tools" / "query_documents.md").read_text() == c.description


def test_the_reference_fixer_needs_a_model(small_climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    c = small_climb
    argv = ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", "reference", "--out", str(c.out)]  # fmt: skip
    code, _, err = _cli(argv, capsys)
    assert code == 1 and "--fixer reference needs --fixer-model" in err
    assert c.git("branch", "--show-current").strip() == "main"
