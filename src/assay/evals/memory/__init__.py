"""``assay eval memory``: does memory let an agent grow with someone over months?

Scenarios (``eval/memory/*.yaml``) play one person's chats on a simulated clock against one real SQLite
memory store; probes at points in time check what the agent is shown (**shown recall**, **shown clean**),
what the store holds (**store accuracy**) and, in ``full``, whether a model's answer uses it (**answer
accuracy**). Every probe is a case, so ``pr`` is gated check by check. ``--dataset longmemeval:FILE`` runs
LongMemEval-format data through the same pipeline instead.
"""

from assay.evals.memory._benchmark import (
    FULL_EMBEDDER,
    FULL_MODEL,
    METRIC_OF_KIND,
    MemoryBenchmark,
    default_scenario_dir,
    describe_scenarios,
)
from assay.evals.memory._options import MemoryOptions

__all__ = [
    "FULL_EMBEDDER",
    "FULL_MODEL",
    "METRIC_OF_KIND",
    "MemoryBenchmark",
    "MemoryOptions",
    "default_scenario_dir",
    "describe_scenarios",
]
