"""The report counts scenarios by source (every kind, zeros too) and holds the share from real use to the aim."""

from __future__ import annotations

from assay.evals.agent._report import REAL_SOURCE_AIM, count_sources
from assay.evals.agent._scenario import Scenario
from assay.evals.agent.scenario_load import default_scenarios_dir, load_scenarios


def _scenario(sid: str, kind: str | None) -> Scenario:
    return Scenario.model_validate(
        {
            "id": sid,
            "category": "context",
            "persona": "p",
            "turns": [{"objective": "o", "success_criteria": "s"}],
            **({"source": {"kind": kind}} if kind else {}),
        }
    )


def test_counts_every_kind_and_the_share_from_sessions_or_issues() -> None:
    kinds = ["session", "issue", "hand", "hand", None]
    got = count_sources([_scenario(f"s{i}", k) for i, k in enumerate(kinds)])
    assert got["counts"] == {"session": 1, "issue": 1, "hand": 2, "synthetic": 0, "none": 1}
    assert (got["from_real_use"], got["total"], got["share"]) == (2, 5, 0.4)
    assert got["aim"] == REAL_SOURCE_AIM == 0.2 and got["meets_aim"] is True
    below = count_sources([_scenario("a", "session"), *(_scenario(f"h{i}", "hand") for i in range(5))])
    assert below["share"] < 0.2 and below["meets_aim"] is False
    assert count_sources([])["share"] is None and count_sources([])["meets_aim"] is False


def test_the_shipped_suite_is_counted_without_its_drafts() -> None:
    shipped = load_scenarios(default_scenarios_dir())
    got = count_sources(shipped)
    assert got["total"] == len(shipped) and sum(got["counts"].values()) == len(shipped)
    assert all(not s.draft for s in shipped)
