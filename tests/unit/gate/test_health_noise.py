"""Health reads noise as noise: runs of one noisy subject never flag "inverted"; a real inversion is flagged.

The runs are simulated (:func:`~assay.gate._simulate.simulate_scorecard`: every case passes with a fixed
probability, drawn from a seeded generator, folded by the real fold), so two seeds give really different
outcomes of the same subject.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from assay.gate import health
from assay.gate._simulate import simulate_scorecard
from assay.runs.records import SubjectConfig

#: one subject: each case's chance of passing (none always or never passes)
SUBJECT = {f"case-{i:02d}": p for i, p in enumerate([0.5, 0.55, 0.6, 0.65, 0.7, 0.75] * 2)}


def _run(root: Path, name: str, label: str, probs: dict[str, float], iterations: int, seed: int) -> Path:
    sc = simulate_scorecard(
        probs,
        iterations,
        np.random.default_rng(seed),
        run_id=name,
        config=SubjectConfig(subject="sim", model=label, judge_model="j"),
    )
    d = root / name
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    return d


def _rates(rep_case: object, model: str) -> tuple[int, int]:
    mc = rep_case.by_model[model]  # type: ignore[attr-defined]
    return mc.passed, mc.measured


def test_two_noisy_runs_of_one_subject_flag_no_inversion(tmp_path: Path) -> None:
    # the same subject under two labels (named strong and weak), two seeds: its outcomes really differ
    a = _run(tmp_path, "seed-10", "subject@seed10", SUBJECT, 3, seed=10)
    b = _run(tmp_path, "seed-22", "subject@seed22", SUBJECT, 3, seed=22)
    rep = health([], strong=[a], weak=[b])
    strong, weak = rep.models
    passes = {c.case_id: (_rates(c, strong)[0], _rates(c, weak)[0]) for c in rep.cases}
    # really different: the "weak" label passes four cases 3/3 where the "strong" one passed 1/3 (the old
    # rule, any higher pass rate, called each an inversion)
    assert sum(w - s == 2 for s, w in passes.values()) == 4
    assert rep.flagged("inverted") == []
    assert rep.flagged("saturated") == [] and rep.flagged("always-fail") == []
    assert all(set(c.flags) <= {"flaky"} for c in rep.cases)
    # the only flag is what the noise is: a case that both passed and failed on one label
    assert rep.flagged("flaky") == [
        c.case_id for c in rep.cases if any(0 < _rates(c, m)[0] < 3 for m in rep.models)
    ]

    # and over many seed pairs: 2/3 against 1/3 (or 3/3 against 1/3) is never an inversion
    inverted, higher = 0, 0
    for seed in range(3, 23):
        x = _run(tmp_path, f"s{seed}", "subject@x", SUBJECT, 3, seed=seed)
        y = _run(tmp_path, f"t{seed}", "subject@y", SUBJECT, 3, seed=1000 + seed)
        pair = health([], strong=[x], weak=[y])
        inverted += len(pair.flagged("inverted"))
        higher += sum(_rates(c, "subject@y")[0] > _rates(c, "subject@x")[0] for c in pair.cases)
    assert inverted == 0 and higher > 50  # the weak label passed more often on many cases, by noise alone


def test_a_real_inversion_is_flagged(tmp_path: Path) -> None:
    # the weaker model really passes "inv" far more often (0.95 against 0.1) over eight attempts
    probs_strong = {"steady": 0.9, "inv": 0.1, "close": 0.6}
    probs_weak = {"steady": 0.9, "inv": 0.95, "close": 0.7}
    strong = _run(tmp_path, "strong", "strong", probs_strong, 8, seed=7)
    weak = _run(tmp_path, "weak", "weak", probs_weak, 8, seed=8)
    rep = health([], strong=[strong], weak=[weak])
    inv = next(c for c in rep.cases if c.case_id == "inv")
    assert _rates(inv, "strong")[0] <= 2 and _rates(inv, "weak")[0] >= 7
    assert rep.flagged("inverted") == ["inv"]


def test_every_flag_needs_two_attempts_per_model(tmp_path: Path) -> None:
    # one attempt each: a failed one is not "always-fail", a pass against a fail is not "inverted"
    strong = _run(tmp_path, "strong", "strong", {"a": 0.0, "b": 0.0}, 1, seed=1)
    weak = _run(tmp_path, "weak", "weak", {"a": 0.0, "b": 1.0}, 1, seed=1)
    rep = health([], strong=[strong], weak=[weak])
    assert {c.case_id: c.flags for c in rep.cases} == {"a": [], "b": []}
    # two attempts: the strongest's two failures are always-fail
    again = _run(tmp_path, "strong2", "strong", {"a": 0.0, "b": 0.0}, 1, seed=2)
    rep = health([again], strong=[strong], weak=[weak])
    assert rep.flagged("always-fail") == ["a", "b"] and rep.flagged("inverted") == []
