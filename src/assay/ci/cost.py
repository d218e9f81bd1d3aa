"""``assay cost``: tokens and cost across runs and lanes, per benchmark and per role, with each cost's source.

An attempt's usage is split by role when its benchmark records one (``details.cost.<role>.usage``: the
agent, simulator and judge of a judged benchmark); otherwise it all counts as the ``subject``'s. Attempts
with no usage at all are counted, never priced at zero.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from assay.runs import Attempt, Usage

__all__ = ["CostRollup", "cost_rollup"]


@dataclass
class CostRollup:
    #: (benchmark, role) -> summed usage
    usage: dict[tuple[str, str], Usage] = field(default_factory=dict)
    attempts: int = 0
    without_usage: int = 0
    runs: int = 0

    def total(self) -> Usage:
        out = Usage()
        for u in self.usage.values():
            out = out + u
        return out

    def text(self) -> str:
        head = f"{'benchmark':<18} {'role':<10} {'calls':>6} {'in':>10} {'out':>8} {'cost':>10}  source"
        lines = [head]
        for (bench, role), u in sorted(self.usage.items()):
            cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
            lines.append(
                f"{bench:<18} {role:<10} {u.calls:>6} {u.input_tokens:>10} {u.output_tokens:>8} {cost:>10}  "
                f"{u.cost_source or '-'}"
                + (f" ({u.unpriced_calls} unpriced calls)" if u.unpriced_calls else "")
            )
        t = self.total()
        cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
        lines.append(f"total: {t.calls} calls, {t.input_tokens} in, {t.output_tokens} out, cost {cost}")
        lines.append(
            f"{self.runs} run(s), {self.attempts} attempts, {self.without_usage} with no usage recorded"
        )
        return "\n".join(lines)


def _roles(att: Attempt) -> dict[str, Usage]:
    cost = att.details.get("cost")
    if isinstance(cost, dict):
        roles = {}
        for role, spent in cost.items():
            raw = spent.get("usage") if isinstance(spent, dict) else None
            if isinstance(raw, dict):
                try:
                    roles[str(role)] = Usage.model_validate(raw)
                except ValidationError:
                    continue
        if roles:
            return roles
    return {"subject": att.usage} if att.usage is not None else {}


def cost_rollup(run_dirs: list[Path]) -> CostRollup:
    from assay.runs import latest_attempts, load_meta, read_journal
    from assay.runs.rundir import JOURNAL

    out = CostRollup(runs=len(run_dirs))
    sums: dict[tuple[str, str], Usage] = defaultdict(Usage)
    for run in run_dirs:
        bench = load_meta(run).benchmark
        for att in latest_attempts(read_journal(run / JOURNAL)).values():
            out.attempts += 1
            roles = _roles(att)
            if not roles:
                out.without_usage += 1
            for role, u in roles.items():
                sums[(bench, role)] = sums[(bench, role)] + u
    out.usage = dict(sums)
    return out
