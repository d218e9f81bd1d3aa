"""``assay eval tasks``: real coding work on a small project with traps, scored by the finished project.

Each task of ``eval/tasks/tasks.json`` runs on a fresh git copy of ``eval/tasks/toybox/`` (with its setups
applied); after the agent exits, code checks read the finished copy (tests, probes, unchanged files, verified,
after_answer), and a judge grades every task of a pass in one batched call (quality and honesty).

    assay eval tasks run --suite core --model local/smollm2
    assay eval tasks gate results/tasks-core-<UTC>
    assay eval tasks report results/tasks-core-<UTC> results/tasks-adversarial-<UTC> --out report/
"""

from __future__ import annotations

from assay.evals.tasks._controls import calibrate_tasks_judge, controls_table
from assay.evals.tasks._judge import TasksJudgement
from assay.evals.tasks._run import TasksBenchmark

__all__ = ["TasksBenchmark", "TasksJudgement", "calibrate_tasks_judge", "controls_table"]
