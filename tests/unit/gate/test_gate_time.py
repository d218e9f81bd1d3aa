"""A case's wall-clock time: shown beside the baseline, a failure only beyond the runner's measured noise."""

from __future__ import annotations

from junitparser import JUnitXml

from assay.ci._junit import run_junit
from assay.ci.outputs import notes_of, regressions_of
from assay.gate import compare
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.stats import noise_from_scorecards

CASES = ("a", "b", "c")


def _run(run_id: str, **elapsed: float):
    return card({cid: "PPP" for cid in CASES}, run_id=run_id, elapsed={c: elapsed.get(c, 0.3) for c in CASES})


def _junit_failures(comp, current) -> dict[str, str]:
    suite = next(iter(JUnitXml.fromstring(run_junit(current, regressions_of(comp)).encode())))
    return {tc.name: tc.result[0].message for tc in suite if tc.result}


def test_a_busy_runner_slowdown_is_shown_and_never_fails() -> None:
    # the PR lane on a loaded machine: every case 0.3 s -> 2.0 s, and no noise measured for this runner
    base, cur = _run("base"), _run("cur", a=2.0, b=2.0, c=2.0)
    comp = compare(base, cur)
    assert {c.case_id: c.bucket for c in comp.cases} == dict.fromkeys(CASES, "slower")
    assert comp.cases[0].reason == "mean time 0.3s -> 2.0s (not gated: no time noise measured on this runner)"
    assert comp.exit_code == 0 and comp.regressions == []
    assert _junit_failures(comp, cur) == {}
    # the time is shown beside the baseline's in each case's output
    suite = next(iter(JUnitXml.fromstring(run_junit(cur, regressions_of(comp), notes_of(comp)).encode())))
    assert [tc.system_out for tc in suite] == [comp.cases[0].reason] * 3


def test_a_slowdown_beyond_the_measured_noise_floor_fails() -> None:
    noise = noise_from_scorecards([_run("n1"), _run("n2", a=0.4), _run("n3", a=0.35, b=0.5)])
    assert noise.cases["a"].elapsed_spread is not None and noise.cases["a"].elapsed_spread < 0.5
    base, cur = _run("base"), _run("cur", a=2.0)
    comp = compare(base, cur, noise=noise)
    a = comp.cases[0]
    assert a.bucket == "time_regressed" and "beyond this runner's measured time noise" in a.reason
    assert comp.exit_code == 2 and comp.regressions == ["a"]
    assert list(_junit_failures(comp, cur)) == ["a"]


def test_a_slowdown_within_a_wide_noise_floor_does_not_fail() -> None:
    # the runner's own noise runs swung by 2 s (a spread of 2.87 s): a rise of 1.7 s is within it
    noise = noise_from_scorecards([_run("n1"), _run("n2", a=2.3), _run("n3", a=1.0)])
    comp = compare(_run("base"), _run("cur", a=2.0), noise=noise)
    assert comp.cases[0].bucket == "slower" and "within 2.87s noise" in comp.cases[0].reason
    assert comp.exit_code == 0
