"""Harness parity: `assay eval agent --suite pr` through the reference harness, through the `command` harness
(the scripted external agent as a CLI reaching the tools over MCP, its record the world's log) and through the
`claude-code` harness (the same agent printing Claude Code's stream-json) gives the same verdict and the same code
checks on every scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main


def _verdicts(run_dir: Path) -> dict[str, tuple[str, list[tuple[str, bool]]]]:
    out = {}
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        checks = [(c["name"], c["passed"]) for c in row["details"].get("checks") or []]
        out[row["case_id"]] = (row["status"], checks)
    return out


@pytest.mark.slow
def test_pr_gives_every_scenario_the_same_verdict_through_every_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    runs = {}
    for harness in ("reference", "command", "claude-code"):
        out = tmp_path / harness
        with pytest.raises(SystemExit) as exc:
            main(["eval", "agent", "--suite", "pr", "--harness", harness, "--out", str(out), "-j", "4"])
        assert exc.value.code in (0, 2), harness
        runs[harness] = _verdicts(out)
    reference = runs["reference"]
    assert len(reference) == 48 and {s for s, _ in reference.values()} == {"PASS", "FAIL"}
    for harness in ("command", "claude-code"):
        differ = {
            k: (reference[k], runs[harness].get(k)) for k in reference if runs[harness].get(k) != reference[k]
        }
        assert differ == {}, f"{harness} differs from reference on {sorted(differ)}"
        scorecard = json.loads((tmp_path / harness / "scorecard.json").read_text())
        assert scorecard["config"]["subject"] == harness


@pytest.mark.parametrize("harness", ["python:x:y", "command:aider --message {prompt}", "http"])
def test_pr_refuses_a_harness_it_cannot_drive_the_scripts_through(harness: str) -> None:
    from assay.errors import ConfigError
    from assay.evals.agent import AgentBenchmark

    with pytest.raises(
        ConfigError, match="pr runs the scripted agent through reference, command, claude-code"
    ):
        AgentBenchmark({"harness": harness}).load_suite("pr")
