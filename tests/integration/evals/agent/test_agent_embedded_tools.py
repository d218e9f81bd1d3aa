"""The embedded model uses tools on the default path: `eval agent --suite full --model local/smollm2` on shipped
documents and shell scenarios records tool calls (its answers are weak; they are not what is checked here).

The simulator and the judge are scripted (they are not under test); the agent is the reference agent on the real
SmolLM2 through the gateway, with few steps and short answers to keep the run short.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assay.evals.agent import AgentBenchmark
from assay.exec import RunOptions, run_benchmark

pytestmark = [pytest.mark.slow, pytest.mark.local_model]

DOCUMENTS = ["dqa-runbook-sev1-escalation", "nid-runbook-vendor-phone"]
SHELL = ["tc-count-orders-shell", "err-typo-path-retry"]
JUDGE = {
    "turns": [{"turn": 1, "scores": dict.fromkeys(
        ("correctness", "completeness", "tool_use", "honesty", "persona_constraints"), 2)}],
    "verdict": "FAIL",
    "reason": "scripted: not under test here",
}  # fmt: skip


def test_the_embedded_model_calls_tools_in_most_documents_and_shell_scenarios(tmp_path: Path) -> None:
    (tmp_path / "simulator.yaml").write_text(yaml.safe_dump({"default": {"text": "<<NEXT>>"}}))
    (tmp_path / "judge.yaml").write_text(yaml.safe_dump({"default": {"text": json.dumps(JUDGE)}}))
    options = {
        "scenario": ",".join(DOCUMENTS + SHELL),
        "model": "local/smollm2",
        "simulator_model": f"scripted/{tmp_path / 'simulator.yaml'}",
        "judge_model": f"scripted/{tmp_path / 'judge.yaml'}",
        "max_steps": 2,
        "max_user_messages": 1,
        "agent_max_tokens": 48,
    }
    result = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", out=tmp_path / "r", command_line=["t"])
    )
    rows = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
    called: dict[str, list[str]] = {}
    for row in rows:
        turns = row["details"]["turns"]
        called[row["case_id"]] = [c["name"] for t in turns for m in t["messages"] for c in m["tool_calls"]]
    assert sorted(called) == sorted(DOCUMENTS + SHELL), rows
    with_calls = [case for case, names in called.items() if names]
    assert len(with_calls) >= 3, called  # most of them: the model chooses, and it is weak
    # a call names an offered tool (the grammar holds it to the names; its arguments, held to the tool's schema,
    # can still be cut by the 48-token cap: test_models_llama_server checks they parse)
    offered = {"query_documents", "run_shell", "list_files", "read_file", "grep", "search_code", "run_tests",
               "write_file", "edit_file"}  # fmt: skip
    assert {n for names in called.values() for n in names} <= offered
