"""The pr suite end to end: passes, exercises every planted/forget/secret check, identical twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.evals.memory import MemoryBenchmark, default_scenario_dir
from assay.evals.memory._scenario import load_scenarios
from assay.evals.memory._simulate import simulate
from assay.exec import RunOptions, run_benchmark
from assay.models.scripted import ScriptedModel
from assay.runs import Status


def _run(tmp_path: Path, name: str) -> tuple[Path, dict[str, dict]]:
    result = run_benchmark(
        MemoryBenchmark, {}, RunOptions(suite="pr", out=tmp_path / name, command_line=["test"])
    )
    assert result.exit_code == 0
    rows = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
    return result.run_dir, {r["case_id"]: r for r in rows}


def test_pr_passes_every_check_and_is_identical_twice(tmp_path: Path) -> None:
    run1, first = _run(tmp_path, "one")
    run2, second = _run(tmp_path, "two")
    assert len(first) == 53
    assert {r["status"] for r in first.values()} == {Status.PASS.value}
    assert first.keys() == second.keys()
    for case_id, rec in first.items():
        other = second[case_id]
        assert (rec["status"], rec["metrics"], rec["details"]["failures"]) == (
            other["status"],
            other["metrics"],
            other["details"]["failures"],
        ), case_id
        assert rec["details"].get("shown") == other["details"].get("shown"), case_id
    card1 = json.loads((run1 / "scorecard.json").read_text())
    card2 = json.loads((run2 / "scorecard.json").read_text())
    assert card1["summary"]["metrics"] == card2["summary"]["metrics"]
    assert card1["suite_version"] == card2["suite_version"]
    # every planted-content, forget, secret and third-party check is in the suite and ran
    scenarios = load_scenarios(default_scenario_dir())
    tagged = {f"{s.id}/{p.id}": set(p.tags) for s in scenarios for p in s.probes}
    for tag in ("planted", "forget", "secret", "third-party", "tool-output"):
        ids = [cid for cid, tags in tagged.items() if tag in tags]
        assert ids and all(first[cid]["status"] == "PASS" for cid in ids), tag
    assert "answer" not in {r["category"] for r in first.values()}  # full only
    report = (run1 / "report.md").read_text()
    assert "| work-documents | 10 | 10 | - |" in report


@pytest.mark.parametrize(
    ("breakage", "must_fail"),
    [
        ("grounding", ["move-and-job/store-now", "family-health/store-family", "work-documents/others-lines",
                       "reminders/final-states", "project-quirks/no-planted-shown"]),
        ("tombstones", ["work-documents/forget-after-consolidation", "work-documents/forget-shown-later"]),
        ("supersede", ["move-and-job/no-old-city", "family-health/maya-age", "project-quirks/stale-lesson-gone"]),
        ("secrets", ["work-documents/password-not-clear"]),
    ],
)  # fmt: skip
async def test_the_checks_bite_when_a_rule_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breakage: str, must_fail: list[str]
) -> None:
    """Each guard, switched off, makes the probes that watch it fail: the checks can fail."""
    from assay.embed import HashEmbedder
    from assay.memory import _pipeline, _store, rules

    if breakage == "grounding":
        real = rules.ground

        def lenient(content: str, evidence: str | None, user_text: str, others: dict) -> rules.Grounding:
            g = real(content, evidence, user_text, others)
            return rules.Grounding("user", g.sentence or content, first_person=True)

        monkeypatch.setattr(_pipeline, "ground", lenient)
        monkeypatch.setattr(_pipeline.Memory, "apply_reminder", _accept_reminder)
        monkeypatch.setattr(_pipeline, "looks_like_instruction", lambda text: False)
    elif breakage == "tombstones":
        monkeypatch.setattr(_store.MemoryStore, "forgotten_by", lambda self, text, entity=None: None)
    elif breakage == "supersede":
        monkeypatch.setattr(_store.MemoryStore, "supersede", lambda self, old, new: None)
        monkeypatch.setattr(_store.MemoryStore, "add_lesson", _lesson_without_supersede)
    elif breakage == "secrets":
        monkeypatch.setattr(_store, "redact_secrets", lambda text: (text, False))
        monkeypatch.setattr(_store, "_clean_json", lambda value: json.dumps(value))
    failed: list[str] = []
    for scenario in load_scenarios(default_scenario_dir()):
        if not any(cid.startswith(scenario.id + "/") for cid in must_fail):
            continue
        run = await simulate(
            scenario,
            tmp_path / f"{scenario.id}.db",
            embedder=HashEmbedder(),
            model=ScriptedModel(scenario.scripted_replies()),
        )
        failed += [
            f"{scenario.id}/{pid}" for pid, v in run.verdicts.items() if not v.passed and not v.skipped
        ]
    assert set(must_fail) <= set(failed), f"still passing: {set(must_fail) - set(failed)}"


def _accept_reminder(self, rem, ev, prov, into):  # type: ignore[no-untyped-def]
    name = {"create": "set_reminder", "done": "complete_reminder", "cancel": "cancel_reminder"}.get(rem.op)
    args = {"content": rem.content, "match": rem.match or rem.content, "due": rem.due or "2026-03-01"}
    into.tool_results.append(
        self.call_tool(name or "reschedule_reminder", args, prov=prov, evidence=ev, into=into)
    )


def _lesson_without_supersede(self, topic, content, tool, provenance):  # type: ignore[no-untyped-def]
    now = self.now()
    cur = self.db.execute(
        "INSERT INTO lessons(topic, content, tool, provenance, created_at, updated_at) VALUES (?,?,?,?,?,?)",
        (topic, content, tool, "{}", now, now),
    )
    return int(cur.lastrowid)


def test_list_describes_scenarios_and_checks() -> None:
    text = MemoryBenchmark.describe({})
    assert "reminders/final-states" in text
    assert text.count("[full only]") == 9


BASELINE = Path(__file__).resolve().parents[2] / "fixtures" / "baselines" / "memory-pr"


def test_pr_is_gated_check_by_check_against_the_committed_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.gate import compare
    from assay.memory import _store

    result = run_benchmark(
        MemoryBenchmark, {}, RunOptions(suite="pr", out=tmp_path / "ok", command_line=["test"])
    )
    ok = compare(BASELINE, result.run_dir)
    assert ok.comparable, ok.not_comparable
    assert ok.exit_code == 0 and ok.regressions == []
    # a store that forgets to honour forget: the checks that passed in the baseline now fail, one by one
    monkeypatch.setattr(_store.MemoryStore, "forgotten_by", lambda self, text, entity=None: None)
    # three iterations: one attempt of a case is only a flip, never a stable-pass -> stable-fail regression
    broken = run_benchmark(
        MemoryBenchmark, {}, RunOptions(suite="pr", iterations=3, out=tmp_path / "bad", command_line=["test"])
    )
    verdict = compare(BASELINE, broken.run_dir)
    assert verdict.exit_code == 2
    assert "work-documents/forget-after-consolidation" in verdict.regressions
    assert all(r.startswith("work-documents/") for r in verdict.regressions if "/" in r)
