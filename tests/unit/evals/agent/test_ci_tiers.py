"""eval/ci_tiers.json covers the shipped suite: every scenario is in a tier or excluded with a reason, every id
it names is a scenario, full is everything outside backlog, and smoke is stable, security and honesty first."""

from __future__ import annotations

import pytest

from assay.evals.agent._scenario import Scenario
from assay.evals.agent.scenario_load import default_scenarios_dir, load_scenarios
from assay.evals.agent.tiers import Tiers, coverage_problems, load_tiers, tiers_path

#: categories smoke runs first: what must never regress (security), then honesty
SECURITY = ("security",)
HONESTY = ("not_in_documents", "injection_document", "injection_tool", "refusal")


@pytest.fixture(scope="module")
def suite() -> dict[str, Scenario]:
    return {s.id: s for s in load_scenarios(default_scenarios_dir())}


@pytest.fixture(scope="module")
def tiers() -> Tiers:
    return load_tiers(tiers_path(default_scenarios_dir()))


def test_every_scenario_is_in_a_tier_or_excluded_and_every_id_exists(
    suite: dict[str, Scenario], tiers: Tiers
) -> None:
    assert coverage_problems(tiers, suite) == []
    assert list(tiers.tiers) == ["smoke", "full", "backlog"]
    for sid, why in {**tiers.tiers["backlog"].reasons, **tiers.excluded}.items():
        assert len(why.split()) >= 5, f"{sid}: say why it is there, not just that it is"


def test_full_is_everything_outside_backlog_and_excluded(suite: dict[str, Scenario], tiers: Tiers) -> None:
    full, backlog = set(tiers.tiers["full"].scenarios), set(tiers.tiers["backlog"].scenarios)
    assert full == set(suite) - backlog - set(tiers.excluded)
    assert not full & backlog
    assert set(tiers.tiers["smoke"].scenarios) <= full


def test_backlog_holds_exactly_the_scenarios_scripted_to_fail(
    suite: dict[str, Scenario], tiers: Tiers
) -> None:
    # in pr a scenario "always fails" exactly when its scripted agent answers wrong on purpose
    scripted_wrong = {sid for sid, s in suite.items() if "scripted-wrong" in s.tags}
    assert set(tiers.tiers["backlog"].scenarios) == scripted_wrong


def test_smoke_is_stable_and_puts_security_then_honesty_first(
    suite: dict[str, Scenario], tiers: Tiers
) -> None:
    smoke = [suite[sid] for sid in tiers.tiers["smoke"].scenarios]
    assert all(s.script is not None and "scripted-wrong" not in s.tags for s in smoke)
    rank = [0 if s.category in SECURITY else 1 if s.category in HONESTY else 2 for s in smoke]
    assert rank == sorted(rank), [s.id for s in smoke]
    assert rank.count(0) >= 2 and rank.count(1) >= 4
    # every kind of code check runs in smoke: secrets, canaries, abstention, facts/numbers, tools, memory
    assert any(s.setup.secrets for s in smoke) and any(s.setup.canaries for s in smoke)
    assert any(t.expects_abstention for s in smoke for t in s.turns)
    assert any(t.ground_truth and t.ground_truth.numbers for s in smoke for t in s.turns)
    assert any(s.expected_tools for s in smoke) and any(s.forbidden_tools for s in smoke)
    assert any(s.setup.memory and any(t.new_session for t in s.turns) for s in smoke)
    assert len(smoke) < len(suite) / 2
