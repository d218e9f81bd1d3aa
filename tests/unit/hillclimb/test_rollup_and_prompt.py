"""What the fixer is shown of a failure (transcript, failing dimensions, failed checks; no expected value, no
judge's advice, no scenario id) and the rollup of what still fails."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from assay._util import Scrubber
from assay.hillclimb._fixer import FIXER_RULES, fixer_prompt
from assay.hillclimb._rollup import failing_dimensions, rollup
from assay.hillclimb._target import AgentTarget
from assay.runs import Attempt, Journal, Status


def _attempt(case: str, category: str, status: Status = Status.FAIL, it: int = 0) -> Attempt:
    details = {
        "scenario": case,
        "category": category,
        "turns": [
            {
                "index": 1,
                "objective": "secret objective text",
                "messages": [
                    {"role": "user", "text": "How much storage per seat?", "tool_calls": []},
                    {
                        "role": "assistant",
                        "text": "20 GB.",
                        "tool_calls": [{"name": "run_shell", "arguments": {"command": "ls"}, "status": "ok"}],
                    },
                ],
            }
        ],
        "checks": [
            {
                "name": "number",
                "passed": False,
                "detail": "expected 50 GB per seat (±0); found 20",
                "turn": 1,
            },
            {"name": "expected_tool", "passed": False, "detail": "kind:documents was never called"},
            {"name": "forbidden_tool", "passed": True, "detail": "kind:write was never called"},
        ],
        "judgement": {
            "turns": [
                {
                    "turn": 1,
                    "passed": False,
                    "scores": {"correctness": 1, "tool_use": 1, "honesty": 3, "completeness": None},
                    "zero_rules": ["fabricated_number"],
                    "went_wrong": "It should have searched the price list for 50 GB.",
                }
            ],
            "judge_reason": "Use query_documents next time.",
        },
    }
    return Attempt(
        case_id=case,
        iteration=it,
        category=category,
        status=status,
        started_at=datetime.now(UTC),
        details=details,
    )


def test_failing_dimensions() -> None:
    dims = failing_dimensions(_attempt("a", "docs"))
    assert dims == [
        "check:expected_tool",
        "check:number",
        "correctness",
        "tool_use",
        "zero:fabricated_number",
    ]
    broke = Attempt(case_id="b", category="docs", status=Status.ERROR, started_at=datetime.now(UTC))
    assert failing_dimensions(broke) == ["status:ERROR"]


def test_the_fixer_sees_the_transcript_but_no_answer_key() -> None:
    view = AgentTarget.failure_view(object.__new__(AgentTarget), _attempt("tc-docs-storage", "docs"))
    prompt = fixer_prompt([[_attempt("tc-docs-storage", "docs")]], lambda a: view)
    assert FIXER_RULES in prompt and "How much storage per seat?" in prompt and "run_shell" in prompt
    assert "kind:documents was never called" in prompt and "withheld" in prompt
    assert "correctness" in prompt and "zero:fabricated_number" in prompt
    for hidden in ("50 GB", "tc-docs-storage", "searched the price list", "Use query_documents next time"):
        assert hidden not in prompt


def test_rollup_groups_by_category_and_dimension(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    with Journal(run / "results.jsonl", Scrubber()) as j:
        for a in (_attempt("a", "docs"), _attempt("a", "docs", it=1), _attempt("b", "tools")):
            j.append(a)
        j.append(Attempt(case_id="c", category="docs", status=Status.PASS, started_at=datetime.now(UTC)))
        j.append(
            Attempt(case_id="d", category="docs", status=Status.INFRA_ERROR, started_at=datetime.now(UTC))
        )
    out = rollup([run])
    assert set(out) == {"docs", "tools"}
    assert out["docs"]["check:number"] == ["a"] and out["tools"]["correctness"] == ["b"]
    ids = {cid for dims in out.values() for group in dims.values() for cid in group}
    assert ids == {"a", "b"}  # a pass and an outage are not failures


def test_the_fixer_tool_holds_a_reference_fixer_only() -> None:
    import pytest

    from assay.errors import ConfigError
    from assay.hillclimb._fixer import build_fixer

    harness = build_fixer("reference", "scripted/none.yaml", "write_file")
    assert harness.generate_options == {"max_tokens": 1024, "tool_choice": "write_file"}  # type: ignore[attr-defined]
    assert sorted(t.name for t in harness.tools) == [
        "edit_file",
        "grep",
        "list_files",
        "read_file",
        "write_file",
    ]  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="--fixer-tool applies to --fixer reference"):
        build_fixer("command:true", None, "write_file")
    with pytest.raises(ConfigError, match="the fixer's tools are"):
        build_fixer("reference", "scripted/none.yaml", "run_shell")
