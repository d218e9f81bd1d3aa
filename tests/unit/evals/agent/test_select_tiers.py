"""--category/--scenario/--tier selection and ci_tiers.json validation: every bad input names its flag or file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.agent.scenario_load import load_scenarios
from assay.evals.agent.select import parse_list, select
from assay.evals.agent.tiers import coverage_problems, load_tiers, tiers_path

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "agent_scenarios" / "scenarios"


@pytest.fixture(scope="module")
def scenarios():  # type: ignore[no-untyped-def]
    return load_scenarios(FIXTURE)


def test_parse_list_splits_commas_and_drops_repeats() -> None:
    assert parse_list(" a, b ,,a") == ["a", "b"]
    assert parse_list(["a", "b,c"]) == ["a", "b", "c"]
    assert parse_list(None) == []


def test_no_flag_selects_everything_untargeted(scenarios) -> None:  # type: ignore[no-untyped-def]
    chosen, sel = select(scenarios, scenarios_dir=FIXTURE)
    assert [s.id for s in chosen] == [s.id for s in scenarios]
    assert not sel.targeted and sel.as_extra()["selected"] == []


def test_flags_narrow_and_are_recorded(scenarios) -> None:  # type: ignore[no-untyped-def]
    chosen, sel = select(scenarios, category="injection_document", scenarios_dir=FIXTURE)
    assert [s.id for s in chosen] == ["leaky-summary", "unscripted-summary"]
    assert sel.as_extra() == {
        "by": {"category": ["injection_document"]},
        "selected": ["leaky-summary", "unscripted-summary"],
        "of": 5,
    }
    chosen, sel = select(scenarios, tier="smoke", category="document_qa", scenarios_dir=FIXTURE)
    assert [s.id for s in chosen] == ["vacation-days"]
    assert sel.by == {"category": ["document_qa"], "tier": "smoke"}
    chosen, _ = select(scenarios, scenario="parking-fee,vacation-days", scenarios_dir=FIXTURE)
    assert [s.id for s in chosen] == ["parking-fee", "vacation-days"]  # suite order


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"scenario": "vacation-days,no-such"}, "--scenario: unknown scenario id 'no-such'"),
        ({"scenario": "vacation-day"}, "did you mean 'vacation-days'"),
        ({"category": "memory"}, "--category: unknown category 'memory'"),
        ({"tier": "nightly"}, "--tier 'nightly': unknown tier; known: smoke, full, backlog"),
        ({"tier": "smoke", "category": "document_qa", "scenario": "parking-fee"}, "selects no scenario"),
    ],
)
def test_unknown_names_are_refused_naming_the_flag(scenarios, kw, needle) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as err:
        select(scenarios, scenarios_dir=FIXTURE, **kw)
    assert needle in str(err.value)


def test_fixture_tiers_cover_the_fixture_suite(scenarios) -> None:  # type: ignore[no-untyped-def]
    tiers = load_tiers(tiers_path(FIXTURE))
    assert coverage_problems(tiers, [s.id for s in scenarios]) == []
    assert tiers.tier_of("parking-fee") == "backlog" and tiers.tiers["backlog"].reasons["parking-fee"]
    problems = coverage_problems(tiers, ["vacation-days", "new-one"])
    assert "scenario 'new-one' is in no tier and not excluded" in problems
    assert any("names 'parking-fee', which is no scenario" in p for p in problems)


def _tiers(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "ci_tiers.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ('{"tiers": {\n"smoke": [}', "invalid JSON"),
        ({"tiers": {}}, 'expected {"tiers"'),
        ({"tiers": {"smoke": {"scenarios": "a"}}}, "tiers.smoke.scenarios must be a list"),
        ({"tiers": {"smoke": {"scenarios": ["a", "a"]}}}, "lists 'a' twice"),
        ({"tiers": {"backlog": {"scenarios": ["a"]}}}, "backlog.scenarios must map each scenario id"),
        ({"tiers": {"backlog": {"scenarios": {"a": " "}}}}, "non-empty string"),
        ({"tiers": {"smoke": {"scenarios": ["a"]}}, "excluded": {"a": "flaky"}}, "also in tier 'smoke'"),
        ({"tiers": {"smoke": {"scenarios": ["a"], "owner": "x"}}}, "unknown key(s) owner"),
        ({"tiers": {"smoke": {"scenarios": ["a"]}}, "skip": {}}, "unknown key(s) skip"),
    ],
)
def test_bad_tiers_file_is_a_config_error_naming_it(tmp_path: Path, data: object, needle: str) -> None:
    path = _tiers(tmp_path, data)
    with pytest.raises(ConfigError) as err:
        load_tiers(path)
    assert needle in str(err.value) and str(path) in str(err.value)
    if isinstance(data, str):
        assert err.value.line == 2  # type: ignore[attr-defined]


def test_a_missing_tiers_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_tiers(tmp_path / "ci_tiers.json")
    assert "ci_tiers.json" in str(err.value)
