"""How often does the gate cry wolf, and what is the smallest change it catches? A power table per metric kind.

Every row runs simulated runs through the real fold and :func:`assay.gate.compare` (the one
implementation; the simulation library is :mod:`assay.gate._simulate`):

* **per-case pass/fail** at 1, 3 and 5 iterations: one case, compared with a noise file of 10 runs (the
  first is the baseline), as ``assay eval noise --runs 10`` would give (with 5 runs the 5-iteration
  goal row measures 0.93-0.94: the floor needs that much evidence that the case is stable). False alarms: a case drawn from a realistic
  mix (65% reliable, 20% flaky 0.3-0.8, 15% nearly always failing) left unchanged; detection: a
  stable-pass case whose pass probability falls to q.
* **recall@5** over 20, 50 and 200 queries, one iteration, no noise file: 60% of queries always found,
  25% never, 15% found with probability 0.2-0.9; a drop of d loses round(d n) always-found queries.
* **latency p50** over 20 and 100 fixed-length requests (lognormal, CV about 20%, the run median moving 3%
  from run to run), noise file of 5 runs; detection: the median rises by x.
* **throughput**: 3 iterations (5% apart), the run level moving 3% from run to run, noise file of 5 runs.
* **suite**: 40 cases of the realistic mix x 5 iterations, noise file of 5 runs, 5 cases break.

A false alarm is an unchanged pair the gate fails (exit 2); detection is the injected change caught (its
case ``regressed``, its metric regressed). "smallest" is the smallest injected change caught with
probability >= 0.95: the gate's honest resolution ("-" when none is). Goals: false alarms <= 0.05 in every
row; detection >= 0.95 for a stable-pass case falling to 0.3 at 5 iterations, recall@5 -0.10 at 200
queries and latency +50% over 20 requests. The last line is ``false_alarm_rate=<worst row>
detection_rate=<worst goal>``.

Run: ``python benchmarks/gate_simulation.py [--trials 200] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import sys
import time

from assay.gate._simulate import PowerRow, power_table


def render(rows: list[PowerRow]) -> list[str]:
    lines = [
        f"{'metric':26} {'setting':44} {'false alarms':>13}  detection by injected change       smallest",
    ]
    for r in rows:
        det = ", ".join(f"{label} {rate:.2f}" for label, rate in r.detection)
        goal = f"  [goal {r.goal[0]} >= {r.goal[1]:.2f}]" if r.goal else ""
        lines.append(
            f"{r.kind:26} {r.setting:44} {r.false_alarms:>4}/{r.trials} {r.false_alarm_rate:.3f}  "
            f"{det}  smallest: {r.smallest_detected or '-'}{goal}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = power_table(args.trials, args.seed)
    print(f"power table: {args.trials} trials per row, seed {args.seed}, {time.perf_counter() - t0:.1f}s")
    print("\n".join(render(rows)))
    worst_alarm = max(rows, key=lambda r: r.false_alarm_rate)
    goals = [r for r in rows if r.goal is not None]
    worst_goal = min(goals, key=lambda r: r.goal_rate or 0.0)
    print(
        f"worst false alarms: {worst_alarm.kind}, {worst_alarm.setting}; worst goal: {worst_goal.kind}, "
        f"{worst_goal.setting} ({worst_goal.goal[0] if worst_goal.goal else ''})"
    )
    print(f"false_alarm_rate={worst_alarm.false_alarm_rate:.3f} detection_rate={worst_goal.goal_rate:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
