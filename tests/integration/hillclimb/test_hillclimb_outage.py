"""An outage behind the fixer stops the loop (exit 3, the resume command); --resume finishes the round."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from assay.cli import main

if TYPE_CHECKING:
    from conftest import Climb


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _args(c: Climb, fixer: str, rounds: int) -> list[str]:
    return ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", fixer, "--out", str(c.out), "--rounds", str(rounds)]  # fmt: skip


FLAKY_FIXER = """
import pathlib

def fix(workdir, **_):
    state = pathlib.Path(__file__).with_name("calls")
    n = int(state.read_text()) if state.exists() else 0
    state.write_text(str(n + 1))
    if n == 0:
        return {"answer": "", "infra_error": "the fixer's model server is down"}
    (pathlib.Path(workdir) / "tools" / "query_documents.md").write_text(DESCRIPTION)
    return "restored the document search tool's description"
"""


def test_an_outage_stops_with_exit_3_and_resumes(
    small_climb: Climb, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    c = small_climb
    module = c.root / "mods" / "flaky_fixer.py"
    module.parent.mkdir()
    module.write_text(FLAKY_FIXER + f"\nDESCRIPTION = {c.description!r}\n")
    monkeypatch.syspath_prepend(str(module.parent))
    code, _, err = _cli(_args(c, "python:flaky_fixer:fix", 1), capsys)
    assert code == 3 and "model server is down" in err and f"assay hillclimb --resume {c.out}" in err
    h = json.loads((c.out / "fix_history.json").read_text())
    assert h["status"] == "stopped" and h["rounds"][0]["phase"] == "fixing"
    code, _, err = _cli(["hillclimb", "--resume", str(c.out)], capsys)
    assert code == 0, err
    h = json.loads((c.out / "fix_history.json").read_text())
    assert [r["outcome"] for r in h["rounds"]] == ["kept"] and h["status"] == "finished"
