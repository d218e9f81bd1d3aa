"""`health(..., strong=, weak=)`: the strongest model is the one named, not the best pass rate."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli
from assay.errors import ConfigError, NotComparableError, UsageError
from assay.gate import health, health_markdown
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.runs.records import SubjectConfig

CATS = {"easy": "basics", "hard": "tools", "inv": "tools", "wob": "basics"}


def run(root: Path, name: str, model: str, outcomes: dict[str, str], suite: str = "pr") -> Path:
    sc = card(
        outcomes,
        config=SubjectConfig(subject="sim", model=model, judge_model="j"),
        categories=CATS,
        run_id=name,
        suite=suite,
    )
    d = root / name
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    return d


@pytest.fixture
def big_small(tmp_path: Path) -> tuple[Path, Path]:
    # "big" is the model meant to be stronger, but it passes less than "small" overall
    big = run(tmp_path, "big", "big", {"easy": "PPPPPP", "hard": "FFFFFF", "inv": "FFFFFF", "wob": "PFPPFP"})
    small = run(
        tmp_path, "small", "small", {"easy": "PPPPPP", "hard": "FFFFFF", "inv": "PPPPPP", "wob": "PPPPPP"}
    )
    return big, small


def test_named_strong_is_the_strongest_not_the_best_pass_rate(big_small: tuple[Path, Path]) -> None:
    big, small = big_small
    inferred = health([big, small])
    assert inferred.models == ["small", "big"] and inferred.strong is None
    assert inferred.flagged("inverted") == []  # big is taken as the weaker: it never beats small

    named = health([], strong=[big], weak=[small])
    assert named.models == ["big", "small"] and (named.strong, named.weak) == ("big", "small")
    assert named.flagged("always-fail") == ["hard", "inv"]
    # small passes both more often than big, but only "inv" (6/6 against 0/6) beyond their intervals:
    # 6/6 against 4/6 is within the noise of six attempts
    assert named.flagged("inverted") == ["inv"]
    assert named.flagged("saturated") == ["easy"] and named.flagged("flaky") == ["wob"]
    by_cat = {c.category: c.strongest_pass_rate for c in named.categories}
    assert by_cat == {"basics": pytest.approx(5 / 6), "tools": 0.0}  # big's pass rate, not small's
    assert "Named: strong `big`, weak `small`" in health_markdown(named)
    # positional runs group by model as before: a second big run pools into the strong model
    again = run(big.parent, "big2", "big", {"easy": "PPP", "hard": "PPP", "inv": "FFF", "wob": "PPP"})
    pooled = health([again], strong=[big], weak=[small])
    assert pooled.cases[1].by_model["big"].passed == 3 and pooled.flagged("always-fail") == ["inv"]


def test_weak_alone_holds_only_that_model_against_the_strongest(tmp_path: Path) -> None:
    top = run(tmp_path, "top", "top", {"easy": "PPPPPP", "hard": "PPPPPP", "inv": "FFFFFP", "wob": "FFFFFF"})
    mid = run(tmp_path, "mid", "mid", {"easy": "PPPPPP", "hard": "FFFFFF", "inv": "PPPPPP", "wob": "FFFFFF"})
    low = run(tmp_path, "low", "low", {"easy": "PPPPPP", "hard": "FFFFFF", "inv": "FFFFFF", "wob": "PPPPPP"})
    assert health([top, mid, low]).flagged("inverted") == ["inv", "wob"]
    rep = health([top, mid], weak=[low])
    assert rep.models == ["top", "mid", "low"] and rep.weak == "low" and rep.strong is None
    assert rep.flagged("inverted") == ["wob"]  # mid beats top on "inv", but mid is not the weak model


def test_roles_refused(big_small: tuple[Path, Path], tmp_path: Path) -> None:
    big, small = big_small
    with pytest.raises(ConfigError, match="both --strong and --weak") as exc:
        health([], strong=[big], weak=[small, big])
    assert str(big) in str(exc.value)
    big2 = run(tmp_path, "big-again", "big", {"easy": "PPP"})
    with pytest.raises(ConfigError, match="same model 'big'") as exc:
        health([], strong=[big], weak=[big2])
    assert str(big) in str(exc.value) and str(big2) in str(exc.value)
    with pytest.raises(ConfigError, match="--strong names runs of more than one model"):
        health([], strong=[big, small])
    with pytest.raises(ConfigError, match="--weak names the only model"):
        health([], weak=[small])
    other_suite = run(tmp_path, "nightly", "tiny", {"easy": "PPP"}, suite="full")
    with pytest.raises(NotComparableError, match="one suite"):
        health([], strong=[big], weak=[other_suite])
    with pytest.raises(ConfigError, match="no such run directory"):
        health([], strong=[tmp_path / "missing"], weak=[small])


def test_health_command_strong_weak(big_small: tuple[Path, Path], tmp_path: Path) -> None:
    big, small = big_small
    res = CliRunner().invoke(
        cli, ["health", "--strong", str(big), "--weak", str(small), "--out", str(tmp_path / "h")]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "h" / "health.json").is_file() and "Named: strong" in res.output
    res = CliRunner().invoke(cli, ["health"])
    assert isinstance(res.exception, UsageError) and "--strong DIR" in str(res.exception)
    res = CliRunner().invoke(cli, ["health", "--strong", str(big), "--weak", str(big)])
    assert isinstance(res.exception, ConfigError) and "both --strong and --weak" in str(res.exception)
