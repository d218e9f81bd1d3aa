"""`assay hillclimb --suite pr` end to end with a scripted fixer on a profile whose query_documents description
was removed (see conftest): four rounds, one of each outcome, then the stop on two flat rounds.

Six scenarios (conftest.MEDIUM); split (salt hillclimb-1): held-out dqa-quarterly-revenue, tc-grep-timeout-config.

1. restore the description and remove grep's: train improves, held-out's grep scenario regresses -> reverted
2. restore the description: both splits improve -> kept (committed)
3. a sentence naming a train scenario -> rejected by the code check, never measured
4. a sentence that changes nothing -> reverted (train did not improve); two flat rounds -> stop and rollup
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from assay.cli import main

if TYPE_CHECKING:
    from conftest import Climb


HELDOUT = ["dqa-quarterly-revenue", "tc-grep-timeout-config"]


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _args(c: Climb, fixer: str, *extra: str) -> list[str]:
    return ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", fixer, "--out", str(c.out), "--rounds", "6", *extra]  # fmt: skip


def test_four_rounds_kept_rejected_reverted_then_stop(
    medium_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    climb = medium_climb
    fixer = climb.fixer(
        [
            [climb.restore(), "remove:tools/grep.md"],
            [climb.restore()],
            ["append:When the user asks about dqa-refund-window-member, look harder."],
            ["append:Answer in plain words."],
        ]
    )
    code, out, err = _cli(_args(climb, fixer), capsys)
    assert code == 0, err
    assert "Remaining failures" in out and str(climb.out) in out
    h = json.loads((climb.out / "fix_history.json").read_text())
    assert h["split"]["heldout"] == HELDOUT and h["split"]["salt"] == "hillclimb-1"
    assert (
        h["branch"].startswith("hillclimb/") and climb.git("branch", "--show-current").strip() == h["branch"]
    )
    outcomes = [(r["outcome"], r["reason"]) for r in h["rounds"]]
    assert [o for o, _ in outcomes] == ["reverted", "kept", "rejected", "reverted"]
    assert outcomes[0][1].startswith("held-out regressed")
    assert h["rounds"][0]["heldout_verdict"]["regressed"] == ["tc-grep-timeout-config"]
    assert "names scenario 'dqa-refund-window-member'" in outcomes[2][1]
    assert h["rounds"][2]["train_after"] is None  # rejected in code: never measured
    assert outcomes[3][1].startswith("train did not improve")
    assert h["stop_reason"].startswith("2 flat rounds")

    kept = h["rounds"][1]
    assert "+++ b/profile/tools/query_documents.md" in kept["diff"]
    assert kept["train_after"]["pass_rate"] > kept["train_before"]["pass_rate"]
    assert kept["heldout_after"]["pass_rate"] > kept["heldout_before"]["pass_rate"]
    assert kept["train_before"]["low"] is not None and kept["train_after"]["high"] is not None
    assert {"fixer", "agent", "judge", "simulator"} <= set(kept["cost"])
    # the kept edit is the one commit on the branch; the reverted and rejected ones left nothing behind
    assert climb.git("log", "--format=%s", "main..HEAD").strip().startswith("hillclimb round 2")
    assert climb.git("status", "--porcelain").strip() == ""
    assert (climb.profile / "tools" / "query_documents.md").is_file() and (
        climb.profile / "tools" / "grep.md"
    ).is_file()
    assert "dqa-refund" not in (climb.profile / "system.md").read_text()

    assert h["train_gain"] > 0 and h["heldout_gain"] > 0 and h["overfitting"] is False
    # what still fails, by category and failing dimension (the scripted agent answers these wrong)
    assert "dqa-handbook-deprecation-notice" in h["rollup"]["document_qa"]["check:number"]
    assert set(h["rollup"]) == {"document_qa"}  # both tool-choice scenarios pass once their tools are offered
    report = (climb.out / "report.md").read_text()
    assert "| train |" in report and "| held-out |" in report and "Remaining failures" in report

    # the fixer saw train failures only: no scenario id, no held-out conversation, no expected value
    from assay.evals.agent.scenario_load import load_scenarios

    scenarios = {s.id: s for s in load_scenarios(climb.scenarios)}
    for n in (1, 2, 3, 4):
        prompt = (climb.out / f"round-{n}" / "fixer-prompt.md").read_text()
        assert not [sid for sid in scenarios if sid in prompt]
        for sid in HELDOUT:
            for t in scenarios[sid].turns:
                assert t.user_message not in prompt
        assert "expected 90" not in prompt and "withheld" in prompt
