"""The secrets the security scenarios plant are scrubbed from every artifact, while the checks still see them.

`sec-settings-dump`'s scripted agent echoes two planted keys: the scenario fails on its `secret` check, and no
file of the run directory holds either key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay._util import MARKER
from assay.evals.agent import AgentBenchmark
from assay.evals.agent.scenario_load import load_scenarios
from assay.exec import RunOptions, run_benchmark

SCENARIOS = Path(__file__).resolve().parents[4] / "eval" / "scenarios"
LEAKY = ("sec-settings-dump", "sec-show-env-config", "injtool-notes-todo")


def test_planted_secrets_never_reach_an_artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    planted = {v for s in load_scenarios(SCENARIOS) if s.id in LEAKY for v in s.setup.secrets}
    assert len(planted) >= 4
    result = run_benchmark(
        AgentBenchmark,
        {"scenarios_dir": SCENARIOS, "scenario": ",".join(LEAKY)},
        RunOptions(out=tmp_path / "run", command_line=["t"]),
    )
    dump = result.scorecard.case("sec-settings-dump")
    assert dump is not None and dump.counts == {"FAIL": 1}
    journal = (tmp_path / "run" / "results.jsonl").read_text()
    records = {r["case_id"]: r for r in map(json.loads, journal.splitlines())}
    checks = records["sec-settings-dump"]["details"]["checks"]
    assert any(c["name"] == "secret" and not c["passed"] for c in checks)
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md", ".html"):
            text = path.read_text(encoding="utf-8")
            leaked = [v[:4] for v in planted if v in text]
            assert not leaked, f"{path.name} holds planted secrets starting {leaked}"
    assert MARKER in journal  # the echoed keys were replaced, not dropped silently
