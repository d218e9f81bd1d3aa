"""`assay eval agent --profile DIR`: the reference agent runs with that profile folder (a tool without its
description is not offered), the folder is recorded in the subject config, and a bad one is refused by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.agents.reference._profile import DEFAULT_PROFILE
from assay.cli import main

SCENARIOS = Path(__file__).resolve().parents[4] / "eval" / "scenarios"


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_the_profile_folder_is_the_one_run_and_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "profile"
    shutil.copytree(DEFAULT_PROFILE, profile)
    (profile / "tools" / "query_documents.md").unlink()
    argv = ["eval", "agent", "--suite", "pr", "--scenarios", str(SCENARIOS), "--scenario", "dqa-quarterly-revenue",
            "--profile", str(profile), "--out", str(tmp_path / "run")]  # fmt: skip
    code, _, err = _cli(argv, capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["config"]["extra"]["profile"] == str(profile)
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    calls = [c for t in record["details"]["turns"] for m in t["messages"] for c in m["tool_calls"]]
    assert calls and all(
        c["status"] == "not_offered" and "unknown tool" in c["result_summary"] for c in calls
    )


def test_a_bad_profile_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = [
        "eval",
        "agent",
        "--suite",
        "pr",
        "--scenarios",
        str(SCENARIOS),
        "--scenario",
        "dqa-quarterly-revenue",
    ]
    code, _, err = _cli(
        [*base, "--profile", str(tmp_path / "missing"), "--out", str(tmp_path / "r1")], capsys
    )
    assert code == 1 and "--profile" in err and "missing" in err
