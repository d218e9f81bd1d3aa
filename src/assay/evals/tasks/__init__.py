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
from assay.evals.tasks._controls_questions import questions_table
from assay.evals.tasks._expect import gate_tasks, propose_tasks
from assay.evals.tasks._judge import TasksJudgement
from assay.evals.tasks._judge_run import judge_run
from assay.evals.tasks._options import SwebenchGradeOptions, TasksOptions, TasksRunOptions
from assay.evals.tasks._report import write_report
from assay.evals.tasks._run import TasksBenchmark
from assay.evals.tasks._setups import BIG_LOG
from assay.evals.tasks._suites import SUITE_KINDS
from assay.evals.tasks._swebench import grade_run_dir
from assay.evals.tasks._swebench_validate import validation_counts, validation_problems
from assay.evals.tasks._tasks_load import PLANTED_DIR, PROBES_DIR, default_tasks_dir, load_tasks

__all__ = [
    "BIG_LOG",
    "PLANTED_DIR",
    "PROBES_DIR",
    "SUITE_KINDS",
    "SwebenchGradeOptions",
    "TasksBenchmark",
    "TasksJudgement",
    "TasksOptions",
    "TasksRunOptions",
    "calibrate_tasks_judge",
    "controls_table",
    "default_tasks_dir",
    "gate_tasks",
    "grade_run_dir",
    "judge_run",
    "load_tasks",
    "propose_tasks",
    "questions_table",
    "validation_counts",
    "validation_problems",
    "write_report",
]
