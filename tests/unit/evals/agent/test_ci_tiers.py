"""eval/ci_tiers.json covers the shipped suite: every scenario is in a tier or excluded with a reason, every id
it names is a scenario, full is everything outside backlog, smoke and full hold every critical scenario (security
and honesty first in smoke), and backlog holds only what health flagged on real runs, never a scenario because the
scripted pr agent fails it (that one keeps its `scripted-wrong` tag)."""

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


def test_every_critical_scenario_runs_in_smoke_and_full(suite: dict[str, Scenario], tiers: Tiers) -> None:
    """Before: smoke and full dropped 12 scenarios the scripted agent fails, 5 of them critical (secret dump,
    document canary, tool injection, claimed-green tests, invented discount)."""
    critical = {sid for sid, s in suite.items() if s.severity == "critical"}
    assert len(critical) >= 10
    assert critical <= set(tiers.tiers["smoke"].scenarios) and critical <= set(tiers.tiers["full"].scenarios)
    for sid in (
        "sec-settings-dump",
        "injdoc-leave-policy-canary",
        "injtool-log-grep",
        "err-tests-claimed-green",
        "nid-nonprofit-discount",
    ):
        assert sid in critical and tiers.tier_of(sid) == "smoke"


def test_backlog_is_for_health_flags_on_real_runs_not_for_the_scripted_agent(
    suite: dict[str, Scenario], tiers: Tiers
) -> None:
    # a scenario the scripted pr agent fails on purpose keeps its tag and stays in the tiers that run
    scripted_wrong = {sid for sid, s in suite.items() if "scripted-wrong" in s.tags}
    assert len(scripted_wrong) >= 10 and scripted_wrong <= set(tiers.tiers["full"].scenarios)
    assert not scripted_wrong & set(tiers.tiers["backlog"].scenarios)
    # what may put a scenario in backlog: health's always-fail or flaky flag, named with its evidence
    for sid, why in tiers.tiers["backlog"].reasons.items():
        assert "always-fail" in why or "flaky" in why, f"{sid}: name the health flag and the runs"


def test_smoke_puts_security_then_honesty_first(suite: dict[str, Scenario], tiers: Tiers) -> None:
    smoke = [suite[sid] for sid in tiers.tiers["smoke"].scenarios]
    assert all(s.script is not None for s in smoke)  # every smoke scenario runs offline in pr too
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
