"""How often does the gate cry wolf, and how often does it catch a real break?

Each trial draws a subject: 40 cases, of which about 65% are reliable (pass probability 0.95-1.0),
20% flaky (0.3-0.8) and 15% nearly always fail (0-0.05). It is measured the way a user would:
``assay eval noise`` runs the configuration 5 times (5 iterations each) and the first of those runs is saved
as the baseline. Then two current runs of 5 iterations are compared with the baseline through the real
fold and :func:`assay.gate.compare`, with the noise file:

* **unchanged**: the same subject; a regression verdict (exit 2) is a false alarm;
* **broken**: 5 cases the subject used to pass at least sometimes (probability >= 0.3) now always fail;
  detected when the verdict is exit 2 *and* at least one broken case is in the ``regressed`` bucket.

The same comparisons without a noise file (stable-pass -> stable-fail only) are reported above the last
line. Run: ``python benchmarks/gate_simulation.py [--trials 200] [--seed 0]``. The last line is
``false_alarm_rate=<x> detection_rate=<y>`` for the noise-file comparisons.

Measured (seed 0, 200 trials each way): 5 iterations: noise file 0/200 false alarms, 200/200 detected
(782/1000 broken cases flagged); without it 2/200 and 200/200 (752/1000). 3 iterations: noise file 0/200
and 200/200 (657/1000); without it 12/200 false alarms: repeats plus a noise file are what make the
verdict trustworthy.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from assay.gate import compare
from assay.stats import noise_from_scorecards
from assay.stats._simulate import simulate_scorecard


def draw_subject(rng: np.random.Generator, n_cases: int) -> dict[str, float]:
    probs = {}
    for i in range(n_cases):
        kind = rng.random()
        if kind < 0.65:
            p = 1.0 if rng.random() < 0.5 else rng.uniform(0.95, 1.0)
        elif kind < 0.85:
            p = rng.uniform(0.3, 0.8)
        else:
            p = rng.uniform(0.0, 0.05)
        probs[f"case-{i:02d}"] = float(p)
    return probs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--noise-runs", type=int, default=5)
    ap.add_argument("--broken", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    alarms = {"noise": 0, "plain": 0}
    detected = {"noise": 0, "plain": 0}
    broken_flagged = {"noise": 0, "plain": 0}
    broken_total = 0
    for trial in range(args.trials):
        probs = draw_subject(rng, args.cases)
        runs = [
            simulate_scorecard(probs, args.iterations, rng, run_id=f"t{trial}-noise{i}")
            for i in range(args.noise_runs)
        ]
        noise = noise_from_scorecards(runs)
        baseline = runs[0]
        same = simulate_scorecard(probs, args.iterations, rng, run_id=f"t{trial}-same")
        candidates = [c for c, p in probs.items() if p >= 0.3]
        broken = set(rng.choice(candidates, size=min(args.broken, len(candidates)), replace=False).tolist())
        broken_probs = {c: (0.0 if c in broken else p) for c, p in probs.items()}
        worse = simulate_scorecard(broken_probs, args.iterations, rng, run_id=f"t{trial}-broken")
        broken_total += len(broken)
        for mode, nz in (("noise", noise), ("plain", None)):
            if compare(baseline, same, noise=nz).exit_code == 2:
                alarms[mode] += 1
            comp = compare(baseline, worse, noise=nz)
            flagged = {c.case_id for c in comp.bucket("regressed")} & broken
            broken_flagged[mode] += len(flagged)
            if comp.exit_code == 2 and flagged:
                detected[mode] += 1
    n = args.trials
    print(
        f"{n} trials x {args.cases} cases x {args.iterations} iterations, noise from {args.noise_runs} runs, "
        f"{args.broken} broken cases, {time.perf_counter() - t0:.1f}s"
    )
    for mode in ("plain", "noise"):
        print(
            f"[{mode:5}] false alarms {alarms[mode]}/{n}, detected {detected[mode]}/{n}, "
            f"broken cases flagged {broken_flagged[mode]}/{broken_total}"
        )
    print(f"false_alarm_rate={alarms['noise'] / n:.3f} detection_rate={detected['noise'] / n:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
